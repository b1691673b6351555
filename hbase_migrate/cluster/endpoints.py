"""Where a cluster answers: its gateways, WAL storage and ZooKeeper, as one frozen value.

``cluster.json`` (written by the embedded cluster, or by hand for a real one) holds the same
keys as :class:`ClusterEndpoints`; unknown keys (``pid``, ``dir``...) are ignored on load.
Its ``security`` object, when present, says how clients authenticate
(:class:`~hbase_migrate.cluster.auth.security.ClusterSecurity`; relative file names in it are
relative to the ``cluster.json``).
A process reads each ``cluster.json`` once (:func:`load_cluster_json`), and again only
when the file was replaced or on a reconnect. Where a cluster's gateways answer can change
while a process runs (a restart on new ports rewrites ``cluster.json``): clients take a
:data:`Locate` function that reads the file again before reconnecting (:func:`relocated`).
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from thriftpy2.protocol.exc import TProtocolException

from hbase_migrate.cluster.auth.security import ClusterSecurity, warn_if_exposed
from hbase_migrate.cluster.uri import ClusterUri, parse_cluster_uri
from hbase_migrate.errors import ConfigError, HBaseMigrateError

log = logging.getLogger(__name__)

TRANSPORTS = ("buffered", "framed", "http")  # http: gateways in HTTP mode (binary only)
PROTOCOLS = ("binary", "compact")
CLIENTS = ("native", "thrift")  # HBase's own RPC, or the Thrift gateways


def parse_host_port(value: str, what: str) -> tuple[str, int]:
    """``"host:port"`` -> ``(host, port)``, with an error naming ``what`` when malformed."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{what}: expected host:port, got {value!r}")
    return host, int(port)


def reason(exc: BaseException) -> str:
    """A transport error's own words (thriftpy2's carry a ``message``)."""
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__




def unreachable(gateway: str, endpoint: str, what: str, tried: str, exc: BaseException) -> str:
    """The message of a gateway call whose every attempt failed on the transport."""
    return f"{gateway} gateway {endpoint}: {what}: unreachable{tried}: {reason(exc)}"


def _protocol_errors() -> tuple[type[Exception], ...]:
    try:  # the fast binary protocol raises its own error (no TException)
        from thriftpy2.protocol import cybin
    except ImportError:  # pragma: no cover - thriftpy2 without its compiled parts
        return (TProtocolException,)
    return (TProtocolException, getattr(cybin, "ProtocolError", TProtocolException))


# A reply that is no Thrift of the configured transport/protocol (an HTTP-mode gateway
# answering a socket client with an HTTP status line, say).
PROTOCOL_ERRORS = _protocol_errors()


def mismatch(gateway: str, endpoint: str, what: str, transport: str, protocol: str,
             exc: BaseException) -> str:
    """The message of a call whose reply could not be read as configured."""
    return (f"{gateway} gateway {endpoint}: {what}: the reply is not {transport}/{protocol} "
            f"Thrift ({reason(exc)}); set the cluster's transport and protocol to the "
            "gateway's (one in HTTP mode, hbase.regionserver.thrift.http, needs transport "
            "= \"http\")")


# Gateway calls retried after a transport error in this process, by gateway kind
# ("thrift", "thrift2"): a figure of the live metrics.
RETRIES: Counter[str] = Counter()


Locate = Callable[[], "str | None"]  # where a gateway answers now ("host:port"), or None


def relocated(locate: Locate | None, current: str, gateway: str
              ) -> tuple[str, tuple[str, int]] | None:
    """``(endpoint, (host, port))`` when ``locate`` now gives another endpoint than
    ``current``; None when it gives the same or none, or when the lookup fails (a
    ``cluster.json`` being rewritten, say: logged, and the current endpoint kept)."""
    if locate is None:
        return None
    try:
        found = locate()
        if not found or found == current:
            return None
        address = parse_host_port(found, f"{gateway} endpoint")
    except (HBaseMigrateError, OSError, ValueError, TypeError) as exc:
        log.warning("%s gateway %s: cannot look its endpoint up again (%s); keeping it",
                    gateway, current, exc)
        return None
    log.warning("%s gateway moved from %s to %s; reconnecting there", gateway, current, found)
    return found, address


