"""The compiled entry converter against the pure-Python reference: built by the set-up, and
for the same WAL and filter the same batches, progress reports, result and error."""

from __future__ import annotations

import gc
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.compiled import Implementation
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.replay import convert
from hbase_migrate.replay.apply import AppliedCounts, count_cells
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import Cell, CellType, Tag, WalKey
from hbase_migrate.wal.writer import WalOptions
from tests.support.replay import REGION, T, make_wal

TABLES = (b"t1", b"t2", b"ns:t3", b"unmapped", b"hbase:meta")
TYPES = (CellType.PUT, CellType.PUT, CellType.PUT, CellType.DELETE, CellType.DELETE_COLUMN,
         CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)
FILTERS = {
    "all": ReplayFilter(),
    "mapped": ReplayFilter.build(["t1=t1_copy", "ns:t3"]),
    "families": ReplayFilter.build(["t1", "t2=t2_copy"], {"t1": ["d"], "t2": ["d", "m"]}),
    "window": ReplayFilter.build([], start_time=T + 40, end_time=T + 160),
    "system": ReplayFilter.build([], include_system_tables=True),
}


class Recorder:
    """A target with families ``d`` and ``m`` (or ``families``) on every table; records each
    batch it acknowledges."""

    name = "recorder"

    def __init__(self, families: Sequence[bytes] = (b"d", b"m")) -> None:
        self.families = families
        self.batches: list[tuple[str, list[RowMutation]]] = []
        self.reports: list[FileProgress] = []

    def describe(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, tuple(FamilyDescriptor(f) for f in self.families))

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        self.batches.append((table, list(mutations)))
        return AppliedCounts(count_cells(mutations), 1)


def _marker(rng: random.Random, table: bytes, ts: int) -> Cell:
    if rng.random() < 0.5:
        event = M.RegionEventDescriptor(M.REGION_OPEN, table, REGION, ts)
        return M.region_event_marker(event, ts)
    ns, _, name = table.rpartition(b":")
    bulk = M.BulkLoadDescriptor(TableName(ns or b"default", name), REGION,
                                (M.StoreDescriptor(b"d", "d", ("f1",)),), ts)
    return M.bulk_load_marker(bulk, ts)


def _cells(rng: random.Random, i: int) -> list[Cell]:
    """Rows, families, qualifiers, types and tags of every kind; now and then a marker."""
    if rng.random() < 0.05:
        return []
    rows = [b"row%03d" % rng.randrange(50) for _ in range(rng.choice((1, 1, 1, 2, 3)))]
    cells = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice(TYPES)
        family = rng.choice((b"d", b"d", b"m", b"x") if rng.random() < 0.1 else (b"d", b"m"))
        qualifier = b"" if kind == CellType.DELETE_FAMILY else rng.choice((b"q", b"name", b""))
        value = rng.randbytes(rng.randint(0, 40)) if kind == CellType.PUT else b""
        tags = (Tag(8, b"\x00\x01"),) if rng.random() < 0.1 else ()
        cells.append(Cell(rng.choice(rows), family, qualifier, T + i, kind, value, tags))
    if rng.random() < 0.05:
        cells.insert(rng.randrange(len(cells) + 1), _marker(rng, b"t1", T + i))
    return cells


def entries(seed: int, n: int = 200, *, families: bool = False) -> list[tuple[WalKey, list[Cell]]]:
    """``n`` entries of several tables, in order of write time; ``families``: cells of a
    family the target lacks (``x``) are left in."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        cells = _cells(rng, i)
        if not families:
            cells = [c for c in cells if c.family != b"x"]
        out.append((WalKey(REGION, rng.choice(TABLES), i + 1, T + i), cells))
    return out


class BlockRecorder(Recorder):
    """A Recorder that takes the reader's cell blocks (as the Kafka sink does), recording
    each block's Cells."""

    takes_cell_blocks = True

    def __init__(self, families: Sequence[bytes] = (b"d", b"m")) -> None:
        super().__init__(families)
        self.blocks = 0

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        counts = super().apply(table, mutations)
        self.blocks += sum(type(m.cells) is not tuple for m in mutations)
        self.batches[-1] = (table, [m._replace(cells=tuple(m.cells)) for m in mutations])
        return counts


Outcome = tuple[Any, ...]


def _replay(path: Path, flt: ReplayFilter, name: Implementation, *, batch_cells: int = 7,
            in_flight: int = 2, families: Sequence[bytes] = (b"d", b"m"),
            target: Recorder | None = None) -> Outcome:
    convert.use(name)
    target = target or Recorder(families)
    try:
        result = replay_file(path, ReplaySpec(flt, batch_cells, in_flight), target,
                             on_progress=target.reports.append)
    except HBaseMigrateError as exc:
        return target.batches, target.reports, type(exc).__name__, str(exc)
    return target.batches, target.reports, result


@pytest.fixture
def both() -> Iterator[None]:
    if convert.COMPILED is None:
        pytest.skip("the compiled converter is not built")
    before = convert.implementation()
    yield
    convert.use(before)


