"""HBase's connection URIs (HBASE-28436, HBase 2.6 and 3.0): a cluster named by one string.

* ``hbase+rpc://host:port,host:port`` - the RPC connection registry: the servers listed
  (masters or region servers, their RPC ports) are asked where ``hbase:meta`` and the active
  master are (``hbase.client.bootstrap.servers``; :mod:`hbase_migrate.rpc.registry`). No
  ZooKeeper at all.
* ``hbase+zk://host:port,host:port/znode`` - ZooKeeper's quorum and the znode parent
  (``hbase.zookeeper.quorum``, ``zookeeper.znode.parent``), as ``ZKConnectionRegistry``.

HBase's ``RpcConnectionRegistryURIFactory`` and ``ZKConnectionRegistryURIFactory`` refuse a
URI with no servers, and the ZooKeeper one a URI with no path; so does this parser.
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.errors import ConfigError

RPC_SCHEME, ZK_SCHEME = "hbase+rpc", "hbase+zk"


class ClusterUri(NamedTuple):
    """A parsed URI: ``servers`` (``hbase+rpc``), or ``quorum`` and ``znode_parent``."""

    scheme: str
    servers: tuple[tuple[str, int], ...] = ()
    quorum: str = ""
    znode_parent: str = ""

    @property
    def rpc(self) -> bool:
        return self.scheme == RPC_SCHEME


def _host_port(text: str, uri: str, what: str) -> tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"uri {uri!r}: {what} {text.strip()!r} is not host:port (name each "
                          "server with its port, e.g. hbase+rpc://hmaster-1:16000,rs-1:16020)")
    return host.strip("[]"), int(port)


def parse_cluster_uri(uri: str) -> ClusterUri:
    """``uri`` parsed, or a ConfigError naming it and what to write instead."""
    scheme, sep, rest = uri.partition("://")
    if not sep or scheme not in (RPC_SCHEME, ZK_SCHEME):
        raise ConfigError(f"uri {uri!r}: expected hbase+rpc://host:port,... (HBase's RPC "
                          "registry) or hbase+zk://quorum/znode (ZooKeeper)")
    authority, slash, path = rest.partition("/")
    if not authority.strip():
        what = "bootstrap servers" if scheme == RPC_SCHEME else "ZooKeeper quorum"
        raise ConfigError(f"uri {uri!r}: no {what} named")
    if scheme == RPC_SCHEME:
        if path.strip("/"):
            raise ConfigError(f"uri {uri!r}: an hbase+rpc URI has no path (servers only)")
        servers = tuple(_host_port(s, uri, "server") for s in authority.split(","))
        return ClusterUri(scheme, servers=tuple(dict.fromkeys(servers)))
    for member in authority.split(","):
        if ":" in member:
            _host_port(member, uri, "quorum member")
    if not slash or not path.strip("/"):
        raise ConfigError(f"uri {uri!r}: no znode parent (write hbase+zk://{authority}/hbase)")
    return ClusterUri(scheme, quorum=authority, znode_parent="/" + path.strip("/"))
