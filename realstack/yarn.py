"""A real YARN, a JVM per daemon: ``RealYarn`` starts the ``yarn`` Maven module's launcher as
the ResourceManager (Hadoop's MiniYARNCluster with no NodeManager, beside a mini HDFS for the
applications' staging files), then as each NodeManager (whose containers are processes of
their own), and writes ``yarn.json`` once every NodeManager is running: the
ResourceManager's address and web URL, the HDFS, the NodeManagers (node id, web URL, pid,
folders) and the configuration folder for ``HADOOP_CONF_DIR`` (``conf/``).

``prefix`` runs the JVMs under a command (``unshare --mount ...``: the containers then see
what that namespace shows) and ``env`` is their environment: what the containers inherit
(``PATH`` names the ``python3`` Spark's executors start)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from realstack.maven import RealStackError, java_command, module_classpath
from stackprocs.process import die_with_parent, log_tail, stop_child

MAIN_CLASS = "hbasemigrate.realstack.RealYarn"
HADOOP_VERSION = "3.4.2"  # pyspark 4.1's hadoop-client-api/-runtime


@dataclass(frozen=True)
class RealYarnOptions:
    """What the launcher is asked for."""

    node_managers: int = 2
    memory_mb: int = 4096           # each NodeManager's memory for containers
    vcores: int = 4                 # each NodeManager's cores for containers
    queues: tuple[str, ...] = ("default",)  # the capacity scheduler's leaf queues
    hadoop_version: str = HADOOP_VERSION
    heap: str = "768m"              # the ResourceManager's JVM (with the HDFS)
    node_heap: str = "384m"         # each NodeManager's

    def arguments(self, data_dir: Path) -> list[str]:
        """The ResourceManager's launcher arguments."""
        if not self.queues or any("," in q or not q for q in self.queues):
            raise RealStackError(f"queues must be non-empty names, got {self.queues!r}")
        return ["--role", "resourcemanager", "--dir", str(data_dir),
                "--queues", ",".join(self.queues)]

    def node_arguments(self, folder: Path, conf: Path) -> list[str]:
        """A NodeManager's launcher arguments: its ``folder``, the cluster's ``conf``."""
        return ["--role", "nodemanager", "--dir", str(folder), "--conf", str(conf),
                "--memory-mb", str(self.memory_mb), "--vcores", str(self.vcores)]


def yarn_classpath(hadoop_version: str = HADOOP_VERSION) -> list[str]:
    """The ``yarn`` module's class path for ``hadoop_version`` (Maven the first time)."""
    return module_classpath("yarn", {"hadoop.version": hadoop_version})


