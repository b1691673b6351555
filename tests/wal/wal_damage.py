"""Damaged WAL files, shared by test_fuzz and test_hotloops: samples of every WAL option
set, with and without a trailer, and a Hypothesis strategy that damages one after its
header (a bit flipped, bytes inserted, deleted or set)."""

from __future__ import annotations

import io

from conftest import ALL_OPTIONS, simple_pairs, wal_bytes
from hypothesis import strategies as st

from hbase_migrate.wal.reader import WalReader

SAMPLES = [
    wal_bytes(simple_pairs(6, tags=True), options, trailer=trailer)
    for options in ALL_OPTIONS
    for trailer in (True, False)
]
HEADER_ENDS = [WalReader(io.BytesIO(s)).end_offset for s in SAMPLES]


@st.composite
def damaged(draw: st.DrawFn) -> tuple[bytes, int]:
    i = draw(st.integers(0, len(SAMPLES) - 1))
    data = bytearray(SAMPLES[i])
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(HEADER_ENDS[i], len(data) - 1))
        kind = draw(st.sampled_from(["flip", "insert", "delete", "set"]))
        if kind == "flip":
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=4))
        elif kind == "delete":
            del data[pos : pos + draw(st.integers(1, 4))]
        else:
            data[pos] = draw(st.sampled_from([0x00, 0x7F, 0x80, 0xFF]))
    return bytes(data), i