def _same(path: Path, flt: ReplayFilter, **kwargs: Any) -> Outcome:
    compiled = _replay(path, flt, "compiled", **kwargs)
    reference = _replay(path, flt, "python", **kwargs)
    assert compiled == reference
    return compiled


def test_the_set_up_builds_the_compiled_converter() -> None:
    assert convert.COMPILED is not None, (
        "hbase_migrate/replay/_convert is not built: run `make setup` "
        "(or `python scripts/build-speedups.py`)")


@pytest.mark.parametrize("options", [WalOptions(), WalOptions(compression=True)],
                         ids=["plain", "dict"])
@pytest.mark.parametrize("filter_name", list(FILTERS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_batches_reports_and_result(both: None, tmp_path: Path, options: WalOptions,
                                         filter_name: str, seed: int) -> None:
    path = make_wal(tmp_path / "wal", entries(seed), options, trailer=seed != 2)
    batches, reports, result = _same(path, FILTERS[filter_name])
    assert batches and reports and result.progress.entries == 200


@pytest.mark.parametrize(("batch_cells", "in_flight"), [(1, 0), (3, 1), (5000, 2)])
def test_same_at_every_batch_size(both: None, tmp_path: Path, batch_cells: int,
                                  in_flight: int) -> None:
    path = make_wal(tmp_path / "wal", entries(4))
    _same(path, FILTERS["all"], batch_cells=batch_cells, in_flight=in_flight)
    _same(path, FILTERS["families"], batch_cells=batch_cells, in_flight=in_flight)


def test_the_compiled_loop_takes_the_usual_entries_itself(
        both: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's ``take`` sees only what the fast path hands it: each table's and
    family's first entry, markers, filtered families, skipped and empty entries."""
    taken: list[int] = []
    reference = convert.EntryConverter.take

    def take(self: convert.EntryConverter, entry: Any) -> None:
        taken.append(entry.index)
        reference(self, entry)

    monkeypatch.setattr(convert.EntryConverter, "take", take)
    path = make_wal(tmp_path / "wal", entries(5))
    batches, _, _ = _replay(path, FILTERS["all"], "compiled")
    assert taken and len(taken) < 80  # the system table's 20 %, and a few more
    assert batches == _replay(path, FILTERS["all"], "python")[0]
    made_here = [m for _, mutations in batches for m in mutations if not gc.is_tracked(m)]
    assert len(made_here) > 100  # positions and mutations: nothing for the collector
    assert not any(gc.is_tracked(m.position) for m in made_here)


@pytest.mark.parametrize("code", [0, 6, 13, 255])
def test_an_unknown_type_code_fails_the_same(both: None, tmp_path: Path, code: int) -> None:
    data = entries(6, 60)
    key = data[41][0]
    data[41] = (key._replace(table_name=b"t1"),
                [Cell(b"r", b"d", b"q", T, CellType.PUT, b"v"), Cell(b"r", b"d", b"q", T, code)])
    path = make_wal(tmp_path / "wal", data)
    batches, _, error, message = _same(path, FILTERS["all"])
    assert error == "UnknownCellTypeError" and f"type code {code}" in message
    assert batches  # what came before the bad entry was applied


def test_a_family_the_target_lacks_fails_the_same(both: None, tmp_path: Path) -> None:
    path = make_wal(tmp_path / "wal", entries(7, families=True))
    _, _, error, message = _same(path, FILTERS["all"])
    assert error == "MissingTargetError" and "no column family x" in message
    _same(path, FILTERS["all"], families=(b"d", b"m", b"x"))  # with it: no error


@pytest.mark.parametrize("seed", range(8))
def test_a_damaged_file_fails_at_the_same_entry(both: None, tmp_path: Path, seed: int) -> None:
    data = bytearray(make_wal(tmp_path / "wal", entries(seed)).read_bytes())
    rng = random.Random(seed)
    for _ in range(3):
        data[rng.randrange(len(data) // 3, len(data))] = rng.randrange(256)
    damaged = tmp_path / "damaged"
    damaged.write_bytes(bytes(data))
    _same(damaged, FILTERS["all"])
    _same(damaged, FILTERS["families"], batch_cells=1, in_flight=0)


@pytest.mark.parametrize("filter_name", list(FILTERS))
@pytest.mark.parametrize("seed", [1, 2])
def test_cell_blocks_make_the_same_batches(both: None, tmp_path: Path, filter_name: str,
                                           seed: int) -> None:
    """A target that takes the reader's cell blocks gets, for the usual entry, one
    mutation holding the block: the same mutation as the reference's of its Cells, with the
    same reports and result."""
    path = make_wal(tmp_path / "wal", entries(seed))
    reference = _replay(path, FILTERS[filter_name], "python")
    target = BlockRecorder()
    assert _replay(path, FILTERS[filter_name], "compiled", target=target) == reference
    assert target.blocks > (10 if filter_name in ("all", "mapped") else 0)
    assert _replay(path, FILTERS[filter_name], "python", target=BlockRecorder()) == reference
