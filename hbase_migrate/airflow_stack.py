"""A local Airflow for this project, as child processes on 127.0.0.1 only.

:func:`start_airflow` runs the parts Airflow needs in the order that works: the metadata
database (``airflow db migrate``, skipped when one exists), the dag-processor and the
api-server (its health checked before the rest starts, since the LocalExecutor's workers
talk to its Execution API), then the scheduler and the triggerer with ``-s`` (no log
servers, which would listen on 0.0.0.0). It uses the project's ``airflow.cfg``,
``dags/`` and ``plugins/``; Airflow's state (database, logs, process list) stays in
``<folder>/airflow``; ``$HBASE_MIGRATE_STATE_DIR`` is ``<folder>``, so default ledgers land
there too. Connections are created through the REST API: one ``hbase`` connection
``hbase_<name>`` per ``<folder>/*/cluster.json`` of the embedded stack, and
``spark_default`` (``local[2]``).

The processes are started with Airflow's own command (``python -m airflow``), never
imported: the core does not import Airflow. Each runs in its own process group, so that
stopping it stops the workers it forked (:meth:`AirflowStack.stop`, :func:`stop_airflow`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.errors import HBaseMigrateError

log = logging.getLogger(__name__)

PROJECT = Path(__file__).resolve().parents[1]  # the folder holding dags/, plugins/, airflow.cfg
HOST = "127.0.0.1"
STACK_FILE = "stack.json"
# In this order: the dag-processor (it needs only the database) beside the api-server, whose
# health is awaited before the scheduler and the triggerer start.
SERVICES: dict[str, list[str]] = {
    "dag-processor": ["dag-processor"],
    "api-server": ["api-server", "--host", HOST],
    "scheduler": ["scheduler", "--skip-serve-logs"],
    "triggerer": ["triggerer", "--skip-serve-logs"],
}
HBASE_EXTRA_KEYS = ("thrift2", "webhdfs", "zookeeper", "znode_parent", "hbase_root",
                    "transport", "protocol")


class AirflowStackError(HBaseMigrateError):
    """A part of the local Airflow could not be started, reached or stopped."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def airflow_env(folder: Path, port: int, *, parallelism: int = 4,
                project: Path = PROJECT, extra: Mapping[str, str] | None = None
                ) -> dict[str, str]:
    """The environment of every Airflow process of a stack in ``folder``."""
    home = folder / "airflow"
    bindir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW_CONFIG": str(project / "airflow.cfg"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(project / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(project / "plugins"),
        "AIRFLOW__CORE__PARALLELISM": str(parallelism),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://{HOST}:{port}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        "AIRFLOW__LOGGING__BASE_LOG_FOLDER": str(home / "logs"),
        "AIRFLOW__API__HOST": HOST,
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__BASE_URL": f"http://{HOST}:{port}",
        "AIRFLOW__API_AUTH__JWT_SECRET": secrets.token_urlsafe(64),
        "AIRFLOW__API__SECRET_KEY": secrets.token_urlsafe(64),
        "HBASE_MIGRATE_STATE_DIR": str(folder),
        "SPARK_LOCAL_IP": HOST,
        "PYSPARK_PYTHON": sys.executable,
        **(extra or {}),
    }


def cluster_connections(folder: Path) -> list[dict[str, Any]]:
    """An ``hbase`` connection ``hbase_<name>`` per ``<folder>/*/cluster.json``."""
    found = []
    for path in sorted(folder.glob("*/cluster.json")):
        found.append(hbase_connection(f"hbase_{load_cluster_json(path).name}",
                                      load_cluster_json(path)))
    return found


def hbase_connection(conn_id: str, endpoints: ClusterEndpoints) -> dict[str, Any]:
    """The REST body of an ``hbase`` connection naming ``endpoints``."""
    host, _, port = endpoints.thrift.rpartition(":")
    data = endpoints.to_json()
    extra = {k: str(data[k]) for k in HBASE_EXTRA_KEYS if data.get(k)}
    if endpoints.security is not None:  # file names and principals, never a secret
        extra.update({k: str(v) for k, v in endpoints.security.to_json().items() if v})
    return {"connection_id": conn_id, "conn_type": "hbase", "host": host, "port": int(port),
            "extra": json.dumps(extra)}


def spark_connection(master: str, conn_id: str = "spark_default") -> dict[str, Any]:
    return {"connection_id": conn_id, "conn_type": "spark", "host": master}


