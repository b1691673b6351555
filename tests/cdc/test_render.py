"""The compiled message renderer against the reference (``message_key``, ``message_value``,
``debezium_value``): the same bytes for every kind of cell and position, in both envelopes;
built by the set-up and chosen by the environment."""

from __future__ import annotations

import gc
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.replay.apply import count_cells
from hbase_migrate.replay.mutations import (
    KNOWN_TYPES,
    Kind,
    RowMutation,
    WalPosition,
    to_mutations,
)
from hbase_migrate.sinks import render
from hbase_migrate.sinks.debezium import debezium_value
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value, row_edits
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType, Tag, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

ROW = b'r"\\\x00\xff\xe9'
DELETES = (CellType.DELETE, CellType.DELETE_COLUMN, CellType.DELETE_FAMILY,
           CellType.DELETE_FAMILY_VERSION)


def varied_cells(rng: random.Random) -> list[Cell]:
    """Binary and unicode bytes, every delete type, tags, markers, odd type codes and
    timestamps, large values."""
    cells = [Cell(ROW, b"d", b'q"\\', -3, CellType.PUT, bytes(range(256))),
             Cell(ROW, b"d", b"t", 7, CellType.PUT, b"v", (Tag(8, b"\x01t"), Tag(1, b""))),
             Cell(ROW, METAFAMILY, b"HBASE::FLUSH", 1, CellType.PUT, b"\x00"),
             Cell(ROW, b"d", b"u", 1, 99, b""),
             Cell(ROW, b"d", b"big", 2**63 - 1, int(CellType.PUT), os.urandom(1 << 20)),
             Cell(ROW, b"d", b"huge-ts", 2**70, int(CellType.PUT), b"x"),
             Cell(ROW, b"d", b"least-ts", -2**63, int(CellType.PUT), b"x"),
             Cell("caf\u00e9".encode(), b"f", "\u00fc".encode(), 0, int(CellType.PUT),
                  "\u2603 snow".encode()),
             Cell(ROW, b"d", b'say "hi"', 1, CellType.PUT, b"printable ~ ok")]
    cells += [Cell(ROW, b"m", b"c", 5, int(kind)) for kind in DELETES]
    cells += [Cell(ROW, b"m", b"", 5, kind) for kind in DELETES]
    for _ in range(300):
        cells.append(Cell(rng.choice([ROW, rng.randbytes(rng.randint(0, 9))]),
                          rng.randbytes(rng.randint(0, 3)), rng.randbytes(rng.randint(0, 12)),
                          rng.randrange(-2**63, 2**63), int(rng.choice(list(CellType))),
                          rng.randbytes(rng.randint(0, 300))))
    return cells


def varied_edits() -> Iterator[RowEdit]:
    rng = random.Random(25)
    cells = varied_cells(rng)
    positions = [WalPosition("wal.1", 100, 3, 42, 1_700_000_000_123),
                 WalPosition('WALs/rs,1,2/r\u00e9s "1"\\.1', 0, 0),
                 WalPosition("hdfs://nn/hbase/oldWALs/rs%2C1.2", 7, 1, None, 5),
                 WalPosition("wal.3", 2**40, 2**31, 2**64, -1),
                 WalPosition("wal.4", 9, 10, 99, -100)]  # digits written in pairs
    for p, position in enumerate(positions):
        for table in ("ns:t", "t\u00e9", 't"\\'):
            for start in range(0, len(cells), 37):
                yield RowEdit(table, cells[start].row, position,
                              tuple(cells[start + p:start + 37 + p]))
    yield RowEdit("t", ROW, positions[0], tuple(Cell(ROW, b"m", b"", 1, CellType.DELETE_FAMILY)
                                                for _ in range(3)))
    yield RowEdit("t", ROW, positions[0], (Cell(ROW, b"m", b"", True, 4, b""),))  # odd types
    yield RowEdit("t", bytearray(ROW), positions[0], (Cell(ROW, b"m", b"", 1, 4, b"v"),))


