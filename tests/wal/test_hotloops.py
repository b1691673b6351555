"""The compiled hot loops against the pure-Python reference: built by the set-up, chosen by
the environment, and the same entries, end and error for the same damaged file."""

from __future__ import annotations

import gc
import io
from collections import Counter
from typing import Any

import pytest
from conftest import ALL_OPTIONS, simple_pairs, wal_bytes
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wal_damage import damaged

from hbase_migrate.compiled import Implementation
from hbase_migrate.errors import WalError
from hbase_migrate.wal import hotloops
from hbase_migrate.wal.cells import encode_plain_block
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType, Entry, Tag, WalKey
from hbase_migrate.wal.reader import WalReader


def usual_pairs(n: int) -> list[Any]:
    """Entries whose keys take the compiled path: no cluster ids, none to three scopes
    (changing from key to key), sometimes nonces and an original sequence number."""
    pairs = []
    for (key, cells) in simple_pairs(n, tags=True):
        i = key.sequence
        pairs.append((WalKey(key.encoded_region_name, key.table_name, key.sequence,
                             key.write_time,
                             scopes=tuple((b"f%d" % k, 1) for k in range(i % 4)),
                             nonce_group=i * 7 if i % 2 else None,
                             nonce=i * 11 if i % 2 else None,
                             orig_sequence=i if i % 3 == 0 else None), cells))
    return pairs


USUAL = [wal_bytes(usual_pairs(8), options, trailer=trailer)
         for options in ALL_OPTIONS for trailer in (True, False)]


@st.composite
def damaged_usual(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(USUAL)))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(data) - 1))
        data[pos] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF, data[pos] ^ 0x10]))
    return bytes(data)


def test_the_set_up_builds_the_compiled_loops() -> None:
    assert hotloops.COMPILED is not None, (
        "hbase_migrate/wal/_hotloops is not built: run `make setup` "
        "(or `python scripts/build-speedups.py`)")


def block_pairs(n: int) -> list[Any]:
    """Entries of which most make a ``CellBlock`` (one row; all Puts, or all deletes, of two
    families), and some cannot: two rows, a Put beside a delete, tags, a marker, an odd
    type code, no cells."""
    pairs = []
    for i in range(n):
        key = WalKey(b"%032x" % (i % 3), b"t%d" % (i % 2), i + 1, 1_700_000_000_000 + i)
        row = b"row\x00\xff-%d" % i
        kinds = (CellType.PUT,) if i % 3 else (CellType.DELETE, CellType.DELETE_COLUMN,
                                               CellType.DELETE_FAMILY,
                                               CellType.DELETE_FAMILY_VERSION)
        cells = [Cell(row, b"f%d" % (j % 2), b"q\x01%d" % j, 1_700_000_000_000 - j,
                      kinds[j % len(kinds)], b"v\\\xfe" * j if i % 3 else b"")
                 for j in range(1 + i % 4)]
        odd = i % 11
        if odd == 1:
            cells.append(cells[0]._replace(row=b"another row"))
        elif odd == 2:
            cells.append(cells[0]._replace(type=CellType.DELETE if i % 3 else CellType.PUT))
        elif odd == 3:
            cells[-1] = cells[-1]._replace(tags=(Tag(8, b"\x00\x01"),))
        elif odd == 4:
            cells.insert(0, Cell(row, METAFAMILY, b"HBASE::FLUSH", 1, CellType.PUT, b"x"))
        elif odd == 5:
            cells.append(cells[0]._replace(type=6))
        elif odd == 6:
            cells = []
        pairs.append((key, cells))
    return pairs


BLOCKS = [wal_bytes(block_pairs(40), options, trailer=trailer)
          for options in ALL_OPTIONS[:2] for trailer in (True, False)]


