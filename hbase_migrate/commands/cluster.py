"""``hbase-migrate cluster info``: a cluster's live region servers, master, cluster id,
replication peers and queues (ZooKeeper) and WAL files per server (its WAL store), as
tables in a terminal or stable JSON.

On HBase 3.x the replication queues live in the table ``hbase:replication``: they are read
there (each WAL group's current file and offset: the table keeps no list of files), also for
a cluster given by ``hbase+rpc://`` alone; its peers stay in the peer storage (ZooKeeper by
default), which only a ``zookeeper`` beside the URI shows. JSON
shape (times in ms since the epoch, ``null`` when a part is not configured)::

    {"name", "side", "now", "client": "native"|"thrift",
     "zookeeper": null | {"quorum", "znode_parent", "cluster_id", "master",
                          "live_servers": [str],
                          "replication": {"peers": [{"id", "cluster_key", "state",
                                                     "tables"}],
                                          "queues_location", "queues_error": null|str,
                                          "queues": [{"server",
                                          "queue_id", "peer_id", "recovered",
                                          "dead_servers", "wals": {name: offset}}]}},
     "replication": null | {"major", "queues_location", "queues": null | [as above],
                            "queues_error"} (a cluster given by hbase+rpc://
                            alone: HBase 3.x's queues read from hbase:replication over RPC;
                            2.x keeps them, and the peers, in ZooKeeper),
     "registry": null | {"kind": "rpc"|"zookeeper", "answered_by", "cluster_id", "master",
                         "meta_server", "error"} (native clusters: who told where meta and
                         the master are; the rpc one is asked now),
     "retention": null | {"kind": "pinned"|"ttl"|"at-risk", "archive_ttl", "interval",
                          "peer", "detail"} (source side: are archived WALs kept for replay?),
     "wal_store": null | {"location", "files", "bytes",
                          "servers": [{"server", "files": [{"name", "state", "size",
                                       "mtime", "age", "path"}]}]},
     "status": null | {"error"} | the master's cluster status, asked over HBase's own RPC
               for a cluster whose client is native (``rpc.status.ClusterStatus.to_json``:
               version, masters, live servers with their regions, dead servers),
     "connection": {"transport": "native"|"thrift", "observed": bool, "server",
                    "tls": null | {"version", "cipher", "hostname_verified"},
                    "sasl": "SIMPLE"|"GSSAPI"|..., "protection": null | "authentication"|
                    "integrity"|"privacy"} (native: as negotiated on the connection to the
                    active master, null when none answered; thrift: the gateway's settings,
                    "observed": false)}
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.walstore import WalStore

if TYPE_CHECKING:
    from rich.console import Console

    from hbase_migrate.hbase import Cluster


# Where a cluster given by hbase+rpc:// alone keeps what only ZooKeeper can show, by version
# (HBase 3's ReplicationStorageFactory: queues in a table, peers in the peer storage).
ADD_ZOOKEEPER = "add zookeeper = \"host:2181\" beside the hbase+rpc:// uri to see them"
KEPT_BY_2X = "HBase 2.x keeps replication peers and queues in ZooKeeper"
KEPT_BY_3X = ("replication queues are kept in the table hbase:replication (read over HBase's "
              "RPC), replication peers in the peer storage: ZooKeeper unless "
              "hbase.replication.peer.storage.impl = filesystem (files under the HBase root)")

# The gateways' SASL QOP (hbase.thrift.security.qop) by hbase.rpc.protection's names.
THRIFT_QOPS = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}


@click.group()
def cluster() -> None:
    """Inspect a cluster: servers, master, replication, WAL files."""


@cluster.command()
@click.option("--config", "config", required=True, metavar="M.toml",
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="The migration config naming the clusters.")
@click.option("--side", type=click.Choice(["source", "target"]), default="source",
              show_default=True, help="Which cluster of the migration.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (sorted keys).")
def info(config: Path, side: str, as_json: bool) -> None:
    """Show live region servers, master, cluster id, replication and WAL files."""
    from hbase_migrate.audit.ledger import now_ms
    from hbase_migrate.compiled import summary
    from hbase_migrate.config import load_config
    from hbase_migrate.errors import ConfigError
    from hbase_migrate.hbase import open_cluster
    from hbase_migrate.replay.discovery import open_wal_store
    from hbase_migrate.replay.retention import assess, read_replication

    migration = load_config(config)
    spec = getattr(migration, side)
    handle = open_cluster(spec)
    endpoints = handle.endpoints
    now = now_ms()
    report: dict[str, Any] = {"name": endpoints.name, "side": side, "now": now,
                              "client": endpoints.client,
                              "zookeeper": zookeeper_info(endpoints), "wal_store": None,
                              "retention": None}
    if side == "source":
        retention = assess(read_replication(endpoints), migration.replay.archive_ttl, None)
        report["retention"] = retention.to_json()
    try:
        store = open_wal_store(spec)
    except ConfigError:
        store = None
    if store is not None:
        location = endpoints.webhdfs or str(getattr(store, "hbase_root", ""))
        report["wal_store"] = wal_info(store, location, now)
    report["registry"] = registry_info(handle)
    report["status"] = status_info(handle)
    report["replication"] = replication_without_zookeeper(endpoints, report["status"])
    report["connection"] = connection_info(handle, report["status"])
    report["hot_paths"] = summary()  # this install's WAL and HFile readers, digests
    if as_json:
        click.echo(json.dumps(report, sort_keys=True, indent=2))
    else:
        render(report)


def zookeeper_info(endpoints: ClusterEndpoints) -> dict[str, Any] | None:
    """The ZooKeeper part, None when the cluster names no quorum."""
    if not endpoints.zookeeper:
        return None
    from hbase_migrate.cluster.zk.zookeeper import (
        QUEUES_IN_TABLE,
        QUEUES_IN_ZOOKEEPER,
        HBaseZooKeeper,
    )
    from hbase_migrate.errors import HBaseMigrateError

    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                        **endpoints.client_auth) as zk:
        master = zk.master()
        location = zk.queues_location()
        peers = [{"id": p.peer_id, "cluster_key": p.cluster_key,
                  "state": p.state.name.lower() if p.state is not None else None,
                  "tables": {cf.table: sorted(f.decode("utf-8", "replace") for f in cf.families)
                             for cf in p.table_cfs}}
                 for p in zk.replication_peers()]
        queues = [{"server": str(q.server), "queue_id": q.queue_id, "peer_id": q.peer_id,
                   "recovered": q.recovered, "dead_servers": [str(d) for d in q.dead_servers],
                   "wals": dict(sorted(q.wals.items()))}
                  for q in zk.replication_queues()] if location == QUEUES_IN_ZOOKEEPER \
            else []
        unread = None
        if location != QUEUES_IN_ZOOKEEPER and zk.meta_server() is None:
            unread = f"{QUEUES_IN_TABLE} unread: ZooKeeper names no server of hbase:meta"
        elif location != QUEUES_IN_ZOOKEEPER:
            try:
                queues = table_queues_info(endpoints)
            except (HBaseMigrateError, ValueError) as exc:
                unread = f"{QUEUES_IN_TABLE} unread: {exc}"
        return {"quorum": endpoints.zookeeper, "znode_parent": zk.znode_parent,
                "cluster_id": zk.cluster_id(), "master": str(master) if master else None,
                "live_servers": sorted(str(s) for s in zk.live_servers()),
                "replication": {"peers": peers, "queues_location": location,
                                "queues": queues, "queues_error": unread}}


def table_queues_info(endpoints: ClusterEndpoints) -> list[dict[str, Any]]:
    """HBase 3.0's queues from ``hbase:replication``, in the shape of the ZooKeeper ones:
    ``wals`` holds each WAL group's current file and offset (the table keeps no more); none
    before the table exists (the master creates it when the first peer is added)."""
    from hbase_migrate.hbase import open_cluster
    from hbase_migrate.replay.table_queues import QUEUE_FAMILY, QUEUE_TABLE, queues_from_rows

    with open_cluster(endpoints).client() as client:
        if not client.table_exists(QUEUE_TABLE):  # HBase 3 creates it with the first peer
            return []
        queues = queues_from_rows(client.scan(QUEUE_TABLE, columns=[(QUEUE_FAMILY, None)]))
    return [{"server": q.server, "queue_id": f"{q.peer_id}-{q.server}"
             + (f"/{q.source_server}" if q.recovered else ""), "peer_id": q.peer_id,
             "recovered": q.recovered, "dead_servers": [q.source_server] if q.recovered else [],
             "wals": dict(sorted((o.wal, o.offset) for o in q.offsets.values()))}
            for q in queues]


def major_version(status: dict[str, Any] | None) -> int | None:
    """The HBase major version the master's status gives (``3`` of ``3.0.0-alpha-4``)."""
    version = str((status or {}).get("version") or "")
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else None


