"""The RPC codec on bytes: golden frames worked out by hand from RPC.proto's field numbers
(each written out with its parts), round trips, replies cut at every byte, garbage."""

from __future__ import annotations

import pytest

from hbase_migrate.rpc.codec import (
    CONNECTION_CALL_ID,
    RemoteException,
    ReplyDecoder,
    connection_header,
    decode_call,
    decode_cells,
    decode_reply,
    encode_call,
    encode_cell_block,
    encode_reply,
    preamble,
)
from hbase_migrate.rpc.errors import RpcFrameError
from hbase_migrate.rpc.messages import Get, get_request, get_response
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.model import Cell, CellType, Tag

CELL = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
# KeyValueCodec: int32 L = 8 + keyLen + valLen | int32 keyLen 15 | int32 valLen 1
# | int16 rowLen 1 | "r" | int8 famLen 1 | "f" | "q" | int64 ts 1 | type 4 (Put) | "v"
CELL_BYTES = bytes.fromhex("00000018" "0000000f" "00000001" "0001" "72" "01" "66" "71"
                           "0000000000000001" "04" "76")


def test_preamble_is_hbas_version_zero_and_simple_auth() -> None:
    assert preamble() == b"HBas\x00\x50"


def test_connection_header_golden() -> None:
    codec = b"org.apache.hadoop.hbase.codec.KeyValueCodec"
    assert len(codec) == 0x2B
    expected = (bytes.fromhex("00000041")  # int32 length 65, then ConnectionHeader:
                + bytes.fromhex("0a03" "0a0175")  # 1 user_info { 1 effective_user "u" }
                + bytes.fromhex("120d") + b"ClientService"  # 2 service_name
                + bytes.fromhex("1a2b") + codec)  # 3 cell_block_codec_class
    assert connection_header("ClientService", "u", version=None) == expected


def test_connection_header_with_version_info() -> None:
    header = connection_header("ClientService", "u")
    assert header[4 + 5 + 15 + 45] == 0x2A  # field 5, length-delimited: VersionInfo
    assert b"2.6.1" in header


def test_get_call_golden() -> None:
    request = get_request(b"r", Get(b"a"))
    # GetRequest: 1 region { 1 type REGION_NAME, 2 value "r" }, 2 get { 1 row "a",
    # 6 max_versions 1 }
    assert request == bytes.fromhex("0a05" "0801" "120172" "1205" "0a0161" "3001")
    frame = encode_call(1, "Get", request)
    assert frame == bytes.fromhex(
        "00000019"  # total 25
        "09" "0801" "1a03476574" "2001"  # RequestHeader: call_id 1, "Get", request_param
        "0e") + request
    assert decode_call(frame[4:])[:4] == (1, "Get", request, b"")


def test_call_with_cell_block_and_timeout() -> None:
    block = encode_cell_block([CELL])
    frame = encode_call(300, "Multi", b"\x0a\x00", block, timeout_ms=5000)
    call = decode_call(frame[4:])
    assert call == (300, "Multi", b"\x0a\x00", block, 5000)
    # RequestHeader holds 5 cell_block_meta { 1 length 28 }
    assert bytes.fromhex("2a02081c") in frame


def test_cell_block_golden_and_round_trip() -> None:
    assert encode_cell_block([CELL]) == CELL_BYTES
    cells = [CELL, Cell(b"row2", b"f", b"", 2**62, CellType.DELETE_FAMILY),
             Cell(b"r", b"f", b"q", 7, CellType.DELETE_COLUMN, b"")]
    block = encode_cell_block(cells)
    assert decode_cells(block, 0, 3) == (tuple(cells), len(block))
    first, pos = decode_cells(block, 0, 1)
    assert first == (CELL,) and pos == len(CELL_BYTES)


def test_cell_block_drops_tags_as_keyvalue_codec_does() -> None:
    tagged = CELL._replace(tags=(Tag(1, b"x"),))
    assert encode_cell_block([tagged]) == CELL_BYTES


def test_cell_block_with_tags_golden() -> None:
    """KeyValueCodecWithTags: L counts the tags area (2 + 4 bytes): int16 tags length 4,
    then the tag: int16 length 2 (type and value), type 66, value "x"."""
    tagged = CELL._replace(tags=(Tag(66, b"x"),))
    block = encode_cell_block([tagged], tags=True)
    assert block == bytes.fromhex("0000001e") + CELL_BYTES[4:] + bytes.fromhex("0004" "0002"
                                                                                 "42" "78")
    assert decode_cells(block, 0, 1) == ((tagged,), len(block))


