"""Client.proto messages on bytes: golden encodings worked out by hand from the field
numbers (each part commented), and round trips through the decoders."""

from __future__ import annotations

import pytest

from hbase_migrate.rpc.codec import encode_cell_block
from hbase_migrate.rpc.locate import region_from_meta
from hbase_migrate.rpc.messages import (
    Column,
    Get,
    decode_get_request,
    decode_get_response,
    get_request,
    get_response,
    split_varints,
)
from hbase_migrate.rpc.multi import (
    ActionResult,
    RegionResult,
    all_done,
    decode_get_results,
    decode_multi_request,
    decode_multi_response,
    decode_region_actions,
    get_multi,
    inline_mutation,
    multi_request,
    multi_response,
    mutation,
    row_multi,
)
from hbase_migrate.rpc.scan import (
    Scan,
    ScanResponse,
    decode_scan_request,
    decode_scan_response,
    next_scan_request,
    open_scan_request,
    scan_message,
    scan_response,
)
from hbase_migrate.tablename import table_string
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import ProtobufError, varint_field

CELLS = [Cell(b"a", b"f", b"q", 5, CellType.PUT, b"v1"),
         Cell(b"a", b"f", b"q", 4, CellType.PUT, b"v0"),
         Cell(b"b", b"f", b"", 9, CellType.DELETE_FAMILY)]


def test_raw_reversed_scan_golden() -> None:
    scan = Scan(start=b"s", stop=b"t", columns=(Column(b"f", (b"q",)),), time_range=(1, 2),
                max_versions=3, raw=True, reversed=True, caching=10, max_result_size=100,
                mvcc_read_point=7, include_start_row=False)
    assert scan_message(scan) == bytes.fromhex(
        "0a06" "0a0166" "120171"  # 1 column { 1 family "f", 2 qualifier "q" }
        "120a" "0a055f7261775f" "1201ff"  # 2 attribute { "_raw_", 0xFF }: Scan.setRaw
        "1a0173" "220174"  # 3 start_row "s", 4 stop_row "t"
        "3204" "0801" "1002"  # 6 time_range { from 1, to 2 }
        "3803"  # 7 max_versions 3
        "5064"  # 10 max_result_size 100
        "7801"  # 15 reversed
        "88010a"  # 17 caching 10 (key 17 << 3 = 136: two bytes)
        "a00107"  # 20 mvcc_read_point 7
        "a80100")  # 21 include_start_row false


def test_uncached_scan_golden() -> None:
    # Client.proto's cache_blocks defaults to true: false must be sent, true may be left out
    assert scan_message(Scan(cache_blocks=False)) == bytes.fromhex(
        "3801"  # 7 max_versions 1
        "4000")  # 8 cache_blocks false
    assert scan_message(Scan()) == bytes.fromhex("3801")
    request = decode_scan_request(open_scan_request(b"r", Scan(cache_blocks=False), 1))
    assert request.scan is not None and request.scan.cache_blocks is False


def test_scan_requests_round_trip() -> None:
    scan = Scan(start=b"x", raw=True, max_versions=0x7FFFFFFF, time_range=(0, 9))
    opened = decode_scan_request(open_scan_request(b"region", scan, 100))
    assert (opened.region, opened.scan, opened.rows, opened.close) == (b"region", scan, 100,
                                                                       False)
    later = decode_scan_request(next_scan_request(2**63 + 5, 50, 3, renew=True))
    assert (later.scanner_id, later.rows, later.next_call_seq, later.renew, later.scan) == \
        (2**63 + 5, 50, 3, True, None)
    closing = next_scan_request(12, 0, 4, close=True)
    # 3 scanner_id 12, 4 number_of_rows 0, 5 close_scanner true, 6 next_call_seq 4,
    # 7 client_handles_partials, 8 client_handles_heartbeats
    assert closing == bytes.fromhex("180c" "2000" "2801" "3004" "3801" "4001")


def test_scan_response_golden_and_round_trip() -> None:
    resp = ScanResponse(5, (tuple(CELLS[:2]), (CELLS[2],)), (True, False), True, True, False, 9)
    data, block = scan_response(resp)
    assert data == bytes.fromhex(
        "0802" "0801"  # 1 cells_per_result 2, 1
        "1005" "1801"  # 2 scanner_id 5, 3 more_results
        "3801" "3800"  # 7 partial_flag_per_result true, false
        "4001" "5809")  # 8 more_results_in_region, 11 mvcc_read_point 9
    assert block == encode_cell_block(CELLS)
    assert decode_scan_response(data, block) == resp


