"""``hbase-migrate minicluster``: start the embedded cluster in the foreground, and operate a
running one (roll, flush, move, kill, restart, service, webhdfs-latency, finish-split, clean,
replication, bulk-load, info) through the admin endpoint named in its ``cluster.json``."""

from __future__ import annotations

import json
import random
import signal
import threading
from pathlib import Path
from typing import Any

import click

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.errors import ConfigError
from hbase_migrate.timeutil import parse_duration
from hbase_migrate.wal.writer import VALUE_COMPRESSIONS, WalOptions
from minihbase import start_defaults
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from stackprocs.admin_client import call_admin

WAL_COMPRESSION = {
    "none": WalOptions(),
    "dict": WalOptions(compression=True, tag_compression=False),
    "dict+tags": WalOptions(compression=True, tag_compression=True),
    # dict+tags+gz, dict+tags+snappy, ...: value compression with each algorithm
    **{f"dict+tags+{name.lower()}": WalOptions(compression=True, tag_compression=True,
                                               value_compression=name)
       for name in VALUE_COMPRESSIONS if name != "NONE"},
}


def _seconds(value: str, name: str) -> float:
    try:
        return parse_duration(value, name=name) / 1000
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from exc


@click.group()
def minicluster() -> None:
    """Run and operate the embedded HBase-compatible cluster (embedded stack)."""


@minicluster.command()
@click.option("--name", default="minihbase", show_default=True, help="Cluster name.")
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/minicluster"), show_default=True,
              help="Data folder (created when missing); a restart on it finds all data again.")
@click.option("--thrift-port", type=click.IntRange(0, 65535), default=None,
              help="Thrift1 gateway port on 127.0.0.1; 0 picks a free one. Default: the one in "
                   "DIR/cluster.json on a restart (when still free), else a free one.")
@click.option("--thrift2-port", type=click.IntRange(0, 65535), default=None,
              help="Thrift2 gateway port on 127.0.0.1; 0 picks a free one. Default: the one in "
                   "DIR/cluster.json on a restart (when still free), else a free one.")
@click.option("--transport", type=click.Choice(["buffered", "framed"]), default="buffered",
              show_default=True, help="Thrift transport of both gateways (HBase's -f).")
@click.option("--protocol", type=click.Choice(["binary", "compact"]), default="binary",
              show_default=True, help="Thrift protocol of both gateways (HBase's -c).")
@click.option("--zookeeper", metavar="HOST:PORT", default=None,
              help="ZooKeeper quorum to register with, as HBase does.")
@click.option("--zookeeper-session-timeout", "zk_session_timeout", default="30s",
              show_default=True, help="How long the master's and region servers' znodes "
              "outlive a kill (zookeeper.session.timeout; the quorum bounds it, 4s-40s on "
              "a default ZooKeeper).")
@click.option("--znode-parent", default=None,
              help="Parent znode (zookeeper.znode.parent). Default: the one in "
                   "DIR/cluster.json on a restart, else /hbase, or /hbase-NAME when another "
                   "cluster's master holds /hbase on that ZooKeeper.")
