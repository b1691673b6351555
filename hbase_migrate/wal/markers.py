"""METAFAMILY marker cells (``WALEdit``): flush, compaction, region open/close, bulk load,
replication markers; typed descriptors, decoding and encoding.

A marker is a Put cell of family ``METAFAMILY`` whose row is the region's start key (or
``00`` when that is empty) and whose value is a protobuf descriptor (``WAL.proto``)::

    HBASE::FLUSH                 FlushDescriptor {1 action enum, 2 table_name bytes,
                                 3 encoded_region_name bytes, 4 flush_sequence_number uint64,
                                 5 store_flushes {1 family_name, 2 store_home_dir, 3 flush_output*},
                                 6 region_name bytes}
    HBASE::COMPACTION            CompactionDescriptor {1 table_name, 2 encoded_region_name,
                                 3 family_name, 4 compaction_input*, 5 compaction_output*,
                                 6 store_home_dir, 7 region_name}
    HBASE::REGION_EVENT::REGION_OPEN / ::REGION_CLOSE (HBase 2.1.8+; before: HBASE::REGION_EVENT)
                                 RegionEventDescriptor {1 event_type enum, 2 table_name,
                                 3 encoded_region_name, 4 log_sequence_number, 5 stores*,
                                 6 server ServerName {1 host_name, 2 port, 3 start_code},
                                 7 region_name}
    HBASE::BULK_LOAD             BulkLoadDescriptor {1 table_name TableName {1 namespace,
                                 2 qualifier}, 2 encoded_region_name, 3 stores*,
                                 4 bulkload_seq_num int64, 5 cluster_ids*, 6 replicate bool}
    HBASE::REPLICATION_MARKER    empty when written; ReplicationMarkerDescriptor
                                 {1 region_server_name, 2 wal_name, 3 offset} once shipped
    StoreDescriptor = {1 family_name bytes, 2 store_home_dir string, 3 store_file*,
                       4 store_file_size_bytes uint64}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.messages import (
    TableName,
    decode_server_name,
    decode_table_name,
    encode_server_name,
    encode_table_name,
)
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.phoenix import INDEX_QUALIFIER, IndexUpdate, decode_index_update
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    string_field,
    to_int64,
    varint_field,
)

FLUSH = b"HBASE::FLUSH"
COMPACTION = b"HBASE::COMPACTION"
REGION_EVENT = b"HBASE::REGION_EVENT"
REGION_EVENT_PREFIX = REGION_EVENT + b"::"
BULK_LOAD = b"HBASE::BULK_LOAD"
REPLICATION_MARKER = b"HBASE::REPLICATION_MARKER"

START_FLUSH, COMMIT_FLUSH, ABORT_FLUSH, CANNOT_FLUSH = 0, 1, 2, 3
REGION_OPEN, REGION_CLOSE = 0, 1
EVENT_NAMES = {REGION_OPEN: "REGION_OPEN", REGION_CLOSE: "REGION_CLOSE"}


class MarkerError(HBaseMigrateError, ValueError):
    """A METAFAMILY cell whose descriptor does not parse."""


class StoreFlushDescriptor(NamedTuple):
    family_name: bytes
    store_home_dir: str
    flush_output: tuple[str, ...] = ()


class FlushDescriptor(NamedTuple):
    action: int  # START_FLUSH, COMMIT_FLUSH, ABORT_FLUSH, CANNOT_FLUSH
    table_name: bytes
    encoded_region_name: bytes
    flush_sequence_number: int | None = None
    store_flushes: tuple[StoreFlushDescriptor, ...] = ()
    region_name: bytes | None = None


class CompactionDescriptor(NamedTuple):
    table_name: bytes
    encoded_region_name: bytes
    family_name: bytes
    compaction_input: tuple[str, ...]
    compaction_output: tuple[str, ...]
    store_home_dir: str
    region_name: bytes | None = None


class StoreDescriptor(NamedTuple):
    family_name: bytes
    store_home_dir: str
    store_file: tuple[str, ...] = ()
    store_file_size_bytes: int | None = None


class RegionEventDescriptor(NamedTuple):
    event_type: int  # REGION_OPEN, REGION_CLOSE
    table_name: bytes
    encoded_region_name: bytes
    log_sequence_number: int | None = None
    stores: tuple[StoreDescriptor, ...] = ()
    server: ServerName | None = None
    region_name: bytes | None = None


class BulkLoadDescriptor(NamedTuple):
    table_name: TableName
    encoded_region_name: bytes
    stores: tuple[StoreDescriptor, ...]
    bulkload_seq_num: int
    cluster_ids: tuple[str, ...] = ()
    replicate: bool | None = None  # absent means true (HBase 2.3+ field)


class ReplicationMarkerDescriptor(NamedTuple):
    """Empty fields: the marker as the chore writes it, before replication fills it in."""

    region_server_name: str = ""
    wal_name: str = ""
    offset: int = 0


class UnknownMarker(NamedTuple):
    """A METAFAMILY cell with a qualifier this reader does not know; kept as it is."""

    qualifier: bytes
    value: bytes


Marker = (
    FlushDescriptor
    | CompactionDescriptor
    | RegionEventDescriptor
    | BulkLoadDescriptor
    | ReplicationMarkerDescriptor
    | IndexUpdate
    | UnknownMarker
)

# --- decoding -----------------------------------------------------------------------------

def _store_flush(data: bytes) -> StoreFlushDescriptor:
    m = Message(data, "StoreFlushDescriptor")
    return StoreFlushDescriptor(
        m.req_bytes(1, "family_name"), m.req_str(2, "store_home_dir"), m.strs(3)
    )


def _store(data: bytes) -> StoreDescriptor:
    m = Message(data, "StoreDescriptor")
    return StoreDescriptor(
        m.req_bytes(1, "family_name"),
        m.req_str(2, "store_home_dir"),
        m.strs(3),
        m.opt_int(4, "store_file_size_bytes"),
    )


def decode_flush(data: bytes) -> FlushDescriptor:
    m = Message(data, "FlushDescriptor")
    return FlushDescriptor(
        m.req_int(1, "action"),
        m.req_bytes(2, "table_name"),
        m.req_bytes(3, "encoded_region_name"),
        m.opt_int(4, "flush_sequence_number"),
        m.msgs(5, _store_flush),
        m.opt_bytes(6, "region_name"),
    )


def decode_compaction(data: bytes) -> CompactionDescriptor:
    m = Message(data, "CompactionDescriptor")
    return CompactionDescriptor(
        m.req_bytes(1, "table_name"),
        m.req_bytes(2, "encoded_region_name"),
        m.req_bytes(3, "family_name"),
        m.strs(4),
        m.strs(5),
        m.req_str(6, "store_home_dir"),
        m.opt_bytes(7, "region_name"),
    )


def decode_region_event(data: bytes) -> RegionEventDescriptor:
    m = Message(data, "RegionEventDescriptor")
    servers = m.msgs(6, decode_server_name)
    return RegionEventDescriptor(
        m.req_int(1, "event_type"),
        m.req_bytes(2, "table_name"),
        m.req_bytes(3, "encoded_region_name"),
        m.opt_int(4, "log_sequence_number"),
        m.msgs(5, _store),
        servers[-1] if servers else None,
        m.opt_bytes(7, "region_name"),
    )


def decode_bulk_load(data: bytes) -> BulkLoadDescriptor:
    m = Message(data, "BulkLoadDescriptor")
    replicate = m.opt_int(6, "replicate")
    return BulkLoadDescriptor(
        decode_table_name(m.req_bytes(1, "table_name")),
        m.req_bytes(2, "encoded_region_name"),
        m.msgs(3, _store),
        to_int64(m.req_int(4, "bulkload_seq_num")),
        m.strs(5),
        None if replicate is None else replicate != 0,
    )


def decode_replication(data: bytes) -> ReplicationMarkerDescriptor:
    if not data:
        return ReplicationMarkerDescriptor()
    m = Message(data, "ReplicationMarkerDescriptor")
    return ReplicationMarkerDescriptor(
        m.req_str(1, "region_server_name"), m.req_str(2, "wal_name"), m.req_int(3, "offset")
    )


def _index_update(data: bytes) -> IndexUpdate:
    """Apache Phoenix's index update (``phoenix.py``): the index table and its mutation."""
    try:
        return decode_index_update(data)
    except (CellCorruptError, IndexError) as exc:
        raise ProtobufError(str(exc)) from exc