def check_http_url(url: str, what: str) -> str:
    """``url`` if it is ``http(s)://host[:port]``, else a ConfigError naming ``what``."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises on a port that is no number
    except ValueError:
        parts = parts._replace(netloc="")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what}: expected http://host:port (the NameNode's HTTP address, "
                          f"e.g. http://namenode:9870), got {url!r}")
    return url


@dataclass(frozen=True)
class ClusterEndpoints:
    """A cluster's addresses. ``thrift``/``thrift2`` are ``host:port`` of the Thrift1 and
    Thrift2 gateways (empty / None: none); both use the same ``transport`` and ``protocol``
    (``"http"``: Thrift over HTTP POST, with SPNEGO when the cluster is Kerberos-secured).
    ``client`` says how the steps read and write: ``"native"`` (HBase's own RPC, found
    through ``zookeeper``) or ``"thrift"`` (the gateways); not given, a cluster naming a
    Thrift2 gateway is read through it, one naming none but ZooKeeper natively. ``uri``:
    HBase's connection URI (:mod:`hbase_migrate.cluster.uri`): ``hbase+zk://`` sets
    ``zookeeper`` and ``znode_parent``; ``hbase+rpc://`` reaches the cluster natively through
    the RPC registry of the servers it names, with no ZooKeeper."""

    name: str
    thrift: str = ""
    thrift2: str | None = None
    transport: str = "buffered"
    protocol: str = "binary"
    webhdfs: str | None = None
    # host:port of the NameNode's RPC (fs.defaultFS): store files are then read from the
    # DataNodes over HDFS's own protocols (hdfs/datanode.py), not through WebHDFS
    namenode: str | None = None
    zookeeper: str | None = None
    znode_parent: str = "/hbase"
    hbase_root: str | None = None
    hbase_root_dir: str | None = None  # a local folder holding the HBase root, when there is one
    security: ClusterSecurity | None = None  # None: no authentication
    client: str | None = None  # "native" or "thrift"; None: chosen as the docstring says
    uri: str | None = None  # hbase+rpc://host:port,... or hbase+zk://quorum/znode

    @property
    def parsed_uri(self) -> ClusterUri | None:
        return parse_cluster_uri(self.uri) if self.uri else None

    @property
    def bootstrap(self) -> tuple[tuple[str, int], ...]:
        """The servers of an ``hbase+rpc://`` URI (the RPC registry's), else none."""
        parsed = self.parsed_uri
        return parsed.servers if parsed is not None else ()

    @property
    def registry(self) -> str:
        """Who tells where meta and the master are: ``"rpc"`` or ``"zookeeper"``."""
        return "rpc" if self.bootstrap else "zookeeper"

    @property
    def native(self) -> bool:
        """Whether the steps reach this cluster over HBase's own RPC (no gateway)."""
        return self.client == "native"

    @property
    def kerberos(self) -> bool:
        return self.security is not None and self.security.kerberos

    @property
    def client_auth(self) -> dict[str, Any]:
        """What every client of this cluster is given: its security and its name."""
        return {"security": self.security, "cluster": self.name}

    def _take_uri(self) -> None:
        """A ``hbase+zk`` URI's quorum and parent as ``zookeeper``/``znode_parent`` (given
        twice, they must agree)."""
        try:
            parsed = self.parsed_uri
        except ConfigError as exc:
            raise ConfigError(f"cluster {self.name!r}: {exc}") from None
        if parsed is None or parsed.rpc:
            return
        if self.zookeeper and (self.zookeeper, self.znode_parent) != (parsed.quorum,
                                                                      parsed.znode_parent):
            raise ConfigError(f"cluster {self.name!r}: uri {self.uri!r} and zookeeper = "
                              f"\"{self.zookeeper}{self.znode_parent}\" disagree: give one")
        object.__setattr__(self, "zookeeper", parsed.quorum)
        object.__setattr__(self, "znode_parent", parsed.znode_parent)

    def __post_init__(self) -> None:
        self._take_uri()
        if self.thrift:
            parse_host_port(self.thrift, f"cluster {self.name!r} thrift")
        elif not self.zookeeper and not self.bootstrap:
            raise ConfigError(f"cluster {self.name!r}: expected a Thrift gateway (thrift = "
                              "\"host:port\"), ZooKeeper (zookeeper = \"host:2181\") or "
                              "uri = \"hbase+rpc://host:16020,...\"")
        if self.client is None:
            reached = self.zookeeper or self.bootstrap
            object.__setattr__(self, "client", "native" if not self.thrift2 and reached
                               else "thrift")
        if self.client not in CLIENTS:
            raise ConfigError(f"cluster {self.name!r}: client must be one of {CLIENTS}, "
                              f"got {self.client!r}")
        if self.client == "native" and not self.zookeeper and not self.bootstrap:
            raise ConfigError(f"cluster {self.name!r}: client \"native\" finds the cluster "
                              "through ZooKeeper: zookeeper = \"host:2181\" is missing")
        if self.thrift2 is not None:
            parse_host_port(self.thrift2, f"cluster {self.name!r} thrift2")
        if self.transport not in TRANSPORTS:
            raise ConfigError(f"cluster {self.name!r}: transport must be one of {TRANSPORTS}, "
                              f"got {self.transport!r}")
        if self.protocol not in PROTOCOLS:
            raise ConfigError(f"cluster {self.name!r}: protocol must be one of {PROTOCOLS}, "
                              f"got {self.protocol!r}")
        if self.transport == "http" and self.protocol != "binary":
            raise ConfigError(f"cluster {self.name!r}: transport \"http\" needs protocol "
                              f"\"binary\" (HBase's gateways in HTTP mode speak only that), "
                              f"got {self.protocol!r}")
        self._check_hdfs()

    def _check_hdfs(self) -> None:
        if self.webhdfs is not None:
            check_http_url(self.webhdfs, f"cluster {self.name!r} webhdfs")
        if self.namenode is not None:
            parse_host_port(self.namenode, f"cluster {self.name!r} namenode")
            if not self.webhdfs:
                raise ConfigError(f"cluster {self.name!r}: namenode = {self.namenode!r} "
                                  "needs webhdfs too (listings, copies and writes go there; "
                                  "the DataNodes serve reads)")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "cluster.json",
                  folder: Path | None = None) -> ClusterEndpoints:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        if not isinstance(known.get("name"), str):
            raise ConfigError(f"{source}: missing or non-string key 'name'")
        for key in ("thrift", "zookeeper", "client", "uri"):
            if key in known and not isinstance(known[key], str | None):
                raise ConfigError(f"{source}: non-string key {key!r}")
        security = known.pop("security", None)
        if security is not None:
            if not isinstance(security, dict):
                raise ConfigError(f"{source}: security: expected an object, got {security!r}")
            known["security"] = ClusterSecurity.from_json(security, source, folder)
            if folder is not None:  # read from a file: the settings name a keytab
                warn_if_exposed(source, "a cluster.json with security settings")
        return cls(**known)