@click.option("--region-servers", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Simulated region servers, each with its own WAL.")
@click.option("--roll-size", type=click.IntRange(min=1), default=64 * 1024 * 1024,
              show_default=True, help="Roll a WAL once it holds this many bytes.")
@click.option("--roll-period", default="1h", show_default=True,
              help="Roll every WAL at least this often (30s, 500ms, 1h; bare number = ms).")
@click.option("--archive-ttl", default="10m", show_default=True,
              help="The log cleaner deletes archived WALs this long after archiving.")
@click.option("--cleaner-interval", default="10s", show_default=True,
              help="How often the log cleaner runs.")
@click.option("--split-delay", default="10s", show_default=True,
              help="A dead server's -splitting WALs are archived after this long.")
@click.option("--wal-compression", type=click.Choice(list(WAL_COMPRESSION)), default="none",
              show_default=True, help="WAL dictionary compression, with tag compression, "
              "with value compression by one of HBase's algorithms.")
@click.option("--replication-peer", metavar="ID", default=None,
              help="Register a replication peer and keep per-server WAL queues.")
@click.option("--webhdfs-port", type=click.IntRange(0, 65535), default=None,
              help="WebHDFS port on 127.0.0.1; 0 picks a free one. Default: the one in "
                   "DIR/cluster.json on a restart (when still free), else a free one.")
@click.option("--admin-port", type=click.IntRange(0, 65535), default=None,
              help="Admin endpoint port on 127.0.0.1; 0 picks a free one. Default: the one in "
                   "DIR/cluster.json on a restart (when still free), else a free one.")
@click.option("--master-rpc-port", type=click.IntRange(0, 65535), default=None,
              help="The master's RPC port (HBase's own protocol) on 127.0.0.1; 0 picks a free "
                   "one. Default: the one in DIR/cluster.json on a restart (when still free), "
                   "else a free one.")
@click.option("--rpc-ports", metavar="PORT,PORT,...", default=None,
              help="The region servers' RPC ports, one per region server. Default: those in "
                   "DIR/cluster.json on a restart (when all still free), else free ones.")
def start(name: str, data_dir: Path, thrift_port: int | None, thrift2_port: int | None,
          transport: str, protocol: str, zookeeper: str | None, zk_session_timeout: str,
          znode_parent: str | None,
          region_servers: int, roll_size: int, roll_period: str, archive_ttl: str,
          cleaner_interval: str, split_delay: str, wal_compression: str,
          replication_peer: str | None, webhdfs_port: int | None,
          admin_port: int | None, master_rpc_port: int | None,
          rpc_ports: str | None) -> None:
    """Start the cluster and run until SIGTERM or SIGINT.

    When ready, prints one JSON line and writes the same to DIR/cluster.json:
    {"name", "thrift", "thrift2", "transport", "protocol", "webhdfs", "zookeeper",
    "znode_parent", "hbase_root", "hbase_root_dir", "admin", "region_servers", "pid", "dir",
    "master_rpc", "region_server_rpc"}
    """
    wal = WalSettings(
        region_servers=region_servers, roll_size=roll_size,
        roll_period=_seconds(roll_period, "--roll-period"),
        archive_ttl=_seconds(archive_ttl, "--archive-ttl"),
        cleaner_interval=_seconds(cleaner_interval, "--cleaner-interval"),
        split_delay=_seconds(split_delay, "--split-delay"),
        options=WAL_COMPRESSION[wal_compression])
    before = start_defaults.remembered(data_dir)
    given = {"thrift_port": thrift_port, "thrift2_port": thrift2_port,
             "webhdfs_port": webhdfs_port, "admin_port": admin_port,
             "master_rpc_port": master_rpc_port}
    servers_rpc = _rpc_ports(rpc_ports, region_servers) if rpc_ports else \
        start_defaults.remembered_rpc_ports(before, region_servers)
    ports = {**start_defaults.remembered_ports(before),
             **{k: v for k, v in given.items() if v is not None}}
    parent = znode_parent or start_defaults.znode_parent(zookeeper, name, before)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with MiniHBase(data_dir, name, ports.get("thrift_port", 0), ports.get("thrift2_port", 0),
                   transport, protocol, zookeeper, wal=wal, replication_peer=replication_peer,
                   znode_parent=parent, webhdfs_port=ports.get("webhdfs_port", 0),
                   admin_port=ports.get("admin_port", 0),
                   master_rpc_port=ports.get("master_rpc_port", 0),
                   rpc_ports=servers_rpc,
                   zk_session_timeout=_seconds(zk_session_timeout,
                                               "--zookeeper-session-timeout")) as cluster:
        cluster.write_cluster_json()
        click.echo(json.dumps(cluster.describe()))
        while not stop.wait(0.5):
            pass


def _rpc_ports(text: str, count: int) -> list[int]:
    """``--rpc-ports``: one port (0: a free one) per region server."""
    try:
        ports = [int(p) for p in text.split(",")]
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected port numbers separated by commas",
                                 param_hint="--rpc-ports") from None
    if len(ports) != count or not all(0 <= p <= 65535 for p in ports):
        raise click.BadParameter(f"{text!r}: expected {count} ports (one per region server) "
                                 "from 0 to 65535", param_hint="--rpc-ports")
    return ports


# --- operations on a running cluster ------------------------------------------------------

# No exists=True: a missing or unreadable file is one error line from call_admin.
CLUSTER = click.option("--cluster", "cluster_json", required=True,
                       type=click.Path(path_type=Path),
                       help="The cluster.json of the running minicluster.")


# Seconds to wait for an admin call: a flush of a few hundred MB of memstore or a roll on a
# busy disk can take minutes; `info` answers at once.
def _run(cluster_json: Path, op: str, args: dict[str, Any] | None = None) -> None:
    click.echo(json.dumps(call_admin(cluster_json, op, args)))


@minicluster.command()
@CLUSTER
def info(cluster_json: Path) -> None:
    """Servers, their WALs and regions, -splitting directories, counters (JSON)."""
    _run(cluster_json, "info")


