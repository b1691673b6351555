"""``Scan``, ``ScanRequest`` and ``ScanResponse`` (``Client.proto``, HBase branch-2.6)::

    Scan          1 column  2 attribute (NameBytesPair)  3 start_row  4 stop_row
                  6 time_range  7 max_versions (default 1)  8 cache_blocks  9 batch_size
                  10 max_result_size  15 reversed  17 caching  18 allow_partial_results
                  20 mvcc_read_point  21 include_start_row (default true)
                  22 include_stop_row
    ScanRequest   1 region  2 scan  3 scanner_id  4 number_of_rows  5 close_scanner
                  6 next_call_seq  7 client_handles_partials  8 client_handles_heartbeats
                  10 renew  11 limit_of_rows
    ScanResponse  1 cells_per_result (repeated uint32)  2 scanner_id  3 more_results
                  4 ttl  5 results (repeated Result)  7 partial_flag_per_result (repeated
                  bool)  8 more_results_in_region  9 heartbeat_message  11 mvcc_read_point

A raw scan (delete markers and deleted cells) has no field of its own: it is the attribute
``_raw_`` = ``Bytes.toBytes(true)`` (one byte 0xFF), as ``Scan.setRaw`` sets it. With a cell
block codec the server sends each Result's cells in the cell block, counted by
``cells_per_result``; without one, ``results`` holds them inline.
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.rpc.codec import decode_cells, encode_cell_block
from hbase_migrate.rpc.messages import (
    Column,
    Result,
    TimeRange,
    column_message,
    decode_column,
    decode_name_bytes_pair,
    decode_region_specifier,
    decode_result,
    decode_time_range,
    name_bytes_pair,
    region_specifier,
    result_cells,
    result_message,
    split_varints,
    time_range_message,
)
from hbase_migrate.wal.hotloops import compiled_module
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message, bytes_field, varint_field

RAW_ATTRIBUTE = "_raw_"


class Scan(NamedTuple):
    """What to scan; ``caching`` rows and ``max_result_size`` bytes per call at most."""

    start: bytes = b""
    stop: bytes = b""
    columns: tuple[Column, ...] = ()
    time_range: TimeRange | None = None
    max_versions: int = 1
    raw: bool = False
    reversed: bool = False
    caching: int = 0
    max_result_size: int = 0
    mvcc_read_point: int = 0
    include_start_row: bool = True
    include_stop_row: bool = False
    # False: the blocks read do not enter the region server's block cache, as HBase's
    # CopyTable and HashTable scan; a full-table scan would evict the cluster's hot blocks
    cache_blocks: bool = True


def scan_message(scan: Scan) -> bytes:
    out = b"".join(bytes_field(1, column_message(c)) for c in scan.columns)
    if scan.raw:
        out += bytes_field(2, name_bytes_pair(RAW_ATTRIBUTE, b"\xff"))
    if scan.start:
        out += bytes_field(3, scan.start)
    if scan.stop:
        out += bytes_field(4, scan.stop)
    if scan.time_range is not None:
        out += bytes_field(6, time_range_message(scan.time_range))
    out += varint_field(7, scan.max_versions)
    if not scan.cache_blocks:  # the field's default is true
        out += varint_field(8, 0)
    if scan.max_result_size > 0:
        out += varint_field(10, scan.max_result_size)
    if scan.reversed:
        out += varint_field(15, 1)
    if scan.caching > 0:
        out += varint_field(17, scan.caching)
    if scan.mvcc_read_point > 0:
        out += varint_field(20, scan.mvcc_read_point)
    if not scan.include_start_row:
        out += varint_field(21, 0)
    if scan.include_stop_row:
        out += varint_field(22, 1)
    return out


def decode_scan(data: bytes) -> Scan:
    m = Message(data, "Scan")
    raw = any(decode_name_bytes_pair(a) == (RAW_ATTRIBUTE, b"\xff") for a in m.repeated(2))
    tr, versions, start_row = m.opt_bytes(6), m.opt_int(7), m.opt_int(21)
    cache = m.opt_int(8)
    return Scan(m.opt_bytes(3) or b"", m.opt_bytes(4) or b"", m.msgs(1, decode_column),
                None if tr is None else decode_time_range(tr),
                1 if versions is None else versions, raw, bool(m.opt_int(15)),
                m.opt_int(17) or 0, m.opt_int(10) or 0, m.opt_int(20) or 0,
                start_row is None or bool(start_row), bool(m.opt_int(22)),
                cache is None or bool(cache))


def open_scan_request(region_name: bytes, scan: Scan, rows: int, *,
                      close: bool = False) -> bytes:
    """The first call of a scan in a region: opens a scanner and returns the first rows
    (``close``: and closes it at once, a one-call lookup)."""
    return (bytes_field(1, region_specifier(region_name)) + bytes_field(2, scan_message(scan))
            + varint_field(4, rows) + varint_field(5, close) + varint_field(7, 1)
            + varint_field(8, 1))


def next_scan_request(scanner_id: int, rows: int, next_call_seq: int, *,
                      close: bool = False, renew: bool = False) -> bytes:
    """A later call on an open scanner (``close``: close it; ``renew``: renew its lease)."""
    out = varint_field(3, scanner_id) + varint_field(4, rows) + varint_field(5, close)
    out += varint_field(6, next_call_seq) + varint_field(7, 1) + varint_field(8, 1)
    if renew:
        out += varint_field(10, 1)
    return out


class ScanRequest(NamedTuple):
    region: bytes | None
    scan: Scan | None
    scanner_id: int | None
    rows: int
    close: bool
    next_call_seq: int | None
    renew: bool


def decode_scan_request(data: bytes) -> ScanRequest:
    m = Message(data, "ScanRequest")
    region, scan = m.opt_bytes(1), m.opt_bytes(2)
    return ScanRequest(None if region is None else decode_region_specifier(region)[1],
                       None if scan is None else decode_scan(scan), m.opt_int(3),
                       m.opt_int(4) or 0, bool(m.opt_int(5)), m.opt_int(6),
                       bool(m.opt_int(10)))


class ScanResponse(NamedTuple):
    """A decoded ScanResponse: ``results`` the cells of each Result (a Result flagged in
    ``partial`` is a part of a row; the row's next part follows)."""

    scanner_id: int | None
    results: tuple[tuple[Cell, ...], ...] = ()
    partial: tuple[bool, ...] = ()
    more_results: bool | None = None
    more_results_in_region: bool | None = None
    heartbeat: bool = False
    mvcc_read_point: int = 0
    ttl: int | None = None


def region_done(resp: ScanResponse) -> bool:
    """Whether the server closed the scanner: the region (``more_results_in_region``) or
    the whole scan (``more_results``) has nothing more. Absent flags mean more."""
    return resp.more_results is False or resp.more_results_in_region is False


def whole_rows(resp: ScanResponse, part: list[Cell]) -> tuple[list[list[Cell]], list[Cell]]:
    """The whole rows of a response, ``part`` (the cells of a row begun by earlier partial
    Results) joined to the first; returns them and the cells of a row still unfinished.
    A Result flagged partial only *may* have more cells in its row (the server stopped at
    a size or time limit between cells): a Result of another row ends it, as does the end
    of the region (HBase's ``CompleteScanResultCache``)."""
    if not part and not any(resp.partial):  # the usual reply: whole rows only
        loops = compiled_module()
        if loops is not None:
            return loops.row_lists(resp.results), part
        return [list(cells) for cells in resp.results if cells], part
    flags = _flags(resp)
    rows = []
    for cells, partial in zip(resp.results, flags, strict=True):
        if not part and not partial:  # the usual Result: a whole row
            if cells:
                rows.append(list(cells))
            continue
        if part and cells and cells[0].row != part[0].row:
            rows.append(part)
            part = []
        part = part + list(cells)
        if not partial and part:
            rows.append(part)
            part = []
    if part and region_done(resp):
        rows.append(part)
        part = []
    return rows, part


def scan_response(resp: ScanResponse, in_block: bool = True) -> tuple[bytes, bytes]:
    """``(ScanResponse, cell block)`` as a server sends them: the cells in the cell block
    (a client that named a codec), or inline Results (``in_block`` False)."""
    if in_block:
        out = b"".join(varint_field(1, len(r)) for r in resp.results)
    else:
        out = b"".join(bytes_field(5, result_message(Result(r, partial=p)))
                       for r, p in zip(resp.results, _flags(resp), strict=True))
    if resp.scanner_id is not None:
        out += varint_field(2, resp.scanner_id)
    if resp.more_results is not None:
        out += varint_field(3, resp.more_results)
    if resp.ttl is not None:
        out += varint_field(4, resp.ttl)
    if in_block:
        out += b"".join(varint_field(7, p) for p in resp.partial)
    if resp.more_results_in_region is not None:
        out += varint_field(8, resp.more_results_in_region)
    if resp.heartbeat:
        out += varint_field(9, 1)
    if resp.mvcc_read_point:
        out += varint_field(11, resp.mvcc_read_point)
    if not in_block:
        return out, b""
    return out, encode_cell_block(c for r in resp.results for c in r)


def _flags(resp: ScanResponse) -> tuple[bool, ...]:
    return resp.partial if len(resp.partial) == len(resp.results) else \
        (False,) * len(resp.results)


def decode_scan_response(data: bytes, block: bytes) -> ScanResponse:
    """The cells of the cell block are decoded in one pass, then handed out to the Results
    by their counts."""
    varints, m = split_varints(data, "ScanResponse", (1, 7))
    counts = varints[1]
    results: list[tuple[Cell, ...]] = []
    pos = 0
    if counts:
        cells, pos = decode_cells(block, 0, sum(counts))
        loops = compiled_module()
        if loops is not None:
            results.extend(loops.cut_results(cells, counts))
        else:
            at = 0
            for count in counts:
                results.append(cells[at:at + count])
                at += count
    partial = [bool(p) for p in varints[7]]
    for data_result in m.repeated(5):
        result = decode_result(data_result)
        cells, pos = result_cells(result, block, pos)
        results.append(cells)
        partial.append(result.partial)
    more, in_region = m.opt_int(3), m.opt_int(8)
    return ScanResponse(m.opt_int(2), tuple(results), tuple(partial),
                        None if more is None else bool(more),
                        None if in_region is None else bool(in_region), bool(m.opt_int(9)),
                        m.opt_int(11) or 0, m.opt_int(4))
