"""Every prefix of a valid WAL reads cleanly up to its last complete entry."""

from __future__ import annotations

import pytest
from conftest import ALL_OPTIONS, OPTION_IDS, pairs_of, read_all, simple_pairs, wal_bytes

from hbase_migrate.errors import WalEmptyError
from hbase_migrate.wal.writer import WalOptions

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops


@pytest.mark.parametrize("trailer", [True, False], ids=["trailer", "no-trailer"])
@pytest.mark.parametrize("options", ALL_OPTIONS[:5], ids=OPTION_IDS[:5])
def test_every_prefix(options: WalOptions, trailer: bool) -> None:
    pairs = simple_pairs(12, tags=True)
    data = wal_bytes(pairs, options, trailer=trailer)
    full, _ = read_all(data)
    ends = [e.offset + e.size for e in full]
    header_end = full[0].offset
    for cut in range(len(data) + 1):
        prefix = data[:cut]
        if cut < header_end:
            with pytest.raises(WalEmptyError):
                read_all(prefix)
            continue
        entries, reader = read_all(prefix)
        complete = [end for end in ends if end <= cut]
        assert pairs_of(entries) == pairs[: len(complete)], cut
        assert reader.end_offset == (complete[-1] if complete else header_end)
        edit_end = ends[-1]
        if cut == len(data) and trailer:
            assert reader.end_reason == "trailer" and reader.has_trailer
        elif cut == edit_end:
            assert reader.end_reason == "eof"
        elif cut > edit_end:
            assert reader.end_reason == "partial_trailer"
        elif cut in ends or cut == header_end:
            assert reader.end_reason == "eof"
        else:
            assert reader.end_reason == "truncated", cut


def test_empty_and_headerless_messages() -> None:
    with pytest.raises(WalEmptyError, match="zero-length"):
        read_all(b"")
    with pytest.raises(WalEmptyError, match="inside the magic"):
        read_all(b"PW")
    with pytest.raises(WalEmptyError, match="magic only"):
        read_all(b"PWAL")
    with pytest.raises(WalEmptyError, match="inside the 80-byte WAL header"):
        read_all(wal_bytes([])[:30])
