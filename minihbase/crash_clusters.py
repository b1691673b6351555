"""The crash harness's two clusters: the embedded stack's (ZooKeeper, a source with three
region servers writing real WAL files, a target), or a real HBase pair (``soak-crash
--stack real``: two realstack JVMs of HBase 2.6.1, each with its mini HDFS, ZooKeeper and
Thrift gateways, the source's WAL files on HDFS and read over WebHDFS).

What the harness needs of either: both clusters' endpoints, the source's ``cluster.json``
(its admin endpoint rolls the WALs), the folder or ``webhdfs://`` URL its WAL folders are
read under for the invariants, and the client the end's cell-by-cell judge reads with (not
the transport the migration used on the embedded stack; HBase's own client on the real)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.timeutil import parse_duration
from minihbase.soak import ROLL_PERIOD, SOURCE_ARGS
from minihbase.stack import EmbeddedStack
from realstack.hbase import DEFAULT_VERSION, RealHBase, RealHBaseOptions, has_gateways

STACKS = ("embedded", "real")
Say = Callable[[str], None]


@dataclass
class CrashClusters:
    source: ClusterEndpoints
    target: ClusterEndpoints
    source_json: Path  # the source's cluster.json: its admin endpoint rolls the WALs
    wal_root: Path | str  # the source's HBase root: a local folder or a webhdfs:// URL
    judge_client: str  # the client the end's judge reads both clusters with
    close: Callable[[], None]  # stops both clusters (again: nothing)

    def judged(self) -> tuple[ClusterEndpoints, ClusterEndpoints]:
        return (replace(self.source, client=self.judge_client),
                replace(self.target, client=self.judge_client))


def start_clusters(kind: str, root: Path, exits: ExitStack, say: Say) -> CrashClusters:
    """Both clusters of ``kind`` started under ``root``, stopped when ``exits`` closes."""
    if kind == "real":
        return _real_pair(root, exits, say)
    embedded = exits.enter_context(EmbeddedStack(root))
    embedded.start_zookeeper()
    source = embedded.start_cluster("source", SOURCE_ARGS)
    target = embedded.start_cluster("target")
    source_json = root / "source" / "cluster.json"
    return CrashClusters(source, target, source_json, source_json.parent / "hbase", "thrift",
                         embedded.close)


def _real_pair(root: Path, exits: ExitStack, say: Say) -> CrashClusters:
    """Two real HBase clusters, one JVM each: the source with two region servers rolling
    their (dictionary-compressed) WALs as the embedded source does, the target with one."""
    gateways = has_gateways(DEFAULT_VERSION)
    source_options = RealHBaseOptions(
        name="source", region_servers=2, wal_compression="dict+tags",
        roll_period_ms=parse_duration(ROLL_PERIOD), heap="1g", gateways=gateways)
    target_options = RealHBaseOptions(name="target", region_servers=1, heap="1g",
                                      gateways=gateways)
    stacks = [RealHBase(root / "source", source_options), RealHBase(root / "target",
                                                                    target_options)]
    for stack in stacks:
        exits.callback(stack.stop)
        stack.start()
        say(f"real HBase {DEFAULT_VERSION} {stack.cluster_json.parent.name} started")
    source, target = (load_cluster_json(stack.cluster_json) for stack in stacks)
    if source.webhdfs is None or source.hbase_root is None:
        raise RuntimeError(f"{stacks[0].cluster_json}: no webhdfs or hbase_root to read the "
                           "source's WAL files from")
    wal_root = f"webhdfs://{urlsplit(source.webhdfs).netloc}{source.hbase_root}"

    def close() -> None:
        for stack in stacks:
            stack.stop()

    return CrashClusters(source, target, stacks[0].cluster_json, wal_root, "native", close)
