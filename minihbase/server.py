"""One embedded cluster: the durable store, the cluster logic and both Thrift gateways.

``MiniHBase(dir).start()`` opens (or reopens) ``dir/store.sqlite`` and serves Thrift1 and
Thrift2 on loopback ports; ``stop()`` closes the gateways, then the store. Its endpoints are
written to ``dir/cluster.json`` atomically (temp file, fsync, rename).
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from minihbase import thrift1, thrift2
from minihbase.cluster import Cluster
from minihbase.gateway import ThriftGateway
from minihbase.process import EmbeddedStackError
from minihbase.store import Store, WriteHook

log = logging.getLogger(__name__)

STORE_FILE = "store.sqlite"
CLUSTER_JSON = "cluster.json"


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class MiniHBase:
    """The embedded HBase-compatible cluster in this process."""

    def __init__(self, data_dir: str | Path, name: str = "minihbase", thrift_port: int = 0,
                 thrift2_port: int = 0, transport: str = "buffered", protocol: str = "binary",
                 zookeeper: str | None = None, write_hook: WriteHook | None = None) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.name = name
        self.ports = (thrift_port, thrift2_port)
        self.transport, self.protocol = transport, protocol
        self.zookeeper = zookeeper
        self.write_hook = write_hook
        self.store: Store | None = None
        self.cluster: Cluster | None = None
        self.thrift1: ThriftGateway | None = None
        self.thrift2: ThriftGateway | None = None

    def _open_store(self) -> Store:
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            probe = self.data_dir / ".write-probe"
            probe.write_bytes(b"")
            probe.unlink()
            return Store(self.data_dir / STORE_FILE, self.write_hook)
        except (OSError, sqlite3.Error) as exc:
            raise EmbeddedStackError(
                f"minicluster {self.name}: data directory {self.data_dir} is not usable "
                f"({exc}); give a writable --dir") from exc

    def start(self) -> Self:
        self.store = self._open_store()
        self.cluster = Cluster(self.store)
        try:
            served1, _ = thrift1.make_handler(self.cluster)
            served2, _ = thrift2.make_handler(self.cluster)
            self.thrift1 = ThriftGateway(f"{self.name} thrift", thrift1.SERVICE, served1,
                                         self.ports[0], self.transport, self.protocol)
            self.thrift2 = ThriftGateway(f"{self.name} thrift2", thrift2.SERVICE, served2,
                                         self.ports[1], self.transport, self.protocol)
        except BaseException:
            self.stop()
            raise
        self.thrift1.start()
        self.thrift2.start()
        log.info("minicluster %s serving thrift %s, thrift2 %s", self.name,
                 self.thrift1.address, self.thrift2.address)
        return self

    def stop(self) -> None:
        for gateway in (self.thrift1, self.thrift2):
            if gateway is not None:
                gateway.stop()
        self.thrift1 = self.thrift2 = None
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Self:
        return self.start() if self.store is None else self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def endpoints(self) -> ClusterEndpoints:
        if self.thrift1 is None or self.thrift2 is None:
            raise EmbeddedStackError(f"minicluster {self.name} is not running")
        return ClusterEndpoints(name=self.name, thrift=self.thrift1.address,
                                thrift2=self.thrift2.address, transport=self.transport,
                                protocol=self.protocol, zookeeper=self.zookeeper)

    def describe(self) -> dict[str, Any]:
        """The ready line / cluster.json: endpoints plus ``pid`` and ``dir``."""
        data = self.endpoints.to_json()
        keep = ("name", "thrift", "thrift2", "transport", "protocol", "zookeeper")
        out = {k: data[k] for k in keep if k != "zookeeper" or self.zookeeper}
        return {**out, "pid": os.getpid(), "dir": str(self.data_dir)}

    def write_cluster_json(self) -> Path:
        path = self.data_dir / CLUSTER_JSON
        write_json_atomically(path, self.describe())
        return path