@minicluster.command()
@CLUSTER
@click.option("--server", default=None, help="Server name or slot (default: every server).")
def roll(cluster_json: Path, server: str | None) -> None:
    """Roll WALs now; prints the archived file names."""
    _run(cluster_json, "roll", {"server": server})


@minicluster.command()
@CLUSTER
@click.option("--table", default=None)
@click.option("--region", default=None, help="Encoded region name.")
def flush(cluster_json: Path, table: str | None, region: str | None) -> None:
    """Flush regions (all, a table's, or one): FLUSH markers in their WALs."""
    _run(cluster_json, "flush", {"table": table, "region": region})


@minicluster.command()
@CLUSTER
@click.argument("region")
@click.option("--server", default=None, help="Target server name or slot (default: another).")
def move(cluster_json: Path, region: str, server: str | None) -> None:
    """Move REGION (encoded name) to another server."""
    _run(cluster_json, "move", {"region": region, "server": server})


@minicluster.command()
@CLUSTER
@click.argument("server")
def kill(cluster_json: Path, server: str) -> None:
    """Crash SERVER (name or slot): WALs to -splitting, regions reassigned."""
    _run(cluster_json, "kill", {"server": server})


@minicluster.command()
@CLUSTER
@click.argument("server")
def restart(cluster_json: Path, server: str) -> None:
    """Start a killed SERVER (slot) again under a new start code; regions come by moves."""
    _run(cluster_json, "restart", {"server": server})


@minicluster.command()
@CLUSTER
@click.argument("name", type=click.Choice(["thrift", "thrift2", "webhdfs", "rpc"]))
@click.argument("state", type=click.Choice(["stop", "start"]))
def service(cluster_json: Path, name: str, state: str) -> None:
    """Stop or start one front door (an outage; the data stays, on the same port; rpc: the
    master's and every region server's RPC port)."""
    _run(cluster_json, "service", {"name": name, "running": state == "start"})


@minicluster.command("webhdfs-latency")
@CLUSTER
@click.argument("seconds", type=click.FloatRange(0, 60))
def webhdfs_latency(cluster_json: Path, seconds: float) -> None:
    """Delay every WebHDFS request by SECONDS (a slow NameNode; 0 ends it)."""
    _run(cluster_json, "webhdfs-latency", {"seconds": seconds})


@minicluster.command("finish-split")
@CLUSTER
@click.option("--server", default=None, help="Dead server name (default: all).")
def finish_split(cluster_json: Path, server: str | None) -> None:
    """Archive the WALs of dead servers' -splitting directories now."""
    _run(cluster_json, "finish-split", {"server": server})


@minicluster.command()
@CLUSTER
def clean(cluster_json: Path) -> None:
    """Run the log cleaner now; prints the deleted archived WALs."""
    _run(cluster_json, "clean")


@minicluster.command()
@CLUSTER
@click.argument("state", type=click.Choice(["enable", "disable"]))
def replication(cluster_json: Path, state: str) -> None:
    """Enable or disable the replication peer (a disabled peer pins its queued WALs)."""
    _run(cluster_json, "replication", {"enabled": state == "enable"})


def _generated_cells(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"row": f"bulk-{rng.randrange(10**6):06d}", "family": "d",
             "qualifier": f"q{rng.randrange(4)}", "timestamp": 1_000_000 + i,
             "value": to_string_binary(rng.randbytes(8))} for i in range(count)]


@minicluster.command("bulk-load")
@CLUSTER
@click.option("--table", required=True)
@click.option("--cells", "cells_file", type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path), default=None,
              help="JSON Lines of {row, family, qualifier, timestamp?, value} "
                   "(Bytes.toStringBinary strings).")
@click.option("--generate", type=click.IntRange(min=1), default=None,
              help="Instead of --cells: N seeded cells in family d, rows bulk-NNNNNN.")
@click.option("--seed", type=int, default=0, show_default=True)
def bulk_load(cluster_json: Path, table: str, cells_file: Path | None, generate: int | None,
              seed: int) -> None:
    """Load cells without WAL entries: one BULK_LOAD marker per region."""
    if (cells_file is None) == (generate is None):
        raise click.UsageError("give exactly one of --cells and --generate")
    if cells_file is not None:
        lines = cells_file.read_text(encoding="utf-8").splitlines()
        cells = [json.loads(line) for line in lines if line.strip()]
    else:
        cells = _generated_cells(generate or 0, seed)
    _run(cluster_json, "bulk-load", {"table": table, "cells": cells})