@pytest.fixture
def compiled() -> Iterator[None]:
    if render.COMPILED is None:
        pytest.fail("hbase_migrate/sinks/_render is not built: run `make setup` "
                    "(or `python scripts/build-speedups.py`)")
    before = render.implementation()
    render.use("compiled")
    yield
    render.use(before)


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_the_compiled_renderer_writes_the_reference_bytes(envelope: str) -> None:
    edits = list(varied_edits())
    keys, values = render.render(edits, envelope, "cluster-\u00e9\"1", now=1_700_000_000_999)
    assert keys == [message_key(e.table, bytes(e.row)) for e in edits]
    for edit, value in zip(edits, values, strict=True):
        if envelope == "native":
            assert value == message_value(edit), edit
        else:
            assert value == debezium_value(edit, "cluster-\u00e9\"1", now=1_700_000_000_999), edit


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_plain_fields_take_the_compiled_path(envelope: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Only fields of other types than the reader's go to the reference (tags and
    markers are rendered by the reference's helper, within the compiled message)."""
    edits = list(varied_edits())
    usual, odd = edits[:-2], edits[-2:]
    expected = render.render(edits, envelope, "c", now=1)
    monkeypatch.setattr("hbase_migrate.sinks.messages.message_value", None)
    monkeypatch.setattr("hbase_migrate.sinks.debezium.debezium_value", None)
    assert render.render(usual, envelope, "c", now=1) == (expected[0][:-2], expected[1][:-2])
    for edit in odd:
        with pytest.raises(TypeError):
            render.render([edit], envelope, "c", now=1)


@pytest.mark.usefixtures("compiled")
def test_debezium_events_are_stamped_when_made() -> None:
    edit = next(varied_edits())
    before = int(time.time() * 1000)
    _, (value,) = render.render([edit], "debezium", "c")
    stamp = int(value.split(b'"ts_ms":', 1)[1].split(b",", 1)[0])
    assert before <= stamp <= time.time() * 1000
    assert value == debezium_value(edit, "c", now=stamp)


def varied_mutations() -> list[RowMutation]:
    """Entries of one row and of several (rows repeated, puts and deletes mixed), as the
    replay converts them."""
    rng = random.Random(26)
    cells = [c for c in varied_cells(rng) if c.type in KNOWN_TYPES]
    mutations: list[RowMutation] = []
    for entry, start in enumerate(range(0, len(cells), 5)):
        position = WalPosition("wal.1", 10 * entry, entry, entry, 1_700_000_000_000 + entry)
        group = cells[start:start + rng.choice((1, 1, 2, 5))]
        rows = [ROW, b"other"]
        group = [c._replace(row=rng.choice(rows)) if rng.random() < 0.3 else c for c in group]
        mutations += to_mutations(group, position)
    return mutations


@pytest.mark.usefixtures("compiled")
def test_the_compiled_edits_are_the_reference_edits() -> None:
    mutations = varied_mutations()
    assert len({m.position for m in mutations}) < len(mutations)  # entries of several
    edits = render.edits_of("ns:t", mutations)
    assert edits == list(row_edits("ns:t", mutations))
    assert any(not gc.is_tracked(e) for e in edits)  # the usual ones: made compiled
    assert render.edits_of("t", []) == []
    odd = [*mutations[:3], Odd(*mutations[3])]  # another type: all to the reference
    assert render.edits_of("t", odd) == list(row_edits("t", odd))


class Odd(RowMutation):
    """A mutation of a type the compiled path does not read."""


def block_edits(tmp_path: Path) -> tuple[list[RowEdit], list[RowMutation]]:
    """The edits and mutations of a WAL read as the stream reads it: most entries' cells
    a reader's ``CellBlock`` (one row and kind, binary and unicode bytes, every delete
    type, odd timestamps, a 1 MiB value), some Cells (tags, two rows)."""
    rng = random.Random(27)
    cells = [c for c in varied_cells(rng)
             if c.type in KNOWN_TYPES and c.family != METAFAMILY and -2**63 <= c.timestamp < 2**63]
    pairs = []
    for i, start in enumerate(range(0, len(cells), 3)):
        group = [c._replace(row=cells[start].row) for c in cells[start:start + 1 + i % 3]
                 if (c.type == CellType.PUT) == (cells[start].type == CellType.PUT)]
        if i % 7 == 3:
            group.append(group[0]._replace(row=b"another"))
        pairs.append((WalKey(b"r" * 32, b"ns:t", i + 1, 1_700_000_000_000 + i), group))
    path = tmp_path / "wal.1"
    with path.open("wb") as out:
        writer = WalWriter(out, WalOptions())
        for key, group in pairs:
            writer.append(key, group)
        writer.close()
    batch: list[RowMutation] = []
    with WalReader(path, cell_blocks=True) as reader:
        for entry in reader:
            position = WalPosition(str(path), entry.offset, entry.index, entry.key.sequence,
                                   entry.key.write_time)
            if type(entry.cells) is tuple:
                batch += to_mutations(entry.cells, position)
            else:
                batch.append(RowMutation(entry.cells.row, Kind.PUT if entry.cells.puts
                                         else Kind.DELETE, entry.cells, position))
    return list(row_edits("ns:t", batch)), batch


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_blocks_render_as_their_cells(tmp_path: Path, envelope: str) -> None:
    """A message rendered from the WAL's bytes in place is the reference's message of the
    Cells the block holds; the cells' counts by type too."""
    edits, mutations = block_edits(tmp_path)
    blocks = [e for e in edits if type(e.cells) is not tuple]
    assert len(blocks) > 50 and len(blocks) < len(edits)
    as_cells = [e._replace(cells=tuple(e.cells)) for e in edits]
    assert render.render(edits, envelope, "c", now=5) == render.render(as_cells, envelope, "c",
                                                                        now=5)
    expected = [message_value(e) if envelope == "native" else debezium_value(e, "c", now=5)
                for e in as_cells]
    assert render.render(edits, envelope, "c", now=5)[1] == expected
    assert render.edits_of("ns:t", mutations) == edits
    plain = [m._replace(cells=tuple(m.cells)) for m in mutations]
    assert render.cell_counts(mutations) == count_cells(plain) == render.cell_counts(plain)
    assert render.cell_counts([*plain[:2], Odd(*plain[2])]) == count_cells(plain[:3])


def reference_messages(table: str, mutations: list[RowMutation], envelope: str
                       ) -> tuple[list[bytes], list[bytes], list[WalPosition]]:
    edits = list(row_edits(table, mutations))
    values = [message_value(e) if envelope == "native" else debezium_value(e, "c", now=9)
              for e in edits]
    return [message_key(table, e.row) for e in edits], values, [e.position for e in edits]


@pytest.mark.usefixtures("compiled")
@pytest.mark.parametrize("envelope", ["native", "debezium"])
def test_the_compiled_messages_are_the_reference_messages(tmp_path: Path, envelope: str) -> None:
    """Straight from the mutations (entries of one row and of several, cell blocks among
    them), the keys, values and positions of their edits."""
    _, blocks = block_edits(tmp_path)
    for mutations in (varied_mutations(), blocks):
        expected = reference_messages("ns:t", mutations, envelope)
        assert render.messages("ns:t", mutations, envelope, "c", now=9) == expected
    odd = [*blocks[:3], Odd(*blocks[3]), *blocks[4:6]]  # another type: all to the reference
    assert render.messages("t", odd, envelope, "c", 9) == reference_messages("t", odd, envelope)
    assert render.messages("t", [], envelope, "c") == ([], [], [])
    render.use("python")  # (the fixture switches back)
    assert render.messages("ns:t", blocks, envelope, "c", 9) == reference_messages(
        "ns:t", blocks, envelope)
