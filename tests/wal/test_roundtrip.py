"""Writer -> reader round trips over every option, and dictionary eviction."""

from __future__ import annotations

import io

import pytest
from conftest import ALL_OPTIONS, OPTION_IDS, options_st, pairs_of, pairs_st, read_all, wal_bytes
from hypothesis import HealthCheck, given, settings

from hbase_migrate.wal.model import Cell, Tag, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=pairs_st, options=options_st, trailer=...)
def test_round_trip(
    pairs: list[tuple[WalKey, tuple[Cell, ...]]], options: WalOptions, trailer: bool
) -> None:
    data = wal_bytes(pairs, options, trailer=trailer)
    entries, reader = read_all(data, recovered_edits=options.recovered_edits)
    assert pairs_of(entries) == pairs
    assert [e.index for e in entries] == list(range(len(pairs)))
    # offsets and sizes tile the edit area exactly
    pos = entries[0].offset if entries else reader.end_offset
    for entry in entries:
        assert entry.offset == pos
        pos += entry.size
    assert reader.end_offset == pos == len(data) - (8 if trailer else 0)
    assert reader.end_reason == ("trailer" if trailer else "eof")
    assert reader.has_trailer == trailer
    # write-read-write is byte-identical
    assert wal_bytes(pairs_of(entries), options, trailer=trailer) == data


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=OPTION_IDS)
def test_append_reports_offsets(options: WalOptions) -> None:
    out = io.BytesIO()
    writer = WalWriter(out, options)
    key = WalKey(b"a" * 32, b"t", 1, 2)
    spans = [writer.append(key, [Cell(b"r%d" % i, b"f", b"q", 1, 4, b"v")]) for i in range(3)]
    assert writer.tell() == spans[-1][0] + spans[-1][1]
    writer.close()
    entries, _ = read_all(out.getvalue(), recovered_edits=options.recovered_edits)
    assert [(e.offset, e.size) for e in entries] == spans


def _eviction_pairs() -> list[tuple[WalKey, tuple[Cell, ...]]]:
    """More than 127 families and qualifiers and 32767 rows, with old ones coming back."""
    pairs = []
    for i in range(700):
        cells = tuple(
            Cell(
                b"row%06d" % ((i * 50 + j) % 34000 if i % 7 else j),  # rows evicted, then reused
                b"fam%03d" % ((i + j) % 200),
                b"q%03d" % ((i * 3 + j) % 300),
                i,
                4,
                b"",
                (Tag(1, b"t%05d" % (i % 40)),) if j == 0 else (),
            )
            for j in range(50)
        )
        key = WalKey(
            b"%032d" % (i % 5), b"t%d" % (i % 3), i, i, scopes=((b"fam%03d" % (i % 150), 1),)
        )
        pairs.append((key, cells))
    return pairs


@pytest.mark.parametrize("recovered", [False, True])
def test_lru_eviction(recovered: bool) -> None:
    pairs = _eviction_pairs()
    options = WalOptions(compression=True, recovered_edits=recovered)
    data = wal_bytes(pairs, options)
    entries, _ = read_all(data, recovered_edits=recovered)
    assert pairs_of(entries) == pairs
    assert len(data) < len(wal_bytes(pairs))  # references were used


def test_recovered_edits_decided_from_the_name(tmp_path: object) -> None:
    import pathlib

    folder = pathlib.Path(str(tmp_path)) / "recovered.edits"
    folder.mkdir()
    pairs = [(WalKey(b"r%d" % i, b"t%d" % i, i, i), ()) for i in range(3)] * 2
    path = folder / "0000000000000000012"
    path.write_bytes(wal_bytes(pairs, WalOptions(compression=True, recovered_edits=True)))
    with WalReader(str(path)) as reader:
        assert pairs_of(list(reader)) == pairs
    other = pathlib.Path(str(tmp_path)) / "copy"
    other.write_bytes(path.read_bytes())
    with WalReader(str(other), recovered_edits=True) as reader:
        assert pairs_of(list(reader)) == pairs


def test_zero_cell_entry_is_kept() -> None:
    pairs = [
        (WalKey(b"r", b"t", 1, 1), ()),
        (WalKey(b"r", b"t", 2, 2), (Cell(b"a", b"f", b"", 1, 4),)),
    ]
    entries, reader = read_all(wal_bytes(pairs))
    assert pairs_of(entries) == pairs and reader.end_reason == "trailer"


def test_writer_refuses_before_touching_dictionaries() -> None:
    out = io.BytesIO()
    writer = WalWriter(out, WalOptions(compression=True))
    with pytest.raises(ValueError, match="row"):
        writer.append(WalKey(b"r", b"t", 1, 1), [Cell(b"x" * 40000, b"f", b"", 1, 4)])
    good = [Cell(b"a", b"f", b"", 1, 4)]
    writer.append(WalKey(b"r", b"t", 1, 1), good)
    writer.close()
    entries, _ = read_all(out.getvalue())
    assert pairs_of(entries) == [(WalKey(b"r", b"t", 1, 1), tuple(good))]