class RealYarn:
    """One real YARN (and its staging HDFS) in a child JVM; ``with RealYarn(dir) as yarn:``."""

    def __init__(self, data_dir: str | os.PathLike[str], options: RealYarnOptions | None = None,
                 *, env: Mapping[str, str] | None = None, prefix: Sequence[str] = ()) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.options = options or RealYarnOptions()
        self.env = dict(env) if env is not None else None
        self.prefix = list(prefix)
        self.described: dict[str, Any] = {}
        self._procs: list[subprocess.Popen[bytes]] = []  # the ResourceManager's first

    @property
    def log_path(self) -> Path:
        return self.data_dir / "realstack-yarn.log"

    @property
    def running(self) -> bool:
        """Whether every daemon started is still running."""
        return bool(self._procs) and all(p.poll() is None for p in self._procs)

    @property
    def conf_dir(self) -> Path:
        """What ``HADOOP_CONF_DIR`` names for this YARN's clients."""
        return Path(self.described["hadoop_conf_dir"])

    @property
    def web(self) -> str:
        """The ResourceManager's web address (its REST API under ``/ws/v1/cluster``)."""
        return str(self.described["web"])

    def start(self, timeout: float = 300.0) -> Self:
        """Build the class path if needed, launch the ResourceManager, then each NodeManager,
        and wait until the ResourceManager lists every one running."""
        started = time.monotonic()
        deadline = started + timeout
        self.data_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.described = self._launch(self.options.arguments(self.data_dir),
                                          self.data_dir, self.options.heap, deadline)
            conf = Path(self.described["hadoop_conf_dir"])
            spawned = []  # the NodeManagers start side by side
            for n in range(self.options.node_managers):
                folder = self.data_dir / f"nm-{n}"
                folder.mkdir(exist_ok=True)
                arguments = self.options.node_arguments(folder, conf)
                spawned.append((self._spawn(arguments, folder, self.options.node_heap),
                                arguments, folder))
            nodes = [self._ready(proc, arguments, folder, deadline)
                     for proc, arguments, folder in spawned]
            self._wait_nodes({n["node_id"] for n in nodes}, deadline)
        except BaseException:
            self.stop()
            raise
        self.described.update(node_managers=nodes, pid=self._procs[0].pid,
                              started_in_ms=round((time.monotonic() - started) * 1000))
        partial = self.data_dir / "yarn.json.tmp"
        partial.write_text(json.dumps(self.described) + "\n", encoding="utf-8")
        os.replace(partial, self.data_dir / "yarn.json")
        return self

    def _launch(self, arguments: list[str], folder: Path, heap: str,
                deadline: float) -> dict[str, Any]:
        """Start one daemon's JVM in ``folder`` and return its ready line."""
        return self._ready(self._spawn(arguments, folder, heap), arguments, folder, deadline)

    def _spawn(self, arguments: list[str], folder: Path,
               heap: str) -> subprocess.Popen[bytes]:
        """Start one daemon's JVM in ``folder`` (its log: ``realstack-yarn.log`` there)."""
        command = [*self.prefix, *java_command(
            yarn_classpath(self.options.hadoop_version), MAIN_CLASS, arguments,
            heap=heap, jvm_options=("-XX:+ExitOnOutOfMemoryError",))]
        log_path = folder / self.log_path.name
        with log_path.open("ab") as log_file:
            proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log_file,
                cwd=str(folder), env=self.env,
                preexec_fn=die_with_parent)  # noqa: PLW1509 - only prctl
        self._procs.append(proc)
        return proc

    def _ready(self, proc: subprocess.Popen[bytes], arguments: list[str], folder: Path,
               deadline: float) -> dict[str, Any]:
        """The ready line of the daemon ``proc`` (an error with its log's cause if it ends
        or the deadline passes first)."""
        log_path = folder / self.log_path.name
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            readable, _, _ = select.select([proc.stdout], [], [], 1.0)
            if readable:
                line = proc.stdout.readline()
                if line:
                    return dict(json.loads(line))
            if proc.poll() is not None:
                raise RealStackError(f"YARN ({arguments[1]}) exited with code "
                                     f"{proc.returncode} before it was ready; log {log_path}:"
                                     f"\n{self._failure(log_path)}")
        raise RealStackError(f"YARN ({arguments[1]}) was not ready in time; log {log_path}:\n"
                             f"{self._failure(log_path)}")

    def _wait_nodes(self, wanted: set[str], deadline: float) -> None:
        while True:
            nodes = (self.rest("nodes").get("nodes") or {}).get("node") or []
            running = {n["id"] for n in nodes if n.get("state") == "RUNNING"}
            if wanted <= running:
                return
            if time.monotonic() > deadline:
                raise RealStackError(f"YARN: the ResourceManager lists {sorted(running)} "
                                     f"running, not every one of {sorted(wanted)}")
            time.sleep(0.5)

    @staticmethod
    def _failure(log_path: Path) -> str:
        text = log_tail(str(log_path), 400)
        found = [line for line in text.splitlines() if line.startswith("realstack:")
                 or ("Exception" in line and not line.startswith("\t"))]
        return "\n".join(found[-8:]) or "\n".join(text.splitlines()[-15:])

    def rest(self, path: str) -> dict[str, Any]:
        """The ResourceManager's REST answer at ``/ws/v1/cluster/<path>``."""
        request = urllib.request.Request(f"{self.web}/ws/v1/cluster/{path}",
                                         headers={"Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            found: dict[str, Any] = json.loads(answer.read())
            return found

    def kill_node_manager(self, node_id: str) -> list[int]:
        """SIGKILL the NodeManager ``node_id`` and every process under it (its containers'
        launch scripts, executors and their Python workers), as a host lost at once: the
        whole tree is stopped first, so that nothing starts or notices in between; the pids
        killed, the NodeManager's first. The ResourceManager hears nothing: the node is
        lost to it only when its heartbeats expire (``yarn.nm.liveness-monitor.
        expiry-interval-ms``), and until then it places no container there."""
        nodes = [n for n in self.described.get("node_managers", ()) if n["node_id"] == node_id]
        procs = [p for p in self._procs if nodes and p.pid == nodes[0]["pid"]]
        if not procs:
            raise RealStackError(f"YARN: no NodeManager {node_id} of this stack runs")
        tree = [procs[0].pid]
        while True:  # stop what runs, then look again for what it started meanwhile
            for pid in tree:
                _signal(pid, signal.SIGSTOP)
            more = [p for p in _descendants(procs[0].pid) if p not in tree]
            if not more:
                break
            tree += more
        for pid in tree:
            _signal(pid, signal.SIGKILL)
        procs[0].wait(30)
        return tree

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM each daemon, NodeManagers first (then the ResourceManager stops YARN and
        HDFS), SIGKILL after ``timeout``."""
        for proc in reversed(self._procs):
            proc.terminate()
        for proc in reversed(self._procs):
            stop_child(proc, timeout)
            if proc.stdout is not None:
                proc.stdout.close()
        self._procs = []

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (children first), as ``/proc`` lists them now."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="ascii", errors="replace").rpartition(")")[2]
        except OSError:
            continue  # (ended meanwhile)
        children.setdefault(int(fields.split()[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(0), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):  # (ended meanwhile)
        os.kill(pid, sig)
