"""``AdminService`` calls on a region server (``Admin.proto`` of HBase branch-2.6)::

    GetRegionInfoRequest    1 region (RegionSpecifier)  2 compaction_state (bool)
                            3 best_split_row
    GetRegionInfoResponse   1 region_info (RegionInfo)  2 compaction_state (NONE 0, MINOR 1,
                            MAJOR 2, MAJOR_AND_MINOR 3)  4 splittable  5 mergeable
    GetOnlineRegionRequest  (empty)       Response  1 region_info (repeated RegionInfo)
    FlushRegionRequest      1 region  2 if_older_than_ts  3 write_flush_wal_marker  4 family
    FlushRegionResponse     1 last_flush_time (required)  2 flushed  3 wrote_flush_wal_marker
    CompactRegionRequest    1 region  2 major  3 family          Response  (empty)
    RollWALWriterRequest    (empty)       Response  1 region_to_flush (repeated bytes)
                            (2.x: answered once the roll is requested, before it is done)
    GetRegionLoadRequest    1 table_name          Response  1 region_loads (repeated)
    RegionLoad              1 region_specifier  2 stores  3 storefiles  6 mem_store_size_MB
                            8 read_requests_count (``ClusterStatus.proto``; the server's
                            live figures)
    RegionInfo              1 region_id  2 table_name  3 start_key  4 end_key  5 offline
                            6 split  7 replica_id

A user's ``CompactRegion`` selects the files at once (``CompactSplit``, ``selectNow``) and
counts the compaction in the region's state before replying, so the state reads MAJOR until
the compaction ends and NONE after (or at once when there was nothing to compact).
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.cluster.descriptors import region_name
from hbase_migrate.cluster.schema import table_from_message, table_name_message
from hbase_migrate.rpc.locate import META_REGION, Region, region_info_message
from hbase_migrate.rpc.messages import decode_region_specifier, region_specifier
from hbase_migrate.wal.protobuf import Message, bytes_field, varint_field

COMPACTION_STATES = ("NONE", "MINOR", "MAJOR", "MAJOR_AND_MINOR")
META_TABLE = "hbase:meta"


def decode_region_info(data: bytes, host: str = "", port: int = 0) -> Region:
    """A ``RegionInfo`` as a ``Region`` held by ``host:port`` (its full name rebuilt as
    HBase builds it; ``hbase:meta``'s is the old-format ``hbase:meta,,1``)."""
    m = Message(data, "RegionInfo")
    table = table_from_message(m.req_bytes(2, "table_name"))
    start, region_id = m.opt_bytes(3) or b"", m.req_int(1, "region_id")
    name = META_REGION if table == META_TABLE else region_name(table, start, region_id)
    return Region(table, start, m.opt_bytes(4) or b"", region_id, name, host, port, 0,
                  bool(m.opt_int(5)), bool(m.opt_int(6)))


def region_info_request(region: bytes, compaction_state: bool = True) -> bytes:
    out = bytes_field(1, region_specifier(region))
    return out + varint_field(2, 1) if compaction_state else out


class RegionState(NamedTuple):
    """A GetRegionInfoResponse: the region and its compaction state's name."""

    region: Region
    compaction: str


def decode_region_info_response(data: bytes, host: str = "", port: int = 0) -> RegionState:
    m = Message(data, "GetRegionInfoResponse")
    state = m.opt_int(2) or 0
    name = COMPACTION_STATES[state] if state < len(COMPACTION_STATES) else f"UNKNOWN({state})"
    return RegionState(decode_region_info(m.req_bytes(1, "region_info"), host, port), name)


def decode_online_regions(data: bytes, host: str = "", port: int = 0) -> list[Region]:
    return [decode_region_info(d, host, port)
            for d in Message(data, "GetOnlineRegionResponse").repeated(1)]


def flush_region_request(region: bytes) -> bytes:
    return bytes_field(1, region_specifier(region))


class Flushed(NamedTuple):
    """A FlushRegionResponse: when the region last flushed (ms), whether this call did."""

    last_flush_time: int
    flushed: bool


def decode_flush_response(data: bytes) -> Flushed:
    m = Message(data, "FlushRegionResponse")
    return Flushed(m.req_int(1, "last_flush_time"), bool(m.opt_int(2)))


def compact_region_request(region: bytes, major: bool = True, family: bytes | None = None
                           ) -> bytes:
    out = bytes_field(1, region_specifier(region)) + varint_field(2, major)
    return out + bytes_field(3, family) if family is not None else out


def decode_roll_response(data: bytes) -> tuple[bytes, ...]:
    """The encoded names of regions the server asks to be flushed (too many WALs)."""
    return Message(data, "RollWALWriterResponse").repeated(1)


class RegionLoad(NamedTuple):
    """A region's load as its server counts it now: stores, store files (those compacted
    away not counted), memstore MB, and the read requests it served since it opened (each
    Get and each Scan call: the region's ``readRequestCount`` metric)."""

    region: bytes  # the full region name
    stores: int
    store_files: int
    memstore_mb: int
    read_requests: int = 0


def region_load_request(table: str) -> bytes:
    return bytes_field(1, table_name_message(table))


def _region_load(data: bytes) -> RegionLoad:
    m = Message(data, "RegionLoad")
    return RegionLoad(decode_region_specifier(m.req_bytes(1, "region_specifier"))[1],
                      m.opt_int(2) or 0, m.opt_int(3) or 0, m.opt_int(6) or 0,
                      m.opt_int(8) or 0)


def decode_region_loads(data: bytes) -> list[RegionLoad]:
    return list(Message(data, "GetRegionLoadResponse").msgs(1, _region_load))


# --- the server's side (the embedded cluster answers with these) --------------------------


def _region_of(data: bytes, what: str) -> bytes:
    return decode_region_specifier(Message(data, what).req_bytes(1, "region"))[1]


def decode_flush_request(data: bytes) -> bytes:
    """The region name of a FlushRegionRequest."""
    return _region_of(data, "FlushRegionRequest")


def decode_compact_request(data: bytes) -> bytes:
    """The region name of a CompactRegionRequest."""
    return _region_of(data, "CompactRegionRequest")


RegionSpan = tuple[str, bytes, bytes, int]  # table, start key, end key, region id


def _region_info(span: RegionSpan) -> bytes:
    table, start, end, region_id = span
    return region_info_message(table, start, end, region_id)


def region_info_response(table: str, start: bytes, end: bytes, region_id: int,
                         compaction: int = 0) -> bytes:
    return (bytes_field(1, _region_info((table, start, end, region_id)))
            + varint_field(2, compaction))


def online_regions_response(regions: list[RegionSpan]) -> bytes:
    return b"".join(bytes_field(1, _region_info(r)) for r in regions)


def flush_response(last_flush_time: int, flushed: bool = True) -> bytes:
    return varint_field(1, last_flush_time) + varint_field(2, flushed)


def roll_response(regions_to_flush: tuple[bytes, ...] = ()) -> bytes:
    return b"".join(bytes_field(1, r) for r in regions_to_flush)
