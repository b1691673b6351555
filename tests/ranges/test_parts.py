"""A validation in parts: groups of the planned ranges (contiguous, balanced, every range in
exactly one), each part a step of its own recording under one validation run, the judge
over the whole run (strict: a mismatch in one part fails it; live: listed), repairs made by
the part that owns the range, and the cutover gate refusing a run that misses a part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import KeyRangeRecord, StepRecord, StepStatus
from hbase_migrate.cli import main
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import cutover_check, judge_validation, prepare, snapshot, validate
from hbase_migrate.lifecycle.step import StepRefusedError
from hbase_migrate.lifecycle.validate import PART_STEP, validation_parts
from hbase_migrate.ranges.groups import in_part_order, parse_part, range_group, split_weights
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.wal.model import Cell, CellType
from tests.support.minicluster import EmbeddedClusters, run_workload, t2
from tests.support.ranges import TABLE, configure, holding, planned


def record(i: int, table: str, cells: int) -> KeyRangeRecord:
    return KeyRangeRecord(i, 1, table, bytes([i]), bytes([i + 1]), cells, 0, None, None, None,
                          None)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_groups_cover_every_range_once_contiguous_and_balanced(n: int) -> None:
    weights = [90, 10, 10, 10, 40, 40, 0]
    records = [record(i, "b" if i > 3 else "a", w) for i, w in enumerate(weights)]
    groups = [range_group(records[::-1], (i, n)) for i in range(1, n + 1)]
    flat = [r for g in groups for r, _ in g]
    assert flat == sorted(flat) and len(flat) == len(set(flat)) == len(records)
    assert all(groups)
    if n == 2:
        assert [sum(c for _, c in g) for g in groups] == [100, 100]
    with pytest.raises(ConfigError, match="at most"):
        range_group(records, (1, len(records) + 1))


def test_weights_and_part_texts() -> None:
    assert [list(s) for s in split_weights([1] * 10, 4)] == [[0, 1], [2, 3, 4], [5, 6],
                                                             [7, 8, 9]]
    assert [list(s) for s in split_weights([100, 1, 1, 1, 100], 3)] == [[0], [1, 2, 3], [4]]
    assert parse_part("2/4") == (2, 4)
    for bad in ("2", "0/3", "4/3", "a/b"):
        with pytest.raises(ConfigError):
            parse_part(bad)


@pytest.mark.integration
def test_parts_judge_repair_and_the_gate(tmp_path: Path, make_embedded: EmbeddedClusters,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=61, ops=300)
    config = configure(tmp_path, src, dst, master="in-process")
    spec = load_config(config)
    prepare(spec)
    snapshot(spec)
    ranges = planned(Path(tmp_path / "migration.toml"))
    assert len(ranges) > 3
    parts = validation_parts(spec, parts=3)
    assert parts == [[1, 3], [2, 3], [3, 3]]
    assert validation_parts(spec, parts=99)[-1] == [len(ranges), len(ranges)]

    def run_parts(run: str, *, live: bool = False, repair: bool = False) -> list[str]:
        return [str(validate(spec, part=(i, n), run=run, live=live, repair=repair,
                             recompare_wait=0).metrics["verdict"]) for i, n in parts]

    assert run_parts("r1") == ["match"] * 3
    validate(spec, part=(2, 3), run="r1", recompare_wait=0)  # a retried part
    with Ledger.open(spec.ledger_url) as ledger:
        rows = ledger.run_validations(1, "r1")
        counted = [s.metrics["ranges"] for s in ledger.steps(1, PART_STEP)]
    assert sorted((r.range_start, r.range_end) for r in rows) == sorted(
        (r.start, r.stop) for r in ranges)
    assert sum(counted[:3]) == len(ranges)
    results = spec.artifact_dir / "validations"
    assert not list(results.glob("*.json"))  # the parts ran no Great Expectations
    assert {r.gx_result for r in rows} == {None}
    judged = judge_validation(spec, "r1")
    assert judged.passed and judged.state is not None and judged.state.value == "validated"
    assert judged.metrics["tables"][0]["ranges"] == len(ranges)
    # GX judged once: one result for the whole run, naming every range, each row linked
    (result,) = results.glob("*.json")
    assert judged.metrics["gx"]["result"] == str(result)
    gx = json.loads(result.read_text())
    counted_rows = [item["result"]["observed_value"] for item in gx["results"]
                    if item["expectation_config"]["type"] == "expect_table_row_count_to_equal"]
    assert gx["success"] is True and counted_rows == [len(ranges)]
    with Ledger.open(spec.ledger_url) as ledger:
        assert {r.gx_result for r in ledger.run_validations(1, "r1")} == {str(result)}
    judged_by_command(config, parts, capsys)

    extra = Cell(b"row-00042-x", b"d", b"q", 9, CellType.PUT, b"extra")
    with t2(dst) as target:
        target.put_cells(TABLE, [extra])
    (bad,) = holding(ranges, extra.row)
    assert run_parts("r2").count("mismatch") == 1  # a part's verdict fails nothing
    strict = judge_validation(spec, "r2")
    assert not strict.passed and [str(r) for r in strict.metrics["differing"]] == [
        str(next(r for r in ranges if r.id == bad))]
    run_parts("r3", live=True)
    live = judge_validation(spec, "r3", live=True)
    assert live.metrics["verdict"] == "mismatch" and len(live.metrics["differing"]) == 1
    with Ledger.open(spec.ledger_url) as ledger:
        judges = ledger.steps(1, "validate")
    assert [s.status for s in judges[-2:]] == [StepStatus.FAILED, StepStatus.SUCCEEDED]

    run_parts("r4", repair=True)  # the part owning the range repairs it
    repaired = judge_validation(spec, "r4")
    assert repaired.passed
    assert [r["table"] + ":" + r["start"] + "-" + r["stop"]
            for r in repaired.metrics["tables"][0]["repaired"]] == [bad]

    validate(spec, part=(1, 3), run="r5", recompare_wait=0)  # parts 2 and 3 missing
    with pytest.raises(StepRefusedError, match="planned range"):
        judge_validation(spec, "r5")
    gate = cutover_check(spec)
    assert any("not" in why and "planned one(s)" in why
               for why in gate.metrics["reasons"]), gate.metrics["reasons"]

    refusals(spec, ranges)


def judged_by_command(config: Path, parts: list[list[int]],
                      capsys: pytest.CaptureFixture[str]) -> None:
    """The command's parts and judge call the same core: the judge prints GX's Data Docs."""
    for i, n in parts:
        with pytest.raises(SystemExit) as done:
            main(["validate", "--config", str(config), "--part", f"{i}/{n}", "--run", "c1",
                  "--recompare-wait", "0s"])
        assert done.value.code == 0
    assert "data docs:" not in capsys.readouterr().out  # no GX in a part
    with pytest.raises(SystemExit) as done:
        main(["validate", "--config", str(config), "--judge", "--run", "c1"])
    said = capsys.readouterr().out
    assert done.value.code == 0 and "verdict: match" in said and "data docs: " in said, said


def refusals(spec: MigrationSpec, ranges: list[KeyRange]) -> None:
    """The judge refuses, naming them, the ranges of a part whose newest try failed and a
    range recorded without digests (on runs judged good before: r1, and c1 by command)."""
    with Ledger.open(spec.ledger_url) as ledger, pytest.raises(RuntimeError), \
            ledger.step(1, PART_STEP) as failing:
        failing.metrics.update(part="2/3", run="r1")
        raise RuntimeError("the target stopped answering")
    with Ledger.open(spec.ledger_url) as ledger:  # what the part's good tries read
        read = [st for st in ledger.steps(1, PART_STEP) if st.metrics.get("run") == "r1"
                and st.metrics.get("part") == "2/3" and st.status is StepStatus.SUCCEEDED]
        second = [str(KeyRange(TABLE, v.range_start, v.range_end))
                  for v in ledger.validations(1, read[-1].id)]
    assert second
    with pytest.raises(StepRefusedError, match="part 2/3") as refused:
        judge_validation(spec, "r1")
    assert all(r in str(refused.value) for r in second), (second, refused.value)
    # a range whose newest row has no digests (never read): refused, naming it
    first = ranges[0]
    with Ledger.open(spec.ledger_url) as ledger:
        ledger.record_validation(1, None, TABLE, first.start, first.stop, source_rows=None,
                                 target_rows=None, source_cells=None, target_cells=None,
                                 source_digest=None, target_digest=None,
                                 verdict="mismatch", run_key="c1")
    with pytest.raises(StepRefusedError, match="no recorded digest") as unread:
        judge_validation(spec, "c1")
    assert str(first) in str(unread.value)


def test_parts_are_listed_by_number_whatever_order_they_ran_in() -> None:
    def step(step_id: int, part: str) -> StepRecord:
        return StepRecord(step_id, 1, PART_STEP, None, None, None, 0, 1, StepStatus.SUCCEEDED,
                          {"part": part}, None)

    ran = [step(5, "2/10"), step(6, "10/10"), step(7, "1/10"), step(8, "2/10")]
    assert [(s.metrics["part"], s.id) for s in in_part_order(ran)] == [
        ("1/10", 7), ("2/10", 5), ("2/10", 8), ("10/10", 6)]  # numbers, not text; tries kept