def test_cell_block_too_short_is_an_error_with_the_offset() -> None:
    with pytest.raises(CellCorruptError, match="fewer than 2 cells from offset 0"):
        decode_cells(CELL_BYTES, 0, 2)
    with pytest.raises(CellCorruptError):
        decode_cells(CELL_BYTES[:-1], 0, 1)


GET_REPLY = bytes.fromhex(
    "00000028"  # total 40 = 7 + 5 + 28
    "06" "0801" "1a02081c"  # ResponseHeader: call_id 1, 3 cell_block_meta { length 28 }
    "04" "0a021001"  # GetResponse: 1 result { 2 associated_cell_count 1 }
) + CELL_BYTES


def test_reply_golden_with_cell_block() -> None:
    response, block = get_response([CELL])
    assert encode_reply(1, response, block) == GET_REPLY
    reply = decode_reply(GET_REPLY[4:])
    assert (reply.call_id, reply.exception, reply.response, reply.cell_block) == \
        (1, None, bytes.fromhex("0a021001"), CELL_BYTES)


EXCEPTION_REPLY = bytes.fromhex(
    "0000000d"  # total 13
    "0c" "0807"  # ResponseHeader: call_id 7
    "1208" "0a0145" "120178" "2800"  # 2 exception { 1 class "E", 2 trace "x", 5 false }
)


def test_exception_reply_golden() -> None:
    assert encode_reply(7, exception=RemoteException("E", "x")) == EXCEPTION_REPLY
    reply = decode_reply(EXCEPTION_REPLY[4:])
    assert reply.call_id == 7 and reply.response is None
    assert reply.exception == RemoteException("E", "x")


def test_connection_refusal_has_call_id_minus_one() -> None:
    # Java's setCallId(-1) on a uint32 field: the varint of 0xFFFFFFFF (5 bytes)
    frame = encode_reply(CONNECTION_CALL_ID, exception=RemoteException(
        "org.apache.hadoop.hbase.ipc.FatalConnectionException", "bad", do_not_retry=True))
    assert bytes.fromhex("08ffffffff0f") in frame
    assert decode_reply(frame[4:]).call_id == CONNECTION_CALL_ID


def test_regionmoved_exception_carries_host_and_port() -> None:
    exc = RemoteException("org.apache.hadoop.hbase.exceptions.RegionMovedException", "moved",
                          "rs2", 16020, False, False)
    assert decode_reply(encode_reply(3, exception=exc)[4:]).exception == exc


def test_a_reply_cut_at_every_byte_waits() -> None:
    stream = GET_REPLY + EXCEPTION_REPLY
    for cut in range(len(stream) + 1):
        decoder = ReplyDecoder("rs1:16020")
        first = decoder.feed(stream[:cut])
        rest = decoder.feed(stream[cut:])
        replies = first + rest
        assert [r.call_id for r in replies] == [1, 7], cut
        assert [r.offset for r in replies] == [0, len(GET_REPLY)]
        assert decoder.pending == 0 and decoder.offset == len(stream)


def test_one_byte_at_a_time() -> None:
    decoder = ReplyDecoder()
    got = []
    for b in GET_REPLY * 3:
        got += decoder.feed(bytes((b,)))
    assert [r.offset for r in got] == [0, 44, 88]


def test_a_negative_length_is_garbage_at_its_offset() -> None:
    decoder = ReplyDecoder("rs1:16020")
    assert [r.call_id for r in decoder.feed(GET_REPLY + b"\xff\xff\xff\xff")] == [1]
    with pytest.raises(RpcFrameError, match=r"server rs1:16020, reply stream byte offset 44 "
                       r"\(call id unknown\): frame length -1") as info:
        decoder.check()
    assert info.value.offset == 44 and info.value.call_id is None


def test_garbage_after_the_call_id_names_the_call() -> None:
    # call id 9, then field 3 (cell_block_meta) claiming 5 bytes where 1 follows
    bad = bytes.fromhex("00000006" "05" "0809" "1a0508")
    decoder = ReplyDecoder()
    decoder.feed(GET_REPLY)
    with pytest.raises(RpcFrameError, match="call id 9") as info:
        decoder.feed(bad)
    assert info.value.call_id == 9 and info.value.offset == 44 + 4 + 1


def test_a_cell_block_length_that_does_not_fit_is_garbage() -> None:
    bad = bytes.fromhex("00000008" "06" "0802" "1a020864" "00")  # block of 100, 0 left
    with pytest.raises(RpcFrameError, match=r"call id 2.*cell block of 100"):
        ReplyDecoder().feed(bad)