def replication_without_zookeeper(endpoints: ClusterEndpoints, status: dict[str, Any] | None
                                  ) -> dict[str, Any] | None:
    """Replication as far as a cluster given by ``hbase+rpc://`` alone shows it (None for any
    other): on HBase 3.x the queues, read from ``hbase:replication`` over HBase's RPC; on
    2.x, or a version unknown, where they are kept (ZooKeeper), unread."""
    if endpoints.zookeeper or not endpoints.bootstrap:
        return None
    from hbase_migrate.cluster.zk.zookeeper import QUEUES_IN_TABLE, QUEUES_IN_ZOOKEEPER
    from hbase_migrate.errors import HBaseMigrateError

    major = major_version(status)
    found: dict[str, Any] = {"major": major, "queues": None,
                             "queues_error": None, "queues_location": QUEUES_IN_ZOOKEEPER}
    if major is None or major < 3:
        return found
    found["queues_location"] = QUEUES_IN_TABLE
    try:
        found["queues"] = table_queues_info(endpoints)
    except (HBaseMigrateError, ValueError) as exc:
        found["queues_error"] = f"{QUEUES_IN_TABLE} unread: {exc}"
    return found


def _handle(cluster: ClusterEndpoints | Cluster) -> Cluster:
    from hbase_migrate.hbase import Cluster, open_cluster

    return cluster if isinstance(cluster, Cluster) else open_cluster(cluster)


