"""What ``minicluster start`` takes without being told: on a restart, the ports and parent
znode its ``cluster.json`` names; for a new cluster on a ZooKeeper another cluster's master
already holds ``/hbase`` on, a parent znode of its own (``/hbase-<name>``)."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from minihbase.zkregistry import ZK_CONNECT_TIMEOUT
from stackprocs.process import EmbeddedStackError

DEFAULT_PARENT = "/hbase"
PORT_KEYS = {"thrift": "thrift_port", "thrift2": "thrift2_port", "webhdfs": "webhdfs_port",
             "admin": "admin_port", "master_rpc": "master_rpc_port"}  # cluster.json key ->
# start's option


def remembered(data_dir: Path) -> dict[str, Any]:
    """The ``cluster.json`` an earlier start wrote in ``data_dir`` (empty: none, or unread)."""
    try:
        found = json.loads((data_dir / "cluster.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def remembered_ports(before: dict[str, Any]) -> dict[str, int]:
    """start's port options as the earlier start had them, those still free (a port taken
    meanwhile is left to be picked anew: the new cluster.json names it)."""
    ports: dict[str, int] = {}
    for key, option in PORT_KEYS.items():
        match = re.search(r":(\d+)$", str(before.get(key) or ""))
        if match and _free(int(match[1])):
            ports[option] = int(match[1])
    return ports


def remembered_rpc_ports(before: dict[str, Any], count: int) -> list[int]:
    """The region servers' RPC ports as the earlier start had them (its servers in order),
    when it had ``count`` live servers and every port is still free; else none."""
    addresses = before.get("region_server_rpc")
    if not isinstance(addresses, dict) or len(addresses) != count:
        return []
    ports = [int(m[1]) for a in addresses.values() if (m := re.search(r":(\d+)$", str(a)))]
    return ports if len(ports) == count and all(_free(p) for p in ports) else []


def _first_free_parent(zookeeper: str, candidates: list[str]) -> str | None:
    """The first of ``candidates`` whose ``master`` znode no live session holds."""
    client = KazooClient(hosts=zookeeper, timeout=ZK_CONNECT_TIMEOUT)
    try:
        client.start(timeout=ZK_CONNECT_TIMEOUT)
    except KazooTimeoutError:
        client.close()
        raise EmbeddedStackError(f"ZooKeeper {zookeeper} does not answer within "
                                 f"{ZK_CONNECT_TIMEOUT:g} s: is it running?") from None
    try:
        for parent in candidates:
            stat = client.exists(f"{parent}/master")
            if stat is None or not stat.ephemeralOwner:
                return parent
        return None
    finally:
        client.stop()
        client.close()


def znode_parent(zookeeper: str | None, name: str, before: dict[str, Any]) -> str:
    """The parent znode when none is given: the earlier start's on the same ZooKeeper;
    else ``/hbase`` unless a live master holds it, then ``/hbase-<name>`` (then
    ``/hbase-<name>-2``, ...)."""
    if before.get("znode_parent") and before.get("zookeeper") == zookeeper:
        return str(before["znode_parent"])
    if not zookeeper:
        return DEFAULT_PARENT
    candidates = [DEFAULT_PARENT, f"/hbase-{name}", *(f"/hbase-{name}-{i}" for i in range(2, 10))]
    found = _first_free_parent(zookeeper, candidates)
    if found is not None:
        return found
    raise EmbeddedStackError(f"ZooKeeper {zookeeper}: every parent znode tried "
                             f"({', '.join(candidates)}) has a live master; give --znode-parent")