# What each cluster.json said, by absolute path, with the identity of the file read (inode,
# size, times) and when it was read. A process reads each file once: asked again, the cached
# endpoints are given while the file is the one read (a cluster restarted on new ports
# writes a new file, with a new inode: read again once), and a reconnect reads it again
# whatever its identity (``reread``). A file rewritten in place within one tick of the
# filesystem's clock keeps its identity, so what was read within a tick of the file's last
# change is not trusted (as git's index): a tick is taken as 2 s where the file's time is in
# whole seconds (FAT, some NFS), else 20 ms (a kernel's coarse clock).
# Module state: a process forked after a read checks the file as any caller does.
_READ: dict[Path, tuple[tuple[int, int, int, int], ClusterEndpoints, int]] = {}
COARSE_TICK_NS, FINE_TICK_NS = 2_000_000_000, 20_000_000
_clock = time.time_ns  # when a file is read


def load_cluster_json(path: str | Path, *, reread: bool = False) -> ClusterEndpoints:
    """The endpoints a ``cluster.json`` file names: read on the first call in this process,
    then again only when the file was replaced or changed, or with ``reread`` (what a
    client reconnecting after a failure asks: :data:`Locate`)."""
    where = Path(path).absolute()
    try:
        st = where.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read cluster endpoints: {exc}") from exc
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    known = _READ.get(where)
    if known is not None and known[0] == identity and not reread and \
            known[2] - st.st_mtime_ns > _tick(st.st_mtime_ns):
        return known[1]
    read_at = _clock()
    endpoints = _read_cluster_json(path, where)
    _READ[where] = (identity, endpoints, read_at)
    return endpoints


def _tick(mtime_ns: int) -> int:
    """How close to a file's change a read may have been and not see it."""
    return COARSE_TICK_NS if mtime_ns % 1_000_000_000 == 0 else FINE_TICK_NS


def _read_cluster_json(path: str | Path, where: Path) -> ClusterEndpoints:
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read cluster endpoints: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object of cluster endpoints")
    return ClusterEndpoints.from_json(data, str(path), where.parent)
