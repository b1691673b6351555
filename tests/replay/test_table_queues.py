"""HBase 3.0's replication queues in the table ``hbase:replication``, laid out as
``TableReplicationQueueStorage`` writes them (a row per queue ``<peer>-<server>``, family
``queue``, a column per WAL group holding ``<wal>:<offset>``), read by the WAL-retention
guard: a disabled peer with a queue on every live server pins the WALs, as on 2.x with the
queues in ZooKeeper; the coverage check gets the first file each group still needs."""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.zk.zookeeper import QUEUES_IN_TABLE
from hbase_migrate.hbase.connect import connect
from hbase_migrate.replay.retention import PINNED, TTL, assess, read_replication
from hbase_migrate.replay.table_queues import (
    QUEUE_TABLE,
    GroupOffset,
    parse_group_offset,
    parse_queue_id,
    should_replicate,
)
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

WAL = "localhost%2C16020%2C1700000000000.1700000100000"


def test_queue_ids_and_offsets_parse_as_hbase_writes_them() -> None:
    assert parse_queue_id("2-rs1,16020,17") == ("2", "rs1,16020,17", "rs1,16020,17")
    assert parse_queue_id("2-rs1,16020,17/rs9,16020,5") == ("2", "rs1,16020,17",
                                                           "rs9,16020,5")
    assert parse_group_offset(f"{WAL}:1234") == GroupOffset(WAL, 1234)
    assert parse_group_offset(":0").begin  # ReplicationGroupOffset.BEGIN
    with pytest.raises(ValueError, match="no queue id"):
        parse_queue_id("no-dash-server".replace("-", ""))


def test_what_a_queue_still_needs_follows_the_log_cleaner() -> None:
    """ReplicationOffsetUtil.shouldReplicate: earlier files of the group go, later stay; the
    offset's own file stays unless shipped whole (negative offset); BEGIN keeps all."""
    before, after = WAL.replace("1700000100000", "1700000000001"), \
        WAL.replace("1700000100000", "1700000200000")
    at = GroupOffset(WAL, 10)
    assert [should_replicate(at, w) for w in (before, WAL, after)] == [False, True, True]
    shipped = GroupOffset(WAL, -1)
    assert [should_replicate(shipped, w) for w in (before, WAL, after)] == [False, False, True]
    assert should_replicate(GroupOffset("", 0), before) and should_replicate(None, before)


@pytest.fixture
def cluster(make_embedded: EmbeddedClusters) -> MiniHBase:
    """A cluster registered in the session's ZooKeeper, where its queues are kept."""
    return make_embedded("three", over="native", wal=WalSettings(region_servers=2))


def queue_rows(servers: list[str], peer: str) -> list[Cell]:
    """A queue per server, its WAL group at that server's WAL ``.1700000100000``."""
    cells = []
    for server in servers:
        group = server.replace(",", "%2C")
        cells.append(Cell(f"{peer}-{server}".encode(), b"queue", group.encode(), 1,
                          CellType.PUT, f"{group}.1700000100000:77".encode()))
    return cells


def test_the_retention_guard_reads_queues_in_hbase_replication(cluster: MiniHBase) -> None:
    assert cluster.master is not None and cluster.region_servers is not None
    cluster.master.add_replication_peer("1", "peer-zk:2181:/hbase", enabled=False)
    servers = [str(s.name) for s in cluster.region_servers.live_servers()]
    endpoints = cluster.endpoints
    with connect(endpoints) as client:
        client.create_table(TableDescriptor(QUEUE_TABLE, (
            FamilyDescriptor(b"hfileref"), FamilyDescriptor(b"queue"),
            FamilyDescriptor(b"sid"))))
        client.write_cells(QUEUE_TABLE, queue_rows(servers[:1], "1"))
    view = read_replication(endpoints)
    assert view is not None and view.queues_location == QUEUES_IN_TABLE
    assert view.pinning_peer() is None  # one live server has no queue: the cleaner may go
    assert assess(view, 600_000, None).kind == TTL
    with connect(endpoints) as client:
        client.write_cells(QUEUE_TABLE, queue_rows(servers[1:], "1"))
    view = read_replication(endpoints)
    assert view is not None and view.pinning_peer() == "1"
    assert assess(view, 600_000, None).kind == PINNED
    first = servers[0].replace(",", "%2C") + ".1700000100000"
    assert view.queued_names()[servers[0]] == {first}