def test_scan_response_packed_counts_and_inline_results() -> None:
    """A proto2 reader takes packed repeated varints too; a server without a codec sends
    Results inline."""
    packed = bytes.fromhex("0a020201") + bytes.fromhex("1005")
    resp = decode_scan_response(packed, encode_cell_block(CELLS))
    assert resp.results == (tuple(CELLS[:2]), (CELLS[2],))
    from hbase_migrate.rpc.messages import Result, result_message
    from hbase_migrate.wal.protobuf import bytes_field
    inline = bytes_field(5, result_message(Result(tuple(CELLS[:2]), partial=True)))
    resp = decode_scan_response(inline, b"")
    assert resp.results == (tuple(CELLS[:2]),) and resp.partial == (True,)


def test_many_counts_and_flags_with_a_long_one_among_them() -> None:
    """Thousands of one-byte counts and flags are read as runs; a count of two bytes in a
    run, a field between runs and a message ending in a run are read as they are."""
    counts = [1] * 500 + [300] + [2] * 7 + [127, 128, 0]
    flags = [0, 1] * 255 + [1]
    data = b"".join(varint_field(1, n) for n in counts) + varint_field(2, 9)
    data += b"".join(varint_field(7, f) for f in flags)
    values, rest = split_varints(data, "ScanResponse", (1, 7))
    assert values == {1: counts, 7: flags} and rest.opt_int(2) == 9
    with pytest.raises(ProtobufError):
        split_varints(data + b"\x08", "ScanResponse", (1, 7))  # a key with no value


def test_heartbeat_without_results() -> None:
    resp = decode_scan_response(bytes.fromhex("1005" "1801" "4001" "4801"), b"")
    assert resp.heartbeat and resp.results == () and resp.more_results_in_region


def test_get_round_trip_and_inline_result() -> None:
    get = Get(b"row", (Column(b"f"), Column(b"g", (b"a", b"b"))), (3, 4), 7)
    assert decode_get_request(get_request(b"reg", get)) == (b"reg", get)
    for in_block in (True, False):
        data, block = get_response(CELLS[:2], in_block)
        assert decode_get_response(data, block) == tuple(CELLS[:2])
    assert decode_get_response(b"", b"") == ()


def test_mutation_without_data_golden() -> None:
    # 1 row "a", 2 mutate_type PUT (2), 8 associated_cell_count 2
    assert mutation(b"a", 2, 2) == bytes.fromhex("0a0161" "1002" "4002")


DELETES = [Cell(b"r", b"f", b"q", 3, CellType.DELETE),
           Cell(b"r", b"f", b"q", 4, CellType.DELETE_COLUMN),
           Cell(b"r", b"f", b"", 5, CellType.DELETE_FAMILY),
           Cell(b"r", b"g", b"", 6, CellType.DELETE_FAMILY_VERSION)]


def test_inline_delete_golden() -> None:
    assert inline_mutation(b"r", DELETES[2:3]) == bytes.fromhex(
        "0a0172" "1003"  # row "r", DELETE
        "1a0b" "0a0166"  # 3 column_value { 1 family "f",
        "1206" "0a00" "1805" "2002")  # 2 qualifier_value { "", ts 5, DELETE_FAMILY (2) } }


def test_multi_request_golden() -> None:
    request = multi_request([(b"r", [(0, mutation(b"a", 2, 1))])])
    assert request == bytes.fromhex(
        "0a14"  # 1 regionAction {
        "0a05" "0801" "120172"  # 1 region { REGION_NAME, "r" }
        "1a0b" "0800" "1207" "0a0161" "1002" "4001")  # 3 action { 0, mutation } }


def test_multi_request_round_trip_with_both_forms() -> None:
    puts = CELLS[:2]
    request = multi_request([
        (b"r1", [(0, mutation(b"a", 2, 2)), (1, inline_mutation(b"r", DELETES))]),
        (b"r2", [(2, mutation(b"b", 3, 1))])])
    decoded = decode_multi_request(request, encode_cell_block([*puts, CELLS[2]]))
    assert [(r.region, r.mutations) for r in decoded] == [
        (b"r1", ((0, 2, tuple(puts)), (1, 3, tuple(DELETES)))),
        (b"r2", ((2, 3, (CELLS[2],)),))]


def test_a_multi_of_rows_is_the_multi_of_their_mutations_numbered_in_order(
        both_hot_loops: str) -> None:
    wide = [Cell(b"w" * 200, b"f", b"q%d" % i, i, CellType.PUT, b"v") for i in range(130)]
    regions = [(b"r1", [(b"a", CELLS[:2]), (b"w" * 200, wide)]),
               (b"r2", [(b"b%05d" % i, CELLS[2:3]) for i in range(17_000)])]  # long varints
    rows = [row for _, region_rows in regions for row in region_rows]
    index = iter(range(len(rows)))
    assert row_multi(regions, 2) == multi_request(
        [(name, [(next(index), mutation(row, 2, len(cells))) for row, cells in region_rows])
         for name, region_rows in regions])
    decoded = decode_multi_request(row_multi(regions, 3),
                                   encode_cell_block([c for _, cells in rows for c in cells]))
    assert [(i, kind, row[0]) for r in decoded for i, kind, row in r.mutations] == [
        (i, 3, cells[0]) for i, (_, cells) in enumerate(rows)]