_DECODERS: dict[bytes, Callable[[bytes], Marker]] = {
    FLUSH: decode_flush,
    COMPACTION: decode_compaction,
    REGION_EVENT: decode_region_event,
    BULK_LOAD: decode_bulk_load,
    REPLICATION_MARKER: decode_replication,
    INDEX_QUALIFIER: _index_update,
}


def is_marker(cell: Cell) -> bool:
    """Whether the cell is a METAFAMILY marker (``WALEdit.isMetaEditFamily``)."""
    return cell.family == METAFAMILY


def decode_marker(cell: Cell) -> Marker | None:
    """The descriptor of a marker cell; None for ordinary cells, UnknownMarker for an
    unknown qualifier. Raises MarkerError when a known descriptor does not parse."""
    if cell.family != METAFAMILY:
        return None
    qualifier = cell.qualifier
    if qualifier.startswith(REGION_EVENT_PREFIX):
        qualifier = REGION_EVENT
    decoder = _DECODERS.get(qualifier)
    if decoder is None:
        return UnknownMarker(cell.qualifier, cell.value)
    try:
        return decoder(cell.value)
    except (ProtobufError, UnicodeDecodeError) as exc:
        name = cell.qualifier.decode("ascii", "backslashreplace")
        raise MarkerError(f"marker {name} has a corrupt descriptor: {exc}") from exc


# --- encoding -----------------------------------------------------------------------------


def _opt_int(number: int, value: int | None) -> bytes:
    return b"" if value is None else varint_field(number, value)


def _opt_bytes(number: int, value: bytes | None) -> bytes:
    return b"" if value is None else bytes_field(number, value)


