"""METAFAMILY markers met during replay: never applied as data, always accounted for.

BULK_LOAD markers stand for data the WAL does not carry: each becomes a
:class:`BulkLoadRecord` (table, encoded region, families and store files, sequence id) so
the caller can re-copy the region's key range from the source. Region open/close events are
kept (they tell the caller which regions moved, see :mod:`file_replay`); every marker is
counted by kind. A BULK_LOAD whose descriptor does not parse fails the file; any other
unreadable marker is counted as ``unreadable``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from hbase_migrate.replay.errors import MarkerReadError
from hbase_migrate.replay.mutations import WalPosition
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.phoenix import IndexUpdate

UNREADABLE = "unreadable"


class BulkLoadRecord(NamedTuple):
    """One bulk load into a source region: its key range must be re-copied."""

    table: str  # as HBase prints it, source side
    encoded_region: str
    stores: tuple[tuple[bytes, tuple[str, ...]], ...]  # (family, store files)
    sequence: int  # bulkload_seq_num
    write_time: int
    position: WalPosition
    start_key: bytes  # the region's start key (from the marker's row)


class RegionEvent(NamedTuple):
    """A region opened or closed on the source's server that wrote this WAL."""

    kind: str  # "REGION_OPEN", "REGION_CLOSE" or "REGION_EVENT" (unknown event type)
    table: str
    encoded_region: str
    sequence: int | None
    position: WalPosition


def _table(name: TableName) -> str:
    ns, qualifier = name.namespace.decode(), name.qualifier.decode()
    return qualifier if ns in ("", "default") else f"{ns}:{qualifier}"


_KINDS: dict[type, str] = {
    M.FlushDescriptor: "FLUSH",
    M.CompactionDescriptor: "COMPACTION",
    M.BulkLoadDescriptor: "BULK_LOAD",
    M.ReplicationMarkerDescriptor: "REPLICATION_MARKER",
    IndexUpdate: "PHOENIX_INDEX_UPDATE",  # the index table's own entries hold its rows
}


def _kind(marker: M.Marker) -> str:
    if isinstance(marker, M.RegionEventDescriptor):
        return M.EVENT_NAMES.get(marker.event_type, "REGION_EVENT")
    return _KINDS.get(type(marker), "UNKNOWN")


@dataclass
class MarkerLog:
    """Counts of markers by kind, bulk loads and region events, in WAL order."""

    counts: Counter[str] = field(default_factory=Counter)
    bulk_loads: list[BulkLoadRecord] = field(default_factory=list)
    region_events: list[RegionEvent] = field(default_factory=list)

    def read(self, table: str, cell: Cell, write_time: int, position: WalPosition) -> None:
        """Account for one marker cell of an entry of ``table``."""
        try:
            marker = M.decode_marker(cell)
        except M.MarkerError as exc:
            if cell.qualifier == M.BULK_LOAD:
                raise MarkerReadError(f"{position}: table {table}: {exc}; the bulk-loaded "
                                      "region cannot be identified for re-copy") from exc
            self.counts[UNREADABLE] += 1
            return
        if marker is None:
            return
        kind = _kind(marker)
        self.counts[kind] += 1
        if isinstance(marker, M.BulkLoadDescriptor):
            stores = tuple((s.family_name, s.store_file) for s in marker.stores)
            self.bulk_loads.append(BulkLoadRecord(
                _table(marker.table_name), marker.encoded_region_name.decode(
                    "ascii", "backslashreplace"),
                stores, marker.bulkload_seq_num, write_time, position,
                M.region_start_key(cell.row)))
        elif isinstance(marker, M.RegionEventDescriptor):
            self.region_events.append(RegionEvent(
                kind, table, marker.encoded_region_name.decode("ascii", "backslashreplace"),
                marker.log_sequence_number, position))
