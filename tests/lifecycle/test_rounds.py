"""The live validation of a replay round on the embedded stack: it reads only the rows the
replay runs since the last validation wrote (a small share of what every range costs), finds
a target row changed by hand among them, leaves a row the replay did not write to the
validation of every range, and reports a row whose newer source edit is not yet replayed as
pending, not as a difference."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.records import Verdict
from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cli import cli
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import judge_validation, prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.validate import validation_parts
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from minihbase.workload import FAMILIES, SPLITS
from tests.support.minicluster import write_migration

pytestmark = pytest.mark.integration
TABLE = "orders"
ROWS, COLUMNS = 4_000, 4
OLD = 1_600_000_000_000  # every edit before the rounds' horizon: none is pending by its time


def row(i: int) -> bytes:
    return b"row-%05d" % i


def puts(rows: list[int], ts: int, value: bytes) -> list[Cell]:
    return [Cell(row(i), b"d", b"q%d" % q, ts, CellType.PUT, value + b"%d" % i)
            for i in rows for q in range(COLUMNS)]


def write(cluster: MiniHBase, cells: list[Cell]) -> None:
    with connect(cluster.endpoints) as client:
        client.write_cells(TABLE, cells)


def cells_read(result: StepResult) -> int:
    """The cells a validation read on both sides."""
    found = result.metrics.get("round", {}).get("tables") or result.metrics["tables"]
    return sum(t["source_cells"] + t["target_cells"] for t in found)


def test_a_round_reads_the_rows_its_replay_wrote_and_no_others(
        tmp_path: Path, embedded_pair: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = embedded_pair
    with connect(src.endpoints) as client:
        client.create_table(TableDescriptor(TABLE, FAMILIES), SPLITS)
    write(src, puts(list(range(ROWS)), OLD, b"v"))
    config = write_migration(tmp_path, src, dst, TABLE)
    spec = load_config(config)
    prepare(spec)
    snapshot(spec)
    assert replay(spec).exit_code == 0  # the edits within the margin before the copy's T0

    # no validation since the copy: every range is read, and that is the rounds' baseline
    assert validation_parts(spec, rounds=True) == validation_parts(spec) != []
    full = validate(spec, live=True)
    assert full.verdict is Verdict.MATCH
    assert "no validation since the copy" in full.metrics["round"]["whole"]
    assert cells_read(full) == 2 * ROWS * COLUMNS

    # round 1: 1% of the rows rewritten, one column of one of them deleted
    rng = random.Random(72)
    first = sorted(rng.sample(range(ROWS), ROWS // 100))
    write(src, [*puts(first, OLD + 1, b"w"),
                Cell(row(first[0]), b"d", b"q0", OLD + 2, CellType.DELETE_COLUMN)])
    assert replay(spec).exit_code == 0
    # as the replay DAG asks it: no part to plan, the run's judge validates the round
    assert validation_parts(spec, rounds=True) == [] != validation_parts(spec)
    round1 = judge_validation(spec, "after-replay-1", live=True)
    found, = round1.metrics["round"]["tables"]
    assert round1.verdict is Verdict.MATCH and round1.metrics["differing"] == []
    assert (found["rows"], found["matching"], found["pending"]) == (len(first), len(first), 0)
    assert cells_read(round1) <= 0.05 * cells_read(full)  # a share of what every range costs
    assert round1.metrics["source_requests"] > 0 and round1.metrics["target_requests"] > 0

    # round 2: a target row the replay wrote changed by hand is found; one it did not write
    # is left to the validation of every range; a newer source edit not yet replayed waits
    second = sorted(rng.sample(sorted(set(range(ROWS)) - set(first)), ROWS // 100))
    write(src, puts(second, OLD + 3, b"x"))
    assert replay(spec).exit_code == 0
    touched, late = second[1], second[2]
    untouched = next(i for i in range(ROWS) if i not in first and i not in second)
    write(dst, puts([touched], OLD, b"by hand"))  # an older version: every one is compared
    write(dst, puts([untouched], OLD + 3, b"by hand"))
    write(src, puts([late], OLD + 10**12, b"late"))  # newer than any replay began
    round2 = validate(spec, live=True)
    found, = round2.metrics["round"]["tables"]
    assert round2.verdict is Verdict.MISMATCH  # live: listed (the step does not fail)
    assert round2.metrics["differing"] == [f"{TABLE} row {short_binary(row(touched))}"]
    assert (found["pending"], found["pending_rows"]) == (1, [short_binary(row(late))])
    assert found["rows"] == len(second)
    assert round2.metrics["round"]["replays"] != round1.metrics["round"]["replays"]

    # every range: the untouched row's range differs too (and the pending row's)
    whole = validate(spec, live=True, whole=True)
    assert whole.verdict is Verdict.MISMATCH
    differing = [r.split(" ", 1)[1] for r in whole.metrics["differing"]]
    bounds = [(bytes.fromhex(lo.strip("[")) if lo != "[-inf" else b"",
               bytes.fromhex(hi.strip(")")) if hi != "+inf)" else b"")
              for lo, hi in (b.split(", ") for b in differing)]
    for i in (touched, untouched):
        assert any(lo <= row(i) and (not hi or row(i) < hi) for lo, hi in bounds), i

    # the validation of every range compared the rounds: the next round has none, as the
    # command says
    shown = CliRunner().invoke(cli, ["validate", "--config", str(config), "--live"],
                               catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "round of replay steps (none): 0 rows written, compared on both sides" in \
        shown.output
    assert f"{TABLE} -> {TABLE}: 0/0 rows match, 0 pending" in shown.output
