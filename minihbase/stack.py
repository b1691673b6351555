"""The embedded stack as child processes: ZooKeeper and miniclusters started through the
same ``hbase-migrate`` commands a user runs, and stopped together."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Self

from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from minihbase.zookeeper import ZooKeeperServer
from stackprocs.process import EmbeddedStackError, log_tail, spawn_child, stop_child


class MiniclusterProcess:
    """``hbase-migrate minicluster start`` in a child process."""

    def __init__(self, name: str, data_dir: Path, extra_args: list[str] | None = None) -> None:
        self.name = name
        self.data_dir = data_dir
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.endpoints: ClusterEndpoints | None = None

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / f"{self.name}.log"

    def start(self, timeout: float = 60.0) -> ClusterEndpoints:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cluster_json = self.data_dir / "cluster.json"
        cluster_json.unlink(missing_ok=True)
        args = [sys.executable, "-m", "hbase_migrate", "minicluster", "start",
                "--name", self.name, "--dir", str(self.data_dir), *self.extra_args]
        self.proc = spawn_child(args, str(self.log_path))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EmbeddedStackError(
                    f"minicluster {self.name} exited with code {self.proc.returncode}; "
                    f"log {self.log_path}:\n{log_tail(str(self.log_path))}")
            if cluster_json.exists():
                data = json.loads(cluster_json.read_text())
                if data.get("pid") == self.proc.pid:
                    self.endpoints = load_cluster_json(cluster_json)
                    return self.endpoints
            time.sleep(0.1)
        self.stop()
        raise EmbeddedStackError(f"minicluster {self.name} not ready within {timeout:g} s; "
                                 f"log {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None:
            stop_child(self.proc, timeout=30)
            self.proc = None


class EmbeddedStack:
    """ZooKeeper plus named miniclusters under one folder; a context manager."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._exit = ExitStack()
        self.zookeeper: ZooKeeperServer | None = None
        self.clusters: dict[str, MiniclusterProcess] = {}

    def start_zookeeper(self) -> str:
        self.zookeeper = self._exit.enter_context(ZooKeeperServer(self.root / "zookeeper"))
        return self.zookeeper.address

    def start_cluster(self, name: str, extra_args: list[str] | None = None) -> ClusterEndpoints:
        args = list(extra_args or [])
        if self.zookeeper is not None:  # one quorum, one parent znode per cluster
            args += ["--zookeeper", self.zookeeper.address, "--znode-parent", f"/hbase-{name}"]
        proc = MiniclusterProcess(name, self.root / name, args)
        self._exit.callback(proc.stop)
        self.clusters[name] = proc
        return proc.start()

    def close(self) -> None:
        self._exit.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
