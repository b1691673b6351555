"""Replication queues kept in the table ``hbase:replication`` (HBase 3.0's default queue
storage, ``TableReplicationQueueStorage``; ``hbase.replication.queue.table.name``).

One row per queue, its key the queue id (``ReplicationQueueId.toString``)::

    <peer id>-<server name>[/<server the WALs belong to>]    (the part after '/': a
                                                              recovered queue, claimed)

and in family ``queue`` one column per WAL group (``getWALPrefixFromWALName``), whose value
is the group's offset (``ReplicationGroupOffset.toString``): ``<WAL name>:<offset>``, the
file replication reads now and the position in it; ``:0`` (no file) is ``BEGIN``, nothing
shipped yet; a negative offset means that file was shipped whole. The table holds no list of
files: every file of the group from the offset's file on is still needed
(``ReplicationOffsetUtil.shouldReplicate``), which is what HBase's log cleaner keeps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.names import name_timestamp

QUEUE_TABLE = "hbase:replication"  # hbase.replication.queue.table.name's default
QUEUE_FAMILY = b"queue"


class GroupOffset(NamedTuple):
    wal: str  # "" for BEGIN
    offset: int

    @property
    def begin(self) -> bool:
        return not self.wal


class TableQueue(NamedTuple):
    """One queue: the server holding it, its peer, the server whose WALs it ships (the same
    unless recovered), and the offset of each WAL group."""

    server: str
    peer_id: str
    source_server: str
    offsets: dict[str, GroupOffset]

    @property
    def recovered(self) -> bool:
        return self.source_server != self.server

    def oldest_needed(self) -> tuple[str, ...]:
        """Per group, the first file still to ship (none for a group at BEGIN, which needs
        all of its files, or whose file was shipped whole)."""
        return tuple(sorted(o.wal for o in self.offsets.values()
                            if not o.begin and o.offset >= 0))


def parse_queue_id(text: str) -> tuple[str, str, str]:
    """``(peer id, server, source server)`` of a queue id (``ReplicationQueueId.parse``:
    the peer up to the first '-', the server up to the next '/')."""
    peer, dash, rest = text.partition("-")
    if not dash or not peer or not rest:
        raise ValueError(f"{QUEUE_TABLE} row {text!r} is no queue id (<peer>-<server>)")
    server, slash, source = rest.partition("/")
    return peer, server, source if slash else server


def parse_group_offset(text: str) -> GroupOffset:
    """``<wal>:<offset>`` (``ReplicationGroupOffset.parse``: split at the last ':')."""
    wal, colon, offset = text.rpartition(":")
    if not colon:
        raise ValueError(f"{QUEUE_TABLE} offset {text!r} is no <wal>:<offset>")
    return GroupOffset(wal, int(offset))


def queues_from_rows(rows: Iterable[Sequence[Cell]]) -> list[TableQueue]:
    """The queues of scanned ``hbase:replication`` rows (family ``queue`` only)."""
    found = []
    for cells in rows:
        queue = [c for c in cells if c.family == QUEUE_FAMILY]
        if not queue:
            continue
        peer, server, source = parse_queue_id(queue[0].row.decode("utf-8"))
        offsets = {c.qualifier.decode("utf-8"): parse_group_offset(c.value.decode("utf-8"))
                   for c in queue}
        found.append(TableQueue(server, peer, source, offsets))
    return found


def should_replicate(offset: GroupOffset | None, wal: str) -> bool:
    """Whether the queue at ``offset`` still needs ``wal`` of its group (so the log cleaner
    keeps it): none or BEGIN, yes; else by the files' creation times, and for the offset's
    own file unless it was shipped whole (a negative offset)."""
    if offset is None or offset.begin:
        return True
    wal_ts, start_ts = name_timestamp(wal), name_timestamp(offset.wal)
    if wal_ts is None or start_ts is None:
        return True  # a name without a time: kept, as the safe side
    if wal_ts != start_ts:
        return wal_ts > start_ts
    return offset.offset >= 0