def _strs(number: int, values: tuple[str, ...]) -> bytes:
    return b"".join(string_field(number, v) for v in values)


def _encode_store(store: StoreDescriptor) -> bytes:
    return (
        bytes_field(1, store.family_name)
        + string_field(2, store.store_home_dir)
        + _strs(3, store.store_file)
        + _opt_int(4, store.store_file_size_bytes)
    )


def encode_flush(d: FlushDescriptor) -> bytes:
    stores = b"".join(
        bytes_field(
            5,
            bytes_field(1, s.family_name)
            + string_field(2, s.store_home_dir)
            + _strs(3, s.flush_output),
        )
        for s in d.store_flushes
    )
    return (
        varint_field(1, d.action)
        + bytes_field(2, d.table_name)
        + bytes_field(3, d.encoded_region_name)
        + _opt_int(4, d.flush_sequence_number)
        + stores
        + _opt_bytes(6, d.region_name)
    )


def encode_compaction(d: CompactionDescriptor) -> bytes:
    return (
        bytes_field(1, d.table_name)
        + bytes_field(2, d.encoded_region_name)
        + bytes_field(3, d.family_name)
        + _strs(4, d.compaction_input)
        + _strs(5, d.compaction_output)
        + string_field(6, d.store_home_dir)
        + _opt_bytes(7, d.region_name)
    )


def encode_region_event(d: RegionEventDescriptor) -> bytes:
    server = b"" if d.server is None else bytes_field(6, encode_server_name(d.server))
    return (
        varint_field(1, d.event_type)
        + bytes_field(2, d.table_name)
        + bytes_field(3, d.encoded_region_name)
        + _opt_int(4, d.log_sequence_number)
        + b"".join(bytes_field(5, _encode_store(s)) for s in d.stores)
        + server
        + _opt_bytes(7, d.region_name)
    )


def encode_bulk_load(d: BulkLoadDescriptor) -> bytes:
    return (
        bytes_field(1, encode_table_name(d.table_name))
        + bytes_field(2, d.encoded_region_name)
        + b"".join(bytes_field(3, _encode_store(s)) for s in d.stores)
        + varint_field(4, d.bulkload_seq_num)
        + _strs(5, d.cluster_ids)
        + _opt_int(6, None if d.replicate is None else int(d.replicate))
    )


def encode_replication(d: ReplicationMarkerDescriptor) -> bytes:
    return (
        string_field(1, d.region_server_name)
        + string_field(2, d.wal_name)
        + varint_field(3, d.offset)
    )


def _marker_cell(start_key: bytes, qualifier: bytes, timestamp: int, value: bytes) -> Cell:
    """``WALEdit.getRowForRegion``: the start key, or a single zero byte when empty."""
    return Cell(start_key or b"\x00", METAFAMILY, qualifier, timestamp, int(CellType.PUT), value)


def region_start_key(marker_row: bytes) -> bytes:
    """The start key of the region a marker cell's row names (``getRowForRegion`` undone).
    A region starting at one zero byte reads as the first region, which holds no rows then."""
    return b"" if marker_row == b"\x00" else marker_row


def flush_marker(d: FlushDescriptor, timestamp: int, *, start_key: bytes = b"") -> Cell:
    """The cell of ``WALEdit.createFlushWALEdit``."""
    return _marker_cell(start_key, FLUSH, timestamp, encode_flush(d))


def compaction_marker(d: CompactionDescriptor, timestamp: int, *, start_key: bytes = b"") -> Cell:
    """The cell of ``WALEdit.createCompaction``."""
    return _marker_cell(start_key, COMPACTION, timestamp, encode_compaction(d))


def region_event_marker(
    d: RegionEventDescriptor, timestamp: int, *, start_key: bytes = b"", legacy: bool = False
) -> Cell:
    """The cell of ``WALEdit.createRegionEventWALEdit``; ``legacy`` uses the qualifier of
    HBase 1.x-2.1.7 (``HBASE::REGION_EVENT`` without the event name)."""
    if legacy:
        qualifier = REGION_EVENT
    else:
        name = EVENT_NAMES.get(d.event_type, str(d.event_type)).encode("ascii")
        qualifier = REGION_EVENT_PREFIX + name
    return _marker_cell(start_key, qualifier, timestamp, encode_region_event(d))


def bulk_load_marker(d: BulkLoadDescriptor, timestamp: int, *, start_key: bytes = b"") -> Cell:
    """The cell of ``WALEdit.createBulkLoadEvent``."""
    return _marker_cell(start_key, BULK_LOAD, timestamp, encode_bulk_load(d))


def replication_marker(
    row: bytes, timestamp: int, d: ReplicationMarkerDescriptor | None = None
) -> Cell:
    """The cell of ``WALEdit.createReplicationMarkerEdit`` (empty value, as the chore writes
    it), or with ``d`` the descriptor replication fills in."""
    value = b"" if d is None else encode_replication(d)
    return Cell(row, METAFAMILY, REPLICATION_MARKER, timestamp, int(CellType.PUT), value)
