"""A local Airflow for this project, as child processes on 127.0.0.1 only.

:func:`start_airflow` runs the parts Airflow needs in the order that works: the metadata
database (``airflow db migrate``, skipped when one exists), the dag-processor and the
api-server (its health checked before the rest starts, since the workers talk to its
Execution API), then the scheduler and the triggerer with ``-s`` (no log servers, which
would listen on 0.0.0.0). It uses the project's ``airflow.cfg``, ``dags/`` and ``plugins/``
(from an installed package, which has no such folders: the ``airflow.cfg`` the wheel ships
and the DAG files written into ``<folder>/airflow/dags``, :func:`airflow_files`);
Airflow's state (database, logs, process list) stays in ``<folder>/airflow``;
``$HBASE_MIGRATE_STATE_DIR`` is ``<folder>``, so default ledgers land there too.
Connections are created through the REST API: one ``hbase`` connection ``hbase_<name>`` per
``<folder>/*/cluster.json`` of the embedded stack, and ``spark_default``: the master the
caller names, else ``auto`` (Spark only for work too large for one process; an existing
``spark_default`` is then kept as it is).

Airflow's metadata database is PostgreSQL by default (``database="postgres"``): a server of
its own, living as long as the stack, as Airflow wants it for any executor but a sequential
one (with SQLite every writer takes the whole file: on a busy machine a REST call waited
past a minute behind the scheduler). ``database="sqlite"`` keeps it in
``<folder>/airflow/airflow.db`` instead, kept across restarts. The server's password is in
the environment of the processes only, never in their arguments or a log.

Executors: ``local`` (the default), the LocalExecutor; or ``celery`` (on PostgreSQL): the
shared ledger (database ``ledger``, unless ``shared_ledger=False``: every process the stack
starts has ``$HBASE_MIGRATE_LEDGER`` set to it, so every migration that names no ledger keeps
its steps there, whichever worker runs them; :attr:`AirflowStack.ledger_url`) and the
databases a caller asks for (:meth:`AirflowStack.database_url`); the shared ledger's URL is
also in ``<folder>/airflow/ledger.url`` (readable by its owner alone, removed when the stack
stops), for the command line's ``$HBASE_MIGRATE_LEDGER``. Then ``redis-server`` as
the broker, and N ``airflow celery worker`` processes, each in its own folder
(``<folder>/airflow/workers/workerN``: its working folder, temporary folder and
``$HBASE_MIGRATE_STATE_DIR``) and with its own host name ``workerN@<host>`` (Airflow's task
instances and the ledger's steps name it), so that no task can use a file another task
left behind, as on separate hosts. Task logs are the one thing shared: every worker writes
them into the stack's log folder, as Airflow's "shared drive for logs" deployment does, so
the UI shows them without a log server (which would listen on 0.0.0.0). That server and
broker live as long as the stack.

The processes are started with Airflow's own command (``python -m airflow``), never
imported: the core does not import Airflow. Each runs in its own process group, so that
stopping it stops the workers it forked (:meth:`AirflowStack.stop`, :func:`stop_airflow`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import secrets
import shutil
import signal
import socket
import sqlite3
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

from hbase_migrate.airflow_dags import write_dag_files
from hbase_migrate.airflow_shell import SHELL_FILE, write_shell_env
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.config import AUTO, LEDGER_ENV
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.pgserver import PostgresServer, find_pg_bin
from hbase_migrate.redisserver import start_redis
from hbase_migrate.services import (
    HOST,
    free_port,
    group_alive,
    listening_group,
    log_tail,
    python_env,
    spawn,
    stop_groups,
)

log = logging.getLogger(__name__)

PROJECT = Path(__file__).resolve().parents[1]  # the folder holding dags/, plugins/, airflow.cfg
PACKAGED_CONFIG = Path(__file__).resolve().parent / "_airflow" / "airflow.cfg"  # in the wheel
CHECKOUT_FILES = ("airflow.cfg", "dags", "plugins")
STACK_FILE = "stack.json"
LEDGER_FILE = "ledger.url"  # the shared ledger's URL, for the command line (mode 0600)
EXECUTORS = ("local", "celery")
DATABASES = ("postgres", "sqlite")  # Airflow's metadata database
# In this order: the dag-processor (it needs only the database) beside the api-server, whose
# health is awaited before the scheduler and the triggerer start.
SERVICES: dict[str, list[str]] = {
    "dag-processor": ["dag-processor"],
    "api-server": ["api-server", "--host", HOST],
    "scheduler": ["scheduler", "--skip-serve-logs"],
    "triggerer": ["triggerer", "--skip-serve-logs"],
}
IN_USE = "address already in use"  # the api-server's log line when its port is taken
PORT_ATTEMPTS = 3  # starts of a stack whose chosen port another process took meanwhile
BACKING = ("postgres", "redis")  # the Celery stack's servers: started first, stopped last
WORKER_ENV = "HBASE_MIGRATE_WORKER"  # a Celery worker's host name
METADATA_DB = "airflow"
LEDGER_DB = "ledger"  # the Celery stack's shared ledger, $HBASE_MIGRATE_LEDGER of its tasks
HBASE_EXTRA_KEYS = ("client", "thrift2", "webhdfs", "zookeeper", "znode_parent",
                    "hbase_root", "transport", "protocol", "uri")


class AirflowStackError(HBaseMigrateError):
    """A part of the local Airflow could not be started, reached or stopped."""


class PortTakenError(AirflowStackError):
    """Another process listens on the port chosen for the api-server (it took the port
    between its choice and the api-server's start)."""


def worker_hostname() -> str:
    """Airflow's ``[core] hostname_callable`` on a stack's Celery worker: its own host name
    (``workerN@<host>``), else this machine's."""
    return os.environ.get(WORKER_ENV) or socket.getfqdn()


def airflow_files(project: Path, home: Path) -> tuple[Path, Path, Path]:
    """The ``airflow.cfg``, DAG folder and plugins folder of a stack whose Airflow home is
    ``home``: a checkout's own (``project`` holds all three), else, for an installed
    package, the configuration its wheel ships, the DAG files written into ``home/dags``
    and an empty ``home/plugins``."""
    if all((project / name).exists() for name in CHECKOUT_FILES):
        return project / "airflow.cfg", project / "dags", project / "plugins"
    if not PACKAGED_CONFIG.exists():
        missing = [str(project / n) for n in CHECKOUT_FILES if not (project / n).exists()]
        raise AirflowStackError(f"airflow: {', '.join(missing)} not found, nor the "
                                f"package's {PACKAGED_CONFIG}: reinstall hbase-migrate")
    dags, plugins = home / "dags", home / "plugins"
    write_dag_files(dags)
    plugins.mkdir(parents=True, exist_ok=True)
    return PACKAGED_CONFIG, dags, plugins


def airflow_env(folder: Path, port: int, *, parallelism: int = 4,
                project: Path = PROJECT, extra: Mapping[str, str] | None = None
                ) -> dict[str, str]:
    """The environment of every Airflow process of a stack in ``folder``."""
    home = folder / "airflow"
    bindir = str(Path(sys.executable).parent)
    config, dags, plugins = airflow_files(project, home)
    return {
        **python_env(),  # its tasks import this hbase_migrate, not one in their folder
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "AIRFLOW_HOME": str(home),
        "AIRFLOW_CONFIG": str(config),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(plugins),
        "AIRFLOW__CORE__PARALLELISM": str(parallelism),
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://{HOST}:{port}/execution/",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        # a writer waits up to 60 s for another's lock (pysqlite's default, 5 s, is too short
        # on a busy machine: "database is locked")
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}?timeout=60",
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


def postgres_env(metadata_url: str) -> dict[str, str]:
    """The metadata database on PostgreSQL (psycopg 3 for both of Airflow's engines)."""
    return {"AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": metadata_url,
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN_ASYNC": metadata_url}


def celery_env(metadata_url: str, broker_port: int, concurrency: int) -> dict[str, str]:
    """What the Celery executor adds to :func:`airflow_env` and :func:`postgres_env`: the
    broker, the task results in the metadata database."""
    return {
        "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
        "AIRFLOW__CELERY__BROKER_URL": f"redis://{HOST}:{broker_port}/0",
        "AIRFLOW__CELERY__RESULT_BACKEND": f"db+{metadata_url}",
        "AIRFLOW__CELERY__WORKER_CONCURRENCY": str(concurrency),
    }


def worker_service(home: Path, number: int, concurrency: int) -> Service:
    """Celery worker ``number``: its own folder (working folder, temporary folder, state
    folder) and host name; its task logs go to the stack's log folder, where the UI reads
    them."""
    folder = home / "workers" / f"worker{number}"
    for sub in ("tmp", "state"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    name = f"worker{number}@{socket.gethostname()}"
    return Service(
        ["celery", "worker", "--celery-hostname", name, "--concurrency", str(concurrency),
         "--pid", str(folder / "worker.pid"), "--skip-serve-logs", "--without-mingle",
         "--without-gossip"],
        folder / "worker.log", folder,
        {"TMPDIR": str(folder / "tmp"), WORKER_ENV: name,
         "AIRFLOW__CORE__HOSTNAME_CALLABLE": f"{__name__}.worker_hostname",
         "HBASE_MIGRATE_STATE_DIR": str(folder / "state")})


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
    gateway = {"host": host, "port": int(port)} if endpoints.thrift else {}  # none: native
    return {"connection_id": conn_id, "conn_type": "hbase", **gateway,
            "extra": json.dumps(extra)}


def spark_connection(master: str, conn_id: str = "spark_default") -> dict[str, Any]:
    return {"connection_id": conn_id, "conn_type": "spark", "host": master}


@dataclass(frozen=True)
class Service:
    """How one Airflow process runs: ``python -m airflow ARGS``, its log, working folder and
    the environment it adds to the stack's."""

    args: list[str]
    log: Path
    cwd: Path | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class AirflowStack:
    """A running local Airflow: its folder, REST address, environment and processes."""

    folder: Path
    port: int
    env: dict[str, str]
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    services: dict[str, Service] = field(default_factory=dict)
    executor: str = "local"
    postgres: PostgresServer | None = None  # the metadata database's server (not with SQLite)
    backing: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, args in SERVICES.items():
            self.services.setdefault(name, Service(args, self.home / f"{name}.log"))

    @property
    def home(self) -> Path:
        return self.folder / "airflow"

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def workers(self) -> list[str]:
        """The names of the Celery workers (none with the LocalExecutor)."""
        return [n for n in self.services if n.startswith("worker")]

    @property
    def task_logs(self) -> str:
        """Where the task logs are (every worker's too): the stack's log folder."""
        return str(self.home / "logs")

    @property
    def ledger_url(self) -> str | None:
        """The ledger of the migrations the stack's tasks run that name none (with their
        password): ``$HBASE_MIGRATE_LEDGER`` of its processes; None where that is unset
        (each migration's SQLite file under its state folder)."""
        return self.env.get(LEDGER_ENV) or None

    def database_url(self, name: str) -> str:
        """The URL of a database :func:`start_airflow` created on the stack's PostgreSQL."""
        if self.postgres is None:
            raise AirflowStackError("airflow: a stack on SQLite has no PostgreSQL server")
        return self.postgres.url(name)

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
            try:
                self.check_alive()
            except AirflowStackError as exc:
                if IN_USE in log_tail(self.log_path("api-server")):
                    raise PortTakenError(f"airflow: port {self.port} was taken before the "
                                         f"api-server could listen on it: {exc}") from None
                raise
            try:
                status, answer = self.api("GET", "/monitor/health", timeout=5)
                if status == 200 and answer["metadatabase"]["status"] == "healthy":
                    self._check_listener()
                    return
            except (OSError, ValueError, KeyError, TypeError):
                pass
            if time.monotonic() > deadline:
                raise AirflowStackError(f"airflow api-server not healthy at {self.url} within "
                                        f"{timeout:g} s; log {self.home / 'api-server.log'}")
            time.sleep(0.5)

    def _check_listener(self) -> None:
        """The healthy answer came from this stack's api-server (its own process group),
        not from another process that listens on its port."""
        server = self.processes.get("api-server")
        group = listening_group(HOST, self.port)
        if server is not None and group is not None and group != server.pid:
            raise PortTakenError(f"airflow: port {self.port} is another process's (group "
                                 f"{group}), not this stack's api-server; log "
                                 f"{self.home / 'api-server.log'}")

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

    def log_path(self, name: str) -> Path:
        if name == "postgres" and self.postgres is not None:
            return self.postgres.base / "postgres.log"
        if name == "redis":
            return self.home / "redis" / "redis.log"
        return self.services[name].log

    def check_alive(self) -> None:
        for name, proc in {**self.backing, **self.processes}.items():
            if proc.poll() is not None:
                raise AirflowStackError(
                    f"airflow {name} exited with code {proc.returncode}; log "
                    f"{self.log_path(name)}:\n{log_tail(self.log_path(name))}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every process and the workers it forked: all at once, then the api-server,
        then the database server and the broker."""
        try:
            stop_groups([p for n, p in self.processes.items() if n != "api-server"], timeout)
        finally:  # a second Ctrl-C while stopping still stops the rest
            try:
                stop_groups([p for n, p in self.processes.items() if n == "api-server"],
                            timeout)
            finally:
                self.processes.clear()
                self._stop_backing(timeout)
                for name in (STACK_FILE, LEDGER_FILE, SHELL_FILE):
                    (self.home / name).unlink(missing_ok=True)

    def _stop_backing(self, timeout: float) -> None:
        try:
            if self.postgres is not None:
                self.postgres.stop()
            stop_groups([p for n, p in self.backing.items() if n != "postgres"], timeout)
        finally:
            self.backing.clear()

    def start_process(self, name: str) -> None:
        """Start one of :attr:`services` (``scheduler``, ``api-server``, ``worker1``...)."""
        service = self.services[name]
        extra = ["--port", str(self.port)] if name == "api-server" else []
        self.processes[name] = spawn([sys.executable, "-m", "airflow", *service.args, *extra],
                                     service.log, {**self.env, **service.env}, cwd=service.cwd)

    def write_pids(self) -> None:
        (self.home / STACK_FILE).write_text(json.dumps({
            "url": self.url, "pids": {n: p.pid for n, p in self.processes.items()},
            "backing": {n: p.pid for n, p in self.backing.items()},
            "remove": [str(self.postgres.base)] if self.postgres else []}, indent=2))

    def restart(self, name: str, timeout: float = 30.0) -> int:
        """Stop one process with the workers it forked (their tasks die with them), start it
        again; returns its new pid."""
        proc = self.processes.pop(name, None)  # not "exited" to check_alive meanwhile
        if proc is None:
            raise AirflowStackError(f"airflow: no {name} runs here (running: "
                                    f"{', '.join(self.processes)})")
        stop_groups([proc], timeout)
        self.start_process(name)
        self.write_pids()
        return self.processes[name].pid

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def start_airflow(folder: Path, *, port: int | None = None, parallelism: int = 4,
                  connections: Iterable[Mapping[str, Any]] | None = None,
                  spark_master: str | None = None, project: Path = PROJECT,
                  extra_env: Mapping[str, str] | None = None, timeout: float = 180.0,
                  executor: str = "local", workers: int = 2, databases: Iterable[str] = (),
                  shared_ledger: bool = True, database: str = "postgres") -> AirflowStack:
    """Start a local Airflow for ``folder``; returns when the api-server is healthy and the
    connections exist (the embedded stack's ``cluster.json`` files when ``connections`` is
    None). ``database="postgres"`` starts PostgreSQL (with ``databases`` created on it besides
    Airflow's); ``executor="celery"`` (on PostgreSQL only) adds redis-server and ``workers``
    Celery workers sharing ``parallelism`` task slots; with ``shared_ledger`` also the ledger
    every task uses by default (:attr:`AirflowStack.ledger_url`). ``spark_default`` is
    ``spark_master`` when given, else ``auto`` unless it exists already. On any failure, what
    was started is stopped again."""
    _check_choices(executor, database, workers)
    folder = folder.absolute()
    home = folder / "airflow"
    home.mkdir(parents=True, exist_ok=True)
    running = home / STACK_FILE
    if running.exists() and _alive(json.loads(running.read_text())):
        raise AirflowStackError(f"airflow: a stack already runs for {folder} ({running}); "
                                f"stop it first: hbase-migrate airflow down --dir {folder}")
    attempt = 1
    while True:
        chosen = port or free_port()
        stack = AirflowStack(folder, chosen, airflow_env(folder, chosen, parallelism=parallelism,
                                                         project=project, extra=extra_env),
                             executor=executor)
        try:
            _start(stack, connections, spark_master, timeout, workers, databases,
                   shared_ledger, database, parallelism)
            return stack
        except PortTakenError as exc:
            if port is not None or attempt == PORT_ATTEMPTS:
                raise
            attempt += 1
            log.warning("%s; starting again on another port", exc)


def _start(stack: AirflowStack, connections: Iterable[Mapping[str, Any]] | None,
           spark_master: str | None, timeout: float, workers: int, databases: Iterable[str],
           shared_ledger: bool, database: str, parallelism: int) -> None:
    """Start ``stack``'s parts (:func:`start_airflow`); on any failure stop them again."""
    executor, folder, home = stack.executor, stack.folder, stack.home
    try:
        if database == "postgres":
            shared = [LEDGER_DB] if executor == "celery" and shared_ledger else []
            _start_postgres(stack, [*shared, *databases])
        if executor == "celery":
            _start_celery_parts(stack, workers, parallelism, shared_ledger)
        if database == "postgres" or not (home / "airflow.db").exists():
            migrated = stack.airflow("db", "migrate")
            if migrated.returncode:
                raise AirflowStackError(f"airflow db migrate failed:\n{migrated.stderr[-2000:]}")
        if database == "sqlite":
            wal_journal(home / "airflow.db")
        for name in stack.services:
            stack.start_process(name)
            if name == "api-server":
                stack.wait_healthy(timeout)
        stack.write_pids()
        write_shell_env(stack)
        _connect(stack, cluster_connections(folder) if connections is None
                 else list(connections), spark_master)
    except BaseException:
        stack.stop()
        raise


def _check_choices(executor: str, database: str, workers: int) -> None:
    if executor not in EXECUTORS:
        raise AirflowStackError(f"airflow: executor must be one of {', '.join(EXECUTORS)}, "
                                f"not {executor!r}")
    if database not in DATABASES:
        raise AirflowStackError(f"airflow: database must be one of {', '.join(DATABASES)}, "
                                f"not {database!r}")
    if executor == "celery" and database != "postgres":
        raise AirflowStackError("airflow: the celery executor needs database postgres")
    if executor == "celery" and workers < 1:
        raise AirflowStackError(f"airflow: --workers must be at least 1, not {workers}")


def wal_journal(database: Path) -> None:
    """Switch Airflow's SQLite database to WAL journaling (kept in the file): a reader never
    blocks a writer then, so the api-server does not wait behind the scheduler's reads (with
    a rollback journal a busy machine saw REST calls stall past a minute)."""
    with contextlib.closing(sqlite3.connect(database, timeout=60)) as db:
        db.execute("PRAGMA journal_mode = WAL")


def _connect(stack: AirflowStack, connections: Iterable[Mapping[str, Any]],
             spark_master: str | None) -> None:
    """Create ``connections`` and ``spark_default``: ``spark_master`` when given, else
    ``auto`` (in the task, Spark only for large work) unless the user set one before."""
    for body in connections:
        stack.put_connection(body)
    if spark_master is not None:
        stack.put_connection(spark_connection(spark_master))
        return
    status, answer = stack.api("POST", "/connections", spark_connection(AUTO))
    if status >= 300 and status != 409:
        raise AirflowStackError(f"airflow: connection 'spark_default' refused ({status}): "
                                f"{answer}")


def _start_postgres(stack: AirflowStack, databases: Iterable[str]) -> None:
    """PostgreSQL with Airflow's database and ``databases``."""
    if find_pg_bin() is None:
        raise AirflowStackError("airflow: the metadata database needs PostgreSQL's server "
                                "(Debian's postgresql package: apt-get install postgresql), "
                                "or start the stack with --database sqlite")
    stack.postgres = PostgresServer.local()
    stack.postgres.start()
    assert stack.postgres.proc is not None
    stack.backing["postgres"] = stack.postgres.proc
    for name in dict.fromkeys((METADATA_DB, *databases)):
        stack.postgres.create_database(name)
    stack.env.update(postgres_env(stack.postgres.url(METADATA_DB, "psycopg")))


def _start_celery_parts(stack: AirflowStack, workers: int, parallelism: int,
                        shared_ledger: bool) -> None:
    """The shared ledger, redis-server and the workers' services (started after the
    scheduler)."""
    assert stack.postgres is not None
    if shared_ledger:
        _share_ledger(stack, stack.postgres.url(LEDGER_DB))
    broker = free_port()
    stack.backing["redis"] = start_redis(stack.home / "redis", broker)
    concurrency = max(1, math.ceil(parallelism / workers))
    stack.env.update(celery_env(stack.postgres.url(METADATA_DB, "psycopg"), broker,
                                concurrency))
    for number in range(1, workers + 1):
        stack.services[f"worker{number}"] = worker_service(stack.home, number, concurrency)
    stack.write_pids()


def _share_ledger(stack: AirflowStack, url: str) -> None:
    """Make ``url`` the ledger of every process the stack starts (its schema created now,
    before two workers could race to create it) and write it to :data:`LEDGER_FILE`."""
    from hbase_migrate.audit.engine import open_engine
    from hbase_migrate.audit.schema import upgrade

    engine = open_engine(url)
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    stack.env[LEDGER_ENV] = url
    path = stack.home / LEDGER_FILE
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
        out.write(url)


def stop_airflow(folder: Path, timeout: float = 30.0) -> list[str]:
    """Stop the stack ``start_airflow`` left running for ``folder`` (another process's);
    returns the names of the processes stopped."""
    running = folder.absolute() / "airflow" / STACK_FILE
    if not running.exists():
        return []
    described = json.loads(running.read_text())
    pids: dict[str, int] = described.get("pids", {})
    backing: dict[str, int] = described.get("backing", {})
    stopped = [name for name, pid in {**pids, **backing}.items() if group_alive(pid)]
    stop_groups([pids[n] for n in stopped if n in pids and n != "api-server"], timeout)
    stop_groups([pids[n] for n in stopped if n == "api-server"], timeout)
    stop_groups([backing[n] for n in stopped if n == "postgres"], timeout, first=signal.SIGINT)
    stop_groups([backing[n] for n in stopped if n == "redis"], timeout)
    for path in described.get("remove", []):
        shutil.rmtree(path, ignore_errors=True)
    running.unlink(missing_ok=True)
    for name in (LEDGER_FILE, SHELL_FILE):
        (running.parent / name).unlink(missing_ok=True)
    return stopped


def _alive(described: dict[str, Any]) -> bool:
    return any(group_alive(pid) for group in ("pids", "backing")
               for pid in described.get(group, {}).values())