def status_info(cluster: ClusterEndpoints | Cluster, wait: float = 10.0
                ) -> dict[str, Any] | None:
    """The master's cluster status for a cluster whose client is native (None for
    others: the gateways' clusters keep what ZooKeeper says); ``{"error"}`` when no master
    answered within ``wait`` seconds."""
    return _handle(cluster).status(wait)


def registry_info(cluster: ClusterEndpoints | Cluster, wait: float = 10.0
                  ) -> dict[str, Any] | None:
    """Which registry tells where meta and the active master are, for a native cluster:
    HBase's RPC registry (``hbase+rpc://``: asked now, naming the server that answered) or
    ZooKeeper; None for a cluster reached through its gateways."""
    return _handle(cluster).registry_status(wait)


def connection_info(cluster: ClusterEndpoints | Cluster, status: dict[str, Any] | None
                    ) -> dict[str, Any] | None:
    """How the steps reach the cluster: over native RPC, the security negotiated with its
    active master (taken from ``status``; None when no master answered); over the gateways,
    their settings (not observed: ``cluster info`` opens no gateway connection)."""
    handle = _handle(cluster)
    endpoints = handle.endpoints
    if handle.transport == "native":
        if status is None or "connection" not in status:
            return None
        return {"transport": "native", "observed": True, **status.pop("connection")}
    security = endpoints.security
    kerberos = security is not None and security.kerberos
    return {"transport": "thrift", "observed": False,
            "server": endpoints.thrift2 or endpoints.thrift,
            "tls": None, "sasl": "GSSAPI" if kerberos else "SIMPLE",
            "protection": THRIFT_QOPS[security.qop] if security is not None and kerberos
            else None}