@dataclass
class AirflowStack:
    """A running local Airflow: its folder, REST address, environment and processes."""

    folder: Path
    port: int
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.folder / "airflow"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def api(self, method: str, path: str, body: Any = None, *, timeout: float = 60.0
            ) -> tuple[int, Any]:
        """``(status, JSON answer)`` of a REST call (``path`` under ``/api/v2``)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}/api/v2{path}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            text = exc.read()
            try:
                return exc.code, json.loads(text or b"null")
            except ValueError:
                return exc.code, text.decode("utf-8", "replace")

    def airflow(self, *args: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        """Run one ``airflow`` command against this stack."""
        return subprocess.run([sys.executable, "-m", "airflow", *args], env=self.env,
                              capture_output=True, text=True, timeout=timeout, check=False)

    def put_connection(self, body: Mapping[str, Any]) -> None:
        """Create the connection, or replace it when it exists."""
        status, answer = self.api("POST", "/connections", dict(body))
        if status == 409:
            status, answer = self.api("PATCH", f"/connections/{body['connection_id']}",
                                      dict(body))
        if status >= 300:
            raise AirflowStackError(f"airflow: connection {body['connection_id']!r} refused "
                                    f"({status}): {answer}")

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            self.check_alive()
            try:
                status, answer = self.api("GET", "/monitor/health", timeout=5)
                if status == 200 and answer["metadatabase"]["status"] == "healthy":
                    return
            except (OSError, ValueError, KeyError, TypeError):
                pass
            if time.monotonic() > deadline:
                raise AirflowStackError(f"airflow api-server not healthy at {self.url} within "
                                        f"{timeout:g} s; log {self.home / 'api-server.log'}")
            time.sleep(0.5)

    def wait_for_dags(self, dag_ids: Iterable[str], timeout: float = 120.0) -> None:
        """Until the dag-processor has stored every DAG of ``dag_ids``."""
        missing = list(dag_ids)
        deadline = time.monotonic() + timeout
        while missing:
            self.check_alive()
            missing = [d for d in missing if self.api("GET", f"/dags/{d}")[0] != 200]
            if missing and time.monotonic() > deadline:
                raise AirflowStackError(f"airflow: DAG(s) {', '.join(missing)} not parsed "
                                        f"within {timeout:g} s; log "
                                        f"{self.home / 'dag-processor.log'}")
            time.sleep(0.5)

    def check_alive(self) -> None:
        for name, proc in self.processes.items():
            if proc.poll() is not None:
                raise AirflowStackError(
                    f"airflow {name} exited with code {proc.returncode}; log "
                    f"{self.home / f'{name}.log'}:\n{_tail(self.home / f'{name}.log')}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every process and the workers it forked: all at once, the api-server
        after the others."""
        workers = [p for n, p in self.processes.items() if n != "api-server"]
        try:
            _stop_groups(workers, timeout)
        finally:  # a second Ctrl-C while stopping still stops the api-server
            try:
                _stop_groups([p for n, p in self.processes.items() if n == "api-server"],
                             timeout)
            finally:
                self.processes.clear()
                (self.home / STACK_FILE).unlink(missing_ok=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def start_airflow(folder: Path, *, port: int | None = None, parallelism: int = 4,
                  connections: Iterable[Mapping[str, Any]] | None = None,
                  spark_master: str = "local[2]", project: Path = PROJECT,
                  extra_env: Mapping[str, str] | None = None, timeout: float = 180.0
                  ) -> AirflowStack:
    """Start a local Airflow for ``folder``; returns when the api-server is healthy and the
    connections exist (the embedded stack's ``cluster.json`` files when ``connections`` is
    None). On any failure, what was started is stopped again."""
    for needed in ("airflow.cfg", "dags", "plugins"):
        if not (project / needed).exists():
            raise AirflowStackError(f"airflow: {project / needed} not found: run from a "
                                    "checkout of the project")
    folder = folder.absolute()
    home = folder / "airflow"
    home.mkdir(parents=True, exist_ok=True)
    running = home / STACK_FILE
    if running.exists() and _alive(json.loads(running.read_text())):
        raise AirflowStackError(f"airflow: a stack already runs for {folder} ({running}); "
                                f"stop it first: hbase-migrate airflow down --dir {folder}")
    port = port or free_port()
    stack = AirflowStack(folder, port, airflow_env(folder, port, parallelism=parallelism,
                                                   project=project, extra=extra_env))
    try:
        if not (home / "airflow.db").exists():
            migrated = stack.airflow("db", "migrate")
            if migrated.returncode:
                raise AirflowStackError(f"airflow db migrate failed:\n{migrated.stderr[-2000:]}")
        for name, args in SERVICES.items():
            extra = ["--port", str(port)] if name == "api-server" else []
            stack.processes[name] = _spawn([sys.executable, "-m", "airflow", *args, *extra],
                                           home / f"{name}.log", stack.env)
            if name == "api-server":
                stack.wait_healthy(timeout)
        running.write_text(json.dumps({"url": stack.url, "pids": {
            n: p.pid for n, p in stack.processes.items()}}, indent=2))
        wanted = (cluster_connections(folder) if connections is None else list(connections))
        for body in [*wanted, spark_connection(spark_master)]:
            stack.put_connection(body)
    except BaseException:
        stack.stop()
        raise
    return stack


def stop_airflow(folder: Path, timeout: float = 30.0) -> list[str]:
    """Stop the stack ``start_airflow`` left running for ``folder`` (another process's);
    returns the names of the processes stopped."""
    running = folder.absolute() / "airflow" / STACK_FILE
    if not running.exists():
        return []
    pids: dict[str, int] = json.loads(running.read_text()).get("pids", {})
    stopped = [name for name, pid in pids.items() if _group_alive(pid)]
    _stop_groups([pids[n] for n in stopped if n != "api-server"], timeout)
    _stop_groups([pids[n] for n in stopped if n == "api-server"], timeout)
    running.unlink(missing_ok=True)
    return stopped


def _spawn(args: list[str], log_path: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log_path, "ab") as output:
        return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=output,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group ``pgid`` still runs (zombies waiting for their
    parent to reap them do not count)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _alive(described: dict[str, Any]) -> bool:
    return any(_group_alive(pid) for pid in described.get("pids", {}).values())


def _stop_groups(leaders: list[subprocess.Popen[bytes]] | list[int], timeout: float
                 ) -> None:
    """SIGTERM the process groups of ``leaders`` (processes we started, or their pids),
    wait for all of them, then SIGKILL what is left."""
    procs = [p for p in leaders if isinstance(p, subprocess.Popen)]
    groups = [p.pid if isinstance(p, subprocess.Popen) else p for p in leaders]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc in procs:
                proc.poll()  # reap the leaders we started
            groups = [g for g in groups if _group_alive(g)]
            if not groups:
                return
            time.sleep(0.1)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
