"""A copy in parts: the plan fixes T0 and the ranges once; each part copies only its group at
that T0 (a failed part, retried alone, copies only what it had not); the finish refuses
while a part is missing, naming it; all parts and the finish leave the target as the copy in
one process at the same T0 leaves another, both equal to the source's cells before T0; a part
runs on Spark when configured."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.status import SNAPSHOT_PART_STEP, copy_progress
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import finish_snapshot, prepare, snapshot
from hbase_migrate.lifecycle.snapshot import snapshot_parts
from hbase_migrate.lifecycle.step import StepRefusedError
from hbase_migrate.ranges.groups import range_group
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.tasks import CopyJob, RangeCopy
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.cli_util import fails, run
from tests.support.minicluster import EmbeddedClusters, run_workload, t2
from tests.support.ranges import TABLE, configure

pytestmark = pytest.mark.integration
snapshot_step = importlib.import_module("hbase_migrate.lifecycle.snapshot")  # not the function


def copied(url: str) -> dict[bytes, int | None]:
    """Each planned range's start, with the step that copied it (None: not copied)."""
    with Ledger.open(url) as ledger:
        return {r.range_start: r.copy_step_id for r in ledger.key_ranges(1)}


def test_a_copy_in_parts_equals_the_copy_in_one_process(
        tmp_path: Path, make_embedded: EmbeddedClusters, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    src, dst = make_embedded.pair()
    one = make_embedded("one")
    run_workload(src, TABLE, seed=71, ops=400)
    config = configure(tmp_path, src, dst, master="in-process")
    spec = load_config(config)
    prepare(spec)
    with pytest.raises(StepRefusedError, match="plan the copy first"):
        snapshot(spec, part=(1, 3))  # a part never fixes a watermark of its own
    with pytest.raises(ConfigError, match="hbase method copies in one step"):
        snapshot(spec, part=(1, 3), method="hbase")

    code, out = run(["snapshot", "--config", str(config), "--plan", "--parts", "3",
                     "--json"], capsys)
    plan = json.loads(out)
    t0 = plan["watermark"]
    assert code == 0 and plan["parts"] == [[1, 3], [2, 3], [3, 3]]
    assert plan["state"] == "copying" and plan["anchors"] >= 1
    # auto (the default) chose scan by the clusters, not by the parts asked
    assert (plan["method"], plan["method_asked"]) == ("scan", "auto")
    assert plan["method_reason"].startswith("the source cluster 'source' has no "
                                            "hbase.version under its HBase root")
    again = snapshot_parts(spec, parts=3, watermark=t0 + 60_000)  # T0 is fixed once
    assert again.metrics["watermark"] == t0 and "kept" in again.metrics["notes"][0]
    with Ledger.open(spec.ledger_url) as ledger:
        records = ledger.key_ranges(1)
    second = [k for k, _ in range_group(records, (2, 3))]
    assert len(second) >= 2

    late = [Cell(b"row-late", b"d", b"q", t0 + 1, CellType.PUT, b"after T0"),
            Cell(records[0].range_start + b"-late", b"d", b"q", t0 + 5, CellType.PUT, b"x")]
    with t2(src) as source:  # written after T0: no part copies them
        source.put_cells(TABLE, late)

    code, out = run(["snapshot", "--config", str(config), "--part", "3/3"], capsys)
    assert code == 0 and "copied" in out
    snapshot(spec, part=(1, 3))

    done = fail_after_one(monkeypatch, spec, (2, 3))
    before = copied(spec.ledger_url)
    assert [k.start for k in second if before[k.start] is not None] == [done[0].start]
    assert "in part(s) 2/3: run them again" in fails(
        ["snapshot", "--config", str(config), "--finish"], capsys)
    with Ledger.open(spec.ledger_url) as ledger:  # status: 1/3 was tried twice
        progress = copy_progress(ledger, 1)
    assert progress == {"ranges": len(records), "ranges_copied": sum(
        v is not None for v in before.values()), "cells_copied": progress["cells_copied"],
        "parts": {"planned": 3, "succeeded": 2, "running": 0, "failed": 1}}
    code, out = run(["status", "--config", str(config)], capsys)
    assert (f"snapshot copy: {progress['ranges_copied']} of {len(records)} ranges copied;"
            " parts: 2 of 3 done, 0 running, 1 failed") in " ".join(out.split())

    retried = snapshot(spec, part=(2, 3)).metrics
    assert (retried["ranges"], retried["ranges_skipped"]) == (len(second), 1)
    assert [c["start"] for c in retried["copied"]] == [k.start.hex() for k in second[1:]]
    after = copied(spec.ledger_url)
    assert {k: v for k, v in after.items() if v != before[k]} == {
        k.start: after[k.start] for k in second[1:]}  # nothing else copied again

    finished = finish_snapshot(spec)
    assert finished.state is not None and finished.state.value == "copied"
    assert finished.metrics["watermark"] == t0 and finished.metrics["ranges"] == len(
        records)
    assert (finished.metrics["method"], finished.metrics["method_reason"],
            finished.metrics["method_kept_from"]) == ("scan", plan["method_reason"],
                                                      plan["step_id"])
    with Ledger.open(spec.ledger_url) as ledger:
        parts = ledger.steps(1, SNAPSHOT_PART_STEP)
    assert [(p.metrics["part"], p.status.value) for p in parts] == [
        ("1/3", "failed"), ("3/3", "succeeded"), ("1/3", "succeeded"), ("2/3", "failed"),
        ("2/3", "succeeded")]
    assert all(p.host and p.metrics["watermark"] == t0 for p in parts[1:])
    assert finish_snapshot(spec).metrics["skipped"]  # done: nothing to do
    with Ledger.open(spec.ledger_url) as ledger:
        progress = copy_progress(ledger, 1)
    assert (progress["ranges_copied"], progress["cells_copied"], progress["parts"]) == (
        len(records), finished.metrics["cells"],
        {"planned": 3, "succeeded": 3, "running": 0, "failed": 0})
    assert snapshot_parts(spec).metrics["parts"] == []

    one_process(tmp_path / "one-process", src, dst, one, t0, finished.metrics["cells"],
                late)

def fail_after_one(monkeypatch: pytest.MonkeyPatch, spec: MigrationSpec,
                   part: tuple[int, int]) -> list[KeyRange]:
    """Run ``part``, its second range failing (the gateway going away); returns what it
    copied."""
    real = snapshot_step.copy_range_task
    done: list[KeyRange] = []

    def fails_after_one(job: CopyJob, key_range: KeyRange) -> RangeCopy:
        if done:
            raise RangeError(f"range {key_range}: the gateway went away (test)")
        done.append(key_range)
        return real(job, key_range)

    with monkeypatch.context() as patched:
        patched.setattr(snapshot_step, "copy_range_task", fails_after_one)
        with pytest.raises(RangeError, match="went away"):
            snapshot(spec, part=part)
    return done


def one_process(folder: Path, src: MiniHBase, dst: MiniHBase, one: MiniHBase, t0: int,
                cells: int, late: list[Cell]) -> None:
    """The copy in one process at ``t0`` into ``one`` equals the copy in parts in ``dst``,
    and both the source's cells before T0."""
    folder.mkdir()
    spec = load_config(configure(folder, src, one, master="in-process"))
    prepare(spec)
    assert snapshot(spec, watermark=t0).metrics["cells"] == cells
    with t2(src) as source, t2(dst) as target, t2(one) as other:
        # derived apart from the copy: every version the source holds, kept when older than
        # T0 (nothing written after T0 deletes anything)
        expect = sorted(c for row in source.scan(TABLE) for c in row if c.timestamp < t0)
        assert sorted(c for row in target.scan(TABLE) for c in row) == expect
        assert sorted(c for row in other.scan(TABLE) for c in row) == expect
    assert len(expect) == cells > 0
    assert not set(late) & set(expect)


def test_the_flags_of_a_copy_in_parts_go_alone(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "m.toml"
    config.write_text('[migration]\nname = "m"\n[source]\nthrift2 = "127.0.0.1:1"\n'
                      '[target]\nthrift2 = "127.0.0.1:1"\n[[tables]]\nsource = "t"\n',
                      encoding="utf-8")
    for flags in (["--plan", "--finish"], ["--part", "1/2", "--finish"], ["--parts", "2"]):
        assert "give one of --plan" in fails(["snapshot", "--config", str(config), *flags],
                                             capsys)


@pytest.mark.slow
def test_a_part_runs_on_spark_and_another_in_process(spark: Any, tmp_path: Path,
                                                      make_embedded: EmbeddedClusters) -> None:
    """Spark stays the data plane of a part when configured; the parts still make one
    copy."""
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=72, ops=200)
    spec = load_config(configure(tmp_path, src, dst))  # [spark] master = local[2]
    prepare(spec)
    plan = snapshot_parts(spec, parts=2)
    t0 = plan.metrics["watermark"]
    assert plan.metrics["parts"] == [[1, 2], [2, 2]]
    on_spark = snapshot(spec, part=(1, 2)).metrics
    in_process = snapshot(spec, part=(2, 2), master="in-process").metrics
    assert (on_spark["engine"], in_process["engine"]) == ("local[2]", "in-process")
    assert on_spark["ranges_copied"] + in_process["ranges_copied"] == plan.metrics[
        "ranges"]
    finished = finish_snapshot(spec)
    assert finished.state is not None and finished.state.value == "copied"
    with t2(src) as source, t2(dst) as target:
        expect = sorted(c for row in source.scan(TABLE) for c in row if c.timestamp < t0)
        assert sorted(c for row in target.scan(TABLE) for c in row) == expect


def test_a_part_killed_before_it_named_itself_does_not_stop_the_finish(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    """A part's process SIGKILLed as its step began (an Airflow task runner killed: found by
    the crash harness's Airflow kills, seed 76) leaves a ``snapshot-part`` step with no part
    named, marked failed by the next step once its process is gone; its retry copies the
    part, the finish lists the parts that named themselves instead of failing on it, and
    status counts parts, not that try."""
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=73, ops=200)
    spec = load_config(configure(tmp_path, src, dst, master="in-process"))
    prepare(spec)
    assert snapshot_parts(spec, parts=2).metrics["parts"] == [[1, 2], [2, 2]]
    started = ("from hbase_migrate.audit.ledger import Ledger\n"  # then the process ends
               f"Ledger.open({spec.ledger_url!r}).start_step(1, {SNAPSHOT_PART_STEP!r})")
    subprocess.run([sys.executable, "-c", started], check=True, timeout=60)
    snapshot(spec, part=(1, 2))  # its retry
    snapshot(spec, part=(2, 2))
    finished = finish_snapshot(spec)
    assert finished.state is not None and finished.state.value == "copied"
    assert [p["part"] for p in finished.metrics["parts"]] == ["1/2", "2/2"]
    with Ledger.open(spec.ledger_url) as ledger:
        killed, *_ = ledger.steps(1, SNAPSHOT_PART_STEP)
        progress = copy_progress(ledger, 1)
    assert killed.status.value == "failed" and "part" not in killed.metrics
    assert progress is not None  # status: the killed try is no third part, failed
    assert progress["parts"] == {"planned": 2, "succeeded": 2, "running": 0, "failed": 0}