def wal_info(store: WalStore, location: str, now: int) -> dict[str, Any]:
    """The WAL files per server, oldest first."""
    by_server: dict[str, list[dict[str, Any]]] = defaultdict(list)
    files = store.list_wal_files()
    for f in sorted(files, key=lambda f: (f.timestamp or 0, f.name)):
        by_server[f.server or "unknown"].append(
            {"name": f.name, "state": f.state, "size": f.size, "mtime": f.mtime_ms,
             "created": f.timestamp, "age": None if f.timestamp is None else now - f.timestamp,
             "path": f.path})
    return {"location": location, "files": len(files), "bytes": sum(f.size for f in files),
            "servers": [{"server": s, "files": by_server[s]} for s in sorted(by_server)]}


def render(report: dict[str, Any], console: Console | None = None) -> None:
    """The report as tables for a terminal."""
    from rich.console import Console

    console = console or Console()
    over = ("HBase's own RPC" if report.get("client") == "native"
            else "the Thrift gateways")
    console.print(f"[bold]{report['name']}[/bold] ({report['side']} cluster, over {over})")
    registry = report.get("registry")
    if registry is not None:
        console.print(describe_registry(registry), highlight=False)
    zk = report["zookeeper"]
    if zk is None and report.get("replication") is not None:
        _render_without_zookeeper(console, report["replication"])
    elif zk is None:
        console.print("no ZooKeeper quorum configured: servers and replication unknown")
    else:
        _render_zookeeper(console, zk)
    store = report["wal_store"]
    if store is None:
        console.print("no WAL storage configured (webhdfs or a local hbase_root)")
    else:
        _render_wals(console, store)
    retention = report.get("retention")
    if retention is not None:
        verdict = {"pinned": "guaranteed (pinned)", "at-risk": "AT RISK"}.get(
            retention["kind"], "kept for the archive TTL only")
        console.print(f"archived WAL retention: {verdict}: {retention['detail']}",
                      highlight=False)
    connection = report.get("connection")
    if connection is not None:
        console.print(describe_connection(connection), highlight=False)
    status = report.get("status")
    if status is not None:
        _render_status(console, status)
    if report.get("hot_paths"):
        console.print(f"this install's {report['hot_paths']}", highlight=False)


def describe_registry(registry: dict[str, Any]) -> str:
    """One line: which registry answered, and what it said."""
    if registry["kind"] == "zookeeper":
        return f"registry: ZooKeeper {registry['answered_by']}"
    if registry.get("error"):
        return f"registry: HBase's RPC registry did not answer: {registry['error']}"
    return (f"registry: HBase's RPC registry (ClientMetaService), answered by "
            f"{registry['answered_by']}: cluster id {registry['cluster_id']}, master "
            f"{registry['master']}, hbase:meta on {registry['meta_server']}")


def describe_connection(connection: dict[str, Any]) -> str:
    """One line: the transport, TLS and SASL of a cluster's connection."""
    tls = connection["tls"]
    if tls is None:
        tls_text = "TLS off"
    else:
        checked = "server name verified" if tls["hostname_verified"] else \
            "server name NOT verified"
        tls_text = f"TLS on ({tls['version']}, {tls['cipher']}, {checked})"
    sasl = f"SASL {connection['sasl']}"
    if connection["protection"]:
        sasl += f" at {connection['protection']}"
    how = "negotiated with" if connection["observed"] else "configured for"
    return (f"connection: {connection['transport']}, {tls_text}, {sasl} ({how} "
            f"{connection['server']})")


def _render_status(console: Console, status: dict[str, Any]) -> None:
    from hbase_migrate.commands.tables import table

    if "error" in status:
        console.print(f"cluster status: {status['error']}", highlight=False)
        return
    backups = ", ".join(status["backup_masters"]) or "none"
    console.print(f"HBase {status['version']}, master {status['master'] or 'none'} (backup "
                  f"masters: {backups}), {status['regions']} regions, "
                  f"{status['regions_in_transition']} in transition", highlight=False)
    servers = table("region server", "regions", "requests", "heap MB",
                    title=f"{len(status['live_servers'])} live servers (master's view)")
    for s in status["live_servers"]:
        servers.add_row(s["server"], str(s["regions"]), str(s["requests"]),
                        f"{s['used_heap_mb']}/{s['max_heap_mb']}")
    console.print(servers)
    if status["dead_servers"]:
        console.print(f"dead servers: {', '.join(status['dead_servers'])}", highlight=False)