def test_a_reply_of_every_action_done_is_known_without_decoding_it() -> None:
    def reply(*regions: RegionResult) -> bytes:  # as the embedded cluster's server sends it
        return multi_response(regions)

    done = reply(RegionResult(tuple(ActionResult(i) for i in range(3))),
                 RegionResult(tuple(ActionResult(i) for i in range(3, 300))))
    assert all_done(done, [3, 297])
    assert all_done(done + b"\x1a\x00", [3, 297])  # HBase's: empty region statistics
    assert not all_done(done, [4, 296]) and not all_done(done, [300])
    failed = reply(RegionResult((ActionResult(0), ActionResult(1, ("x.Y", "boom")),
                                 ActionResult(2))))
    assert not all_done(failed, [3])
    assert not all_done(reply(RegionResult((), ("x.Y", "boom"))), [3])
    out_of_order = reply(RegionResult((ActionResult(1), ActionResult(0))))
    assert not all_done(out_of_order, [2])  # decoded the long way, as any other reply
    assert not all_done(reply(RegionResult(tuple(ActionResult(i) for i in range(20_000)))),
                        [20_000])


def test_multi_request_with_too_few_cells_is_an_error() -> None:
    from hbase_migrate.wal.cells import CellCorruptError

    with pytest.raises(CellCorruptError):
        decode_multi_request(multi_request([(b"r", [(0, mutation(b"a", 2, 2))])]),
                             encode_cell_block(CELLS[:1]))


def test_multi_response_round_trip() -> None:
    nsre = ("org.apache.hadoop.hbase.NotServingRegionException", "trace")
    regions = (RegionResult((ActionResult(0), ActionResult(1, ("x.Y", "boom")))),
               RegionResult((), nsre))
    assert decode_multi_response(multi_response(regions)) == regions


def test_a_multi_of_gets_numbers_its_gets_in_order_and_reads_their_cells_in_order() -> None:
    """What a server reads of :func:`get_multi` (its own decoder), and what the client reads
    of the server's answer: each Get's cells from the cell block in the order of the results,
    a refused Get and a failed region as exceptions."""
    gets = [(b"r1", [Get(b"a", max_versions=5), Get(b"b")]), (b"r2", [Get(b"c")])]
    read = decode_region_actions(get_multi(gets), b"")
    assert [[(a.action, a.get) for a in r.actions] for r in read] == [
        [(0, gets[0][1][0]), (1, gets[0][1][1])], [(2, gets[1][1][0])]]
    nsre = ("org.apache.hadoop.hbase.NotServingRegionException", "trace")
    answer = (RegionResult((ActionResult(0, cells=tuple(CELLS[:2])),
                            ActionResult(1, ("x.Y", "boom")))),
              RegionResult((ActionResult(2, cells=(CELLS[2],)),)), RegionResult((), nsre))
    assert decode_get_results(multi_response(answer), encode_cell_block(CELLS)) == answer
    assert decode_get_results(multi_response(answer, in_block=False), b"") == answer


def test_a_result_with_cells_is_refused_for_mutations() -> None:
    from hbase_migrate.rpc.messages import Result, result_message
    from hbase_migrate.wal.protobuf import bytes_field, varint_field

    roe = varint_field(1, 0) + bytes_field(2, result_message(Result(cell_count=1)))
    with pytest.raises(ProtobufError):
        decode_multi_response(bytes_field(1, bytes_field(1, roe)))


def test_meta_row_golden() -> None:
    """An hbase:meta row as HBase 2.6 writes it (values built by hand from HBase.proto):
    PBUF + RegionInfo { 1 region_id, 2 TableName { "ns", "t" }, 3 start, 4 end }."""
    info = b"PBUF" + bytes.fromhex("08e807" "1207" "0a026e73" "120174" "1a0162" "220163")
    row = b"ns:t,b,1000.0123456789abcdef0123456789abcdef."
    cells = (Cell(row, b"info", b"regioninfo", 1, 4, info),
             Cell(row, b"info", b"server", 1, 4, b"rs1.example:16020"),
             Cell(row, b"info", b"serverstartcode", 1, 4, (1700000000000).to_bytes(8, "big")))
    region = region_from_meta(row, cells)
    assert region is not None
    assert (region.table, region.start, region.end, region.region_id) == ("ns:t", b"b", b"c",
                                                                          1000)
    assert (region.host, region.port, region.start_code) == ("rs1.example", 16020,
                                                             1700000000000)
    assert region.encoded == "0123456789abcdef0123456789abcdef"
    assert region.contains(b"b") and not region.contains(b"c") and not region.contains(b"a")
    assert table_string(b"default", b"t") == "t"
    assert region_from_meta(b"t", (Cell(b"t", b"table", b"state", 1, 4, b"x"),)) is None
