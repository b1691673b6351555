"""Fuzzing the reply decoder (hypothesis): a stream of real replies with bytes flipped,
cut or inserted, fed in random pieces, yields replies or one RpcFrameError naming an
offset within the stream, never another exception; the same bytes give the same outcome
whatever the pieces."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.rpc.codec import RemoteException, Reply, ReplyDecoder, encode_reply
from hbase_migrate.rpc.errors import RpcFrameError
from hbase_migrate.rpc.messages import get_response
from hbase_migrate.rpc.scan import ScanResponse, scan_response
from hbase_migrate.wal.model import Cell, CellType

CELL = Cell(b"row", b"f", b"q", 7, CellType.PUT, b"value")
STREAM = (encode_reply(0, *get_response([CELL, CELL]))
          + encode_reply(1, exception=RemoteException("x.Y", "trace", "h", 1))
          + encode_reply(2, *scan_response(ScanResponse(3, ((CELL,),), (False,), True, True))))


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    data = bytearray(STREAM)
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(data) - 1))
        action = draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "flip":
            data[i] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[i:]
            if not data:
                break
        else:
            data.insert(i, draw(st.integers(0, 255)))
    return bytes(data)


def outcome(data: bytes, pieces: list[int]) -> tuple[list[Reply], tuple[int, int | None] | None]:
    decoder = ReplyDecoder("rs:1", max_frame=1 << 20)
    replies: list[Reply] = []
    pos = 0
    try:
        for size in [*pieces, len(data)]:
            replies += decoder.feed(data[pos : pos + size])
            pos += size
        decoder.check()
    except RpcFrameError as exc:
        assert 0 <= exc.offset <= len(data)
        return replies, (exc.offset, exc.call_id)
    return replies, None


@settings(max_examples=400, deadline=2000)
@given(damaged(), st.lists(st.integers(0, 40), max_size=8))
def test_damaged_streams_give_replies_or_one_frame_error(data: bytes, pieces: list[int]) -> None:
    whole = outcome(data, [])
    assert outcome(data, pieces) == whole