def _render_zookeeper(console: Console, zk: dict[str, Any]) -> None:
    from hbase_migrate.commands.tables import table

    console.print(f"ZooKeeper {zk['quorum']} {zk['znode_parent']}: cluster id "
                  f"{zk['cluster_id'] or '-'}, master {zk['master'] or 'none'}",
                  highlight=False)
    servers = table("live region server", title=f"{len(zk['live_servers'])} live servers")
    for name in zk["live_servers"]:
        servers.add_row(name)
    console.print(servers)
    replication = zk["replication"]
    peers = table("peer", "cluster key", "state", "tables", title="replication peers")
    for p in replication["peers"]:
        tables = ", ".join(t + (f" ({','.join(f)})" if f else "")
                           for t, f in sorted(p["tables"].items())) or "all"
        peers.add_row(p["id"], p["cluster_key"], p["state"] or "-", tables)
    console.print(peers)
    _render_queues(console, replication)


def _render_without_zookeeper(console: Console, replication: dict[str, Any]) -> None:
    """What a cluster given by ``hbase+rpc://`` alone shows of replication, by its version."""
    major = replication["major"]
    if major is not None and major >= 3:
        console.print(f"no ZooKeeper: on HBase {major}.x {KEPT_BY_3X}: {ADD_ZOOKEEPER}",
                      highlight=False)
        _render_queues(console, replication)
    elif major is not None:
        console.print(f"no ZooKeeper: {KEPT_BY_2X} (HBase {major}.x here; live servers: "
                      f"the master's status): {ADD_ZOOKEEPER}", highlight=False)
    else:
        console.print(f"no ZooKeeper, and no master said which HBase this is: {KEPT_BY_2X}; "
                      f"on HBase 3.x {KEPT_BY_3X}: {ADD_ZOOKEEPER}", highlight=False)


def _render_queues(console: Console, replication: dict[str, Any]) -> None:
    from hbase_migrate.commands.tables import table

    where = replication["queues_location"]
    if replication.get("queues_error"):
        console.print(f"replication queues: {replication['queues_error']}", highlight=False)
        return
    queues = table("server", "queue", "peer", "WAL", "shipped offset",
                   title="replication queues" + ("" if where == "zookeeper" else
                                                 f" (the {where}, HBase 3.x: each WAL "
                                                 "group's current file)"))
    for q in replication["queues"]:
        for wal, offset in q["wals"].items() or [("-", None)]:
            queues.add_row(q["server"], q["queue_id"], q["peer_id"], wal,
                           "-" if offset is None else str(offset))
    console.print(queues)


def _render_wals(console: Console, store: dict[str, Any]) -> None:
    from hbase_migrate.commands.tables import table

    files = table("server", "WAL file", "state", "size", "age",
                  title=f"{store['files']} WAL files, {store['bytes']} bytes "
                        f"({store['location']})")
    for server in store["servers"]:
        for f in server["files"]:
            age = "-" if f["age"] is None else _age(f["age"])
            files.add_row(server["server"], f["name"], f["state"], str(f["size"]), age)
    console.print(files)


def _age(ms: int) -> str:
    """``2d3h``, ``1h5m``, ``4m10s``, ``12s``: the two largest units."""
    seconds = max(0, ms) // 1000
    parts = [(seconds // 86400, "d"), (seconds // 3600 % 24, "h"), (seconds // 60 % 60, "m"),
             (seconds % 60, "s")]
    while len(parts) > 1 and parts[0][0] == 0:
        parts.pop(0)
    return "".join(f"{n}{unit}" for n, unit in parts[:2])