@st.composite
def damaged_blocks(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(BLOCKS)))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(len(data) // 10, len(data) - 1))
        data[pos] = draw(st.sampled_from([0x00, 0x01, 0x04, 0x7F, 0x80, 0xFF, data[pos] ^ 0x10]))
    return bytes(data)


def _outcome(data: bytes, name: Implementation, *, blocks: bool = False) -> tuple[Any, ...]:
    """The entries (each block's cells as the Cells it holds), and how the read ended."""
    hotloops.use(name)
    entries = []
    try:
        reader = WalReader(io.BytesIO(data), name="same.wal", cell_blocks=blocks)
        for entry in reader:
            entries.append(entry if type(entry.cells) is tuple
                           else entry._replace(cells=tuple(entry.cells)))
    except (WalError, ValueError) as exc:
        return tuple(entries), type(exc).__name__, str(exc)
    return tuple(entries), reader.end_offset, reader.end_reason


@pytest.fixture
def reference_after() -> Any:
    if hotloops.COMPILED is None:
        pytest.skip("the compiled hot loops are not built")
    before = hotloops.implementation()
    yield
    hotloops.use(before)


@settings(max_examples=400, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged())
def test_damaged_files_read_the_same(reference_after: None, case: tuple[bytes, int]) -> None:
    data, _ = case
    assert _outcome(data, "compiled") == _outcome(data, "python")


@settings(max_examples=400, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged_usual())
def test_damaged_usual_keys_read_the_same(reference_after: None, data: bytes) -> None:
    assert _outcome(data, "compiled") == _outcome(data, "python")


def test_usual_keys_take_the_compiled_path(reference_after: None,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Keys in the usual layout never reach the reference decoder (so the tests above
    compare two decoders, not one with itself)."""
    assert hotloops.COMPILED is not None

    def refuse(*_: object) -> None:
        raise AssertionError("a usual key went to the reference decoder")

    for data in USUAL:
        expected = _outcome(data, "python")
        with monkeypatch.context() as patch:
            patch.setattr(hotloops.COMPILED, "_reference_key", refuse)
            assert _outcome(data, "compiled") == expected


def test_the_compiled_cells_and_keys_are_left_out_of_the_cycle_collector(
        reference_after: None) -> None:
    """They hold only bytes, ints and tuples of them: nothing for the collector to scan
    (CPython would keep scanning them: it untracks only exact tuples)."""
    entries = _outcome(USUAL[0], "compiled")[0]
    assert entries and entries == _outcome(USUAL[0], "python")[0]
    for entry in entries:
        assert not gc.is_tracked(entry.key) and not gc.is_tracked(entry.cells)
        assert not any(gc.is_tracked(cell) for cell in entry.cells)


@pytest.mark.parametrize("options", ALL_OPTIONS[:7], ids=lambda o: repr(o)[:40])
def test_every_cut_reads_the_same(reference_after: None, options: Any) -> None:
    data = wal_bytes(usual_pairs(5), options, trailer=False)
    for end in range(0, len(data), max(1, len(data) // 150)):
        assert _outcome(data[:end], "compiled") == _outcome(data[:end], "python"), end


def test_what_repeats_is_made_once(reference_after: None) -> None:
    """A file's table name and scopes, an entry's row and its timestamp, are one object
    each where they repeat (a decoded file does not hold them once per cell)."""
    pairs = [(WalKey(b"r" * 32, b"t", i, 5, scopes=((b"d", 1), (b"e", 1)) if i < 6 else ()),
              [c._replace(row=b"row-%d" % i, timestamp=1_700_000_000_009) for c in cells])
             for i, (_, cells) in enumerate(simple_pairs(8), 1)]
    entries = _outcome(wal_bytes(pairs, ALL_OPTIONS[0]), "compiled")[0]
    assert entries == _outcome(wal_bytes(pairs, ALL_OPTIONS[0]), "python")[0]
    keys = [e.key for e in entries]
    assert all(k.table_name is keys[0].table_name for k in keys)
    assert all(k.encoded_region_name is keys[0].encoded_region_name for k in keys)
    assert all(k.scopes is keys[0].scopes for k in keys[:5]) and keys[5].scopes == ()
    for entry in entries:
        assert len({id(c.row) for c in entry.cells}) <= 1
        assert len({id(c.timestamp) for c in entry.cells}) <= 1
    assert sum(len(e.cells) > 1 for e in entries) >= 3


@settings(max_examples=300, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged_blocks())
def test_damaged_blocks_read_the_same(reference_after: None, data: bytes) -> None:
    assert _outcome(data, "compiled", blocks=True) == _outcome(data, "python")


@pytest.mark.parametrize("options", ALL_OPTIONS[:2], ids=["plain", "dict"])
def test_every_cut_of_blocks_reads_the_same(reference_after: None, options: Any) -> None:
    data = wal_bytes(block_pairs(12), options, trailer=False)
    for end in range(0, len(data), max(1, len(data) // 150)):
        expected = _outcome(data[:end], "python")
        assert _outcome(data[:end], "compiled", blocks=True) == expected, end


def test_the_usual_entry_comes_as_one_block(reference_after: None) -> None:
    """One row, one kind, known codes, no tags or markers: a CellBlock, whose figures are
    those of the Cells it holds; every other entry (and every one of a compressed file)
    comes as Cells."""
    pairs = block_pairs(40)
    hotloops.use("compiled")
    with WalReader(io.BytesIO(wal_bytes(pairs)), cell_blocks=True) as reader:
        entries = list(reader)
    blocks = 0
    for entry, (_, cells) in zip(entries, pairs, strict=True):
        kinds = {c.type == CellType.PUT for c in cells}
        usual = (cells and len({c.row for c in cells}) == 1 and len(kinds) == 1
                 and not any(c.tags or c.family == METAFAMILY or c.type == 6 for c in cells))
        if not usual:
            assert type(entry.cells) is tuple and entry.cells == tuple(cells)
            continue
        block = entry.cells
        blocks += 1
        assert type(block) is hotloops.COMPILED.CellBlock and not gc.is_tracked(block)
        assert tuple(block) == tuple(cells) and list(block) == cells and len(block) == len(cells)
        assert block[len(cells) - 1] == cells[-1] and block.row == cells[0].row
        assert block.puts == (cells[0].type == CellType.PUT)
        assert block.families == tuple(dict.fromkeys(c.family for c in cells))
        assert block.size == sum(len(c.row) + len(c.family) + len(c.qualifier) + len(c.value)
                                 for c in cells)
        assert block.type_counts() == Counter(int(c.type) for c in cells)
        # its own bytes, not the reader's window (a batch holds what its cells weigh)
        assert len(block.buf) == block.end - block.start < entry.size
    assert blocks > 12
    with WalReader(io.BytesIO(wal_bytes(pairs, ALL_OPTIONS[1])), cell_blocks=True) as reader:
        assert all(type(entry.cells) is tuple for entry in reader)


def _markers_only(data: bytes) -> tuple[Any, ...]:
    """What a compiled ``markers_only`` read of ``data`` gives."""
    hotloops.use("compiled")
    entries: list[Entry] = []
    try:
        reader = WalReader(io.BytesIO(data), name="same.wal", markers_only=True)
        entries.extend(reader)
    except (WalError, ValueError) as exc:
        return tuple(entries), type(exc).__name__, str(exc)
    return tuple(entries), reader.end_offset, reader.end_reason


def _left_out(data: bytes) -> tuple[Any, ...]:
    """The reference's full read of ``data``, with the cells a ``markers_only`` read may
    leave out left out: an uncompressed entry's with neither a marker nor tags."""
    entries, *end = _outcome(data, "python")
    if not entries:
        return entries, *end
    plain = not WalReader(io.BytesIO(data)).header.has_compression
    return tuple(e._replace(cells=()) if plain and not any(
        c.family == METAFAMILY or c.tags for c in e.cells) else e for e in entries), *end


def test_a_markers_only_read_keeps_every_key_and_marker(reference_after: None) -> None:
    """The entries of a ``markers_only`` read: every key, offset and size; the cells of an
    entry with a marker or tags, and of every entry of a compressed file."""
    pairs = block_pairs(40)
    for options in ALL_OPTIONS[:2]:
        data = wal_bytes(pairs, options)
        entries, end, reason = _markers_only(data)
        assert (entries, end, reason) == _left_out(data)
        assert len(entries) == len(pairs) and reason == "trailer"
        with_cells = [i for i, e in enumerate(entries) if e.cells]
        if options.compression:
            assert len(with_cells) == sum(1 for _, cells in pairs if cells)
        else:
            assert with_cells == [i for i, (_, cells) in enumerate(pairs)
                                  if any(c.family == METAFAMILY or c.tags for c in cells)]
            assert 0 < len(with_cells) < len(pairs) // 2


@settings(max_examples=300, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.one_of(damaged_blocks(), damaged().map(lambda case: case[0])))
def test_a_damaged_file_fails_a_markers_only_read_as_a_full_one(reference_after: None,
                                                                 data: bytes) -> None:
    assert _markers_only(data) == _left_out(data)


def test_every_cut_of_a_markers_only_read_ends_as_a_full_one(reference_after: None) -> None:
    data = wal_bytes(block_pairs(12), trailer=False)
    for end in range(0, len(data), max(1, len(data) // 150)):
        assert _markers_only(data[:end]) == _left_out(data[:end]), end


cells_to_encode = st.lists(st.builds(
    Cell, st.binary(max_size=40), st.binary(max_size=6), st.binary(max_size=20),
    st.integers(-(1 << 63), (1 << 63) - 1), st.sampled_from([0, 4, 8, 10, 12, 14, 255]),
    st.binary(max_size=300),
    st.lists(st.builds(Tag, st.integers(0, 255), st.binary(min_size=0, max_size=8)),
             max_size=2).map(tuple)), max_size=20)


@settings(max_examples=150, deadline=None)
@given(cells_to_encode, st.booleans())
def test_cell_blocks_encode_the_same(cells: list[Cell], tags: bool) -> None:
    """The compiled cell block encoder writes the reference's bytes (tags kept or left
    out), and what the reference refuses, it refuses."""
    compiled = hotloops.COMPILED
    if compiled is None:
        pytest.skip("the compiled loops are not built")
    assert compiled.encode_plain_block(cells, tags) == encode_plain_block(cells, tags)
    assert compiled.encode_plain_block(iter(cells), tags) == encode_plain_block(cells, tags)
    for bad in (Cell(b"r" * 32768, b"f", b"q", 1, 4), Cell(b"r", b"f" * 128, b"q", 1, 4),
                Cell(b"r", b"f", b"q", 1, 256)):
        with pytest.raises(ValueError):
            compiled.encode_plain_block([*cells, bad])
