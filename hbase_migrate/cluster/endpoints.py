"""Where a cluster answers: its gateways, WAL storage and ZooKeeper, as one frozen value.

``cluster.json`` (written by the embedded cluster, or by hand for a real one) holds the same
keys as :class:`ClusterEndpoints`; unknown keys (``pid``, ``dir``...) are ignored on load.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hbase_migrate.errors import ConfigError

TRANSPORTS = ("buffered", "framed")
PROTOCOLS = ("binary", "compact")


def parse_host_port(value: str, what: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``, with an error naming ``what`` when malformed."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{what}: expected host:port, got {value!r}")
    return host, int(port)


@dataclass(frozen=True)
class ClusterEndpoints:
    """A cluster's addresses. ``thrift``/``thrift2`` are ``host:port`` of the Thrift1 and
    Thrift2 gateways; both use the same ``transport`` and ``protocol``."""

    name: str
    thrift: str
    thrift2: str | None = None
    transport: str = "buffered"
    protocol: str = "binary"
    webhdfs: str | None = None
    zookeeper: str | None = None
    znode_parent: str = "/hbase"
    hbase_root: str | None = None
    hbase_root_dir: str | None = None  # a local folder holding the HBase root, when there is one

    def __post_init__(self) -> None:
        parse_host_port(self.thrift, f"cluster {self.name!r} thrift")
        if self.thrift2 is not None:
            parse_host_port(self.thrift2, f"cluster {self.name!r} thrift2")
        if self.transport not in TRANSPORTS:
            raise ConfigError(f"cluster {self.name!r}: transport must be one of {TRANSPORTS}, "
                              f"got {self.transport!r}")
        if self.protocol not in PROTOCOLS:
            raise ConfigError(f"cluster {self.name!r}: protocol must be one of {PROTOCOLS}, "
                              f"got {self.protocol!r}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "cluster.json") -> ClusterEndpoints:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        for required in ("name", "thrift"):
            if not isinstance(known.get(required), str):
                raise ConfigError(f"{source}: missing or non-string key {required!r}")
        return cls(**known)


def load_cluster_json(path: str | Path) -> ClusterEndpoints:
    """Read a ``cluster.json`` file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read cluster endpoints: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object of cluster endpoints")
    return ClusterEndpoints.from_json(data, str(path))
