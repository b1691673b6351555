"""A resumable validation on the embedded stack: a validation stopped by a real fault (the
source gateway refuses every scanner once some ranges are recorded), or killed with SIGKILL
while its scans wait, continues on the next validation without reading those ranges again
(counted by the source gateway's own log of the scanners it opened), and ends with the
verdict and digests a fresh validation finds; a changed plan, or ``--restart``, starts
afresh and says why."""

from __future__ import annotations

import collections
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.cli import main
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.validate.gx_process import GxProcess
from minihbase.model import MiniHBaseError
from minihbase.server import MiniHBase
from minihbase.thrift2 import Thrift2Handler
from tests.support.minicluster import EmbeddedClusters, run_workload
from tests.support.ranges import TABLE, configure, planned

pytestmark = pytest.mark.integration
STOP_AFTER = 2  # ranges recorded before the fault


def configured(folder: Path, src: MiniHBase, dst: MiniHBase) -> Path:
    """The migration, validated in-process two ranges at a time."""
    config = configure(folder, src, dst, master="in-process")
    with config.open("a", encoding="utf-8") as out:
        out.write("threads = 2\n")  # (the [ranges] table is the file's last)
    return config


class RefuseScansOnceRecorded(collections.deque[tuple[str, bytes, bytes]]):
    """Stands in for the source gateway's ``scans_opened`` log: once the ledger holds
    ``after`` more range checksums than now, every scanner the gateway is asked to open is
    refused (a TIOError to the client, as a gateway that lost its region server sends)."""

    def __init__(self, ledger_file: Path, after: int) -> None:
        super().__init__()
        self.ledger_file = ledger_file
        self.after = self.recorded() + after

    def recorded(self) -> int:
        with sqlite3.connect(self.ledger_file) as db:
            return int(db.execute("SELECT count(*) FROM range_checksums").fetchone()[0])

    def append(self, scan: tuple[str, bytes, bytes]) -> None:
        if self.recorded() >= self.after:
            raise MiniHBaseError("fault: the gateway refuses new scanners")
        super().append(scan)


def copied(folder: Path, src: MiniHBase, dst: MiniHBase) -> tuple[Path, MigrationSpec]:
    """The migration from ``src`` to ``dst``, prepared and copied."""
    config = configured(folder, src, dst)
    spec = load_config(config)
    prepare(spec)
    snapshot(spec)
    return config, spec


class StallScansOnceRecorded(RefuseScansOnceRecorded):
    """As :class:`RefuseScansOnceRecorded`, but the scanners asked then never open (until
    ``released``): the validation waits on them, to be killed there."""

    def __init__(self, ledger_file: Path, after: int) -> None:
        super().__init__(ledger_file, after)
        self.released = threading.Event()

    def append(self, scan: tuple[str, bytes, bytes]) -> None:
        if self.recorded() >= self.after:
            self.released.wait(120)
            raise MiniHBaseError("fault: released after the kill")
        collections.deque.append(self, scan)


def scanned(ranges: list[KeyRange], log: collections.deque[tuple[str, bytes, bytes]]
            ) -> set[str]:
    """The ranges at least one scanner of ``log`` started in."""
    return {r.id for r in ranges for table, start, _ in log
            if table == r.table and r.contains(start)}


def digests(spec: MigrationSpec, step_id: int | None) -> dict[tuple[bytes, bytes], tuple[str, ...]]:
    with Ledger.open(spec.ledger_url) as ledger:
        return {(v.range_start, v.range_end): (v.verdict.value, str(v.source_digest),
                                               str(v.target_digest), str(v.source_cells))
                for v in ledger.validations(1, step_id)}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, _ = capsys.readouterr()
    return int(exit_info.value.code or 0), out


@dataclass
class Stack:
    """A copied migration between two embedded clusters, a GX process, the planned ranges
    and the source gateway whose scanners are counted (and refused on cue)."""

    folder: Path
    config: Path
    spec: MigrationSpec
    gx: GxProcess
    ranges: list[KeyRange]
    gateway: Thrift2Handler

    @property
    def every(self) -> set[str]:
        return {r.id for r in self.ranges}

    def scanned(self) -> set[str]:
        return scanned(self.ranges, self.gateway.scans_opened)

    def stopped_validation(self, live: bool = False) -> int:
        """A validation (strict, or ``live``) stopped by the fault once STOP_AFTER ranges
        are recorded; its step id."""
        self.gateway.scans_opened = RefuseScansOnceRecorded(self.folder / "ledger.db",
                                                            STOP_AFTER)
        with pytest.raises(HBaseMigrateError, match="refuses new scanners"):
            validate(self.spec, recompare_wait=0, gx=self.gx, live=live, whole=live)
        self.gateway.scans_opened = collections.deque()
        with Ledger.open(self.spec.ledger_url) as ledger:
            step, (_, judged) = next(iter(ledger.checksum_steps(1).items()))
        assert not judged
        return step

    def recorded(self, step: int) -> set[str]:
        with Ledger.open(self.spec.ledger_url) as ledger:
            return {KeyRange(r.table_name, r.range_start, r.range_end).id
                    for r in ledger.checksums(1, step)}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    folder = tmp_path_factory.mktemp("resume")
    with EmbeddedClusters(folder) as clusters, GxProcess() as gx:
        src, dst = clusters.pair()
        run_workload(src, TABLE, seed=61, ops=600)
        config, spec = copied(folder, src, dst)
        ranges = planned(config)
        assert len(ranges) > STOP_AFTER + 2 and src.thrift2_handler is not None
        yield Stack(folder, config, spec, gx, ranges, src.thrift2_handler)


def test_a_stopped_validation_continues_where_it_stopped(
        stack: Stack, capsys: pytest.CaptureFixture[str]) -> None:
    spec, ranges = stack.spec, stack.ranges
    stopped = stack.stopped_validation()
    recorded = stack.recorded(stopped)
    assert STOP_AFTER <= len(recorded) < len(ranges)

    # the command line continues it, saying so
    code, out = run(["validate", "--config", str(stack.config)], capsys)
    assert code == 0
    assert (f"validation resumed {len(recorded)} of {len(ranges)} key ranges from "
            f"validation step {stopped} (it failed; ranges recorded from ") in out
    assert stack.scanned() == stack.every - recorded
    with Ledger.open(spec.ledger_url) as ledger:
        resumed = ledger.steps(1, "validate")[-1]
        rows = ledger.checksums(1, resumed.id)
        assert ledger.checksum_steps(1)[resumed.id][1]  # it recorded its verdict
    info = resumed.metrics["resumed"]
    assert (info["ranges"], info["from_step"]) == (len(recorded), stopped)
    assert {r.resumed_from for r in rows} == {stopped, None}
    assert sum(r.resumed_from == stopped for r in rows) == len(recorded)

    # the newest validation finished: the next one has nothing to continue
    stack.gateway.scans_opened = collections.deque()
    fresh = validate(spec, recompare_wait=0, gx=stack.gx)
    assert fresh.metrics["resumed"] == {"from_step": None, "ranges": 0, "since": None,
                                        "note": ""}
    assert stack.scanned() == stack.every
    assert resumed.metrics["verdict"] == fresh.verdict == "match"
    assert digests(spec, resumed.id) == digests(spec, fresh.step_id)
    assert len(digests(spec, fresh.step_id)) == len(ranges)


def test_another_plan_or_restart_starts_afresh_saying_why(stack: Stack) -> None:
    stopped = stack.stopped_validation()
    live = validate(stack.spec, live=True, whole=True, gx=stack.gx)  # another mode
    assert live.metrics["resumed"]["ranges"] == 0
    assert live.metrics["resumed"]["note"].startswith(
        f"starting afresh: the validation stopped at step {stopped} (ranges recorded from ")
    assert live.metrics["resumed"]["note"].endswith("had another mode (strict then, "
                                                    "live now)")

    stopped = stack.stopped_validation()
    count = len(stack.recorded(stopped))
    restarted = validate(stack.spec, recompare_wait=0, restart=True, gx=stack.gx)
    assert restarted.metrics["resumed"]["ranges"] == 0
    assert restarted.metrics["resumed"]["note"].startswith(
        f"starting afresh (--restart): the {count} ranges validation step {stopped} "
        "recorded from ")
    assert stack.scanned() == stack.every


def test_a_replay_run_voids_a_stopped_strict_validation_not_a_live_one(stack: Stack) -> None:
    """A follow finishes a replay run every few seconds: a live validation (both sides read
    as they move) still continues after one; a strict one starts afresh, saying why."""
    from hbase_migrate.lifecycle.replay import replay

    stopped = stack.stopped_validation(live=True)
    recorded = stack.recorded(stopped)
    assert replay(stack.spec).exit_code == 0  # a replay run finishes meanwhile
    live = validate(stack.spec, live=True, whole=True, gx=stack.gx)  # every range, not a round
    assert (live.metrics["resumed"]["ranges"], live.metrics["resumed"]["from_step"]) == (
        len(recorded), stopped)
    assert stack.scanned() == stack.every - recorded

    stopped = stack.stopped_validation()
    assert replay(stack.spec).exit_code == 0
    strict = validate(stack.spec, recompare_wait=0, gx=stack.gx)
    assert strict.metrics["resumed"]["ranges"] == 0
    assert "had a replay run finished since" in strict.metrics["resumed"]["note"]


def test_a_killed_validation_continues_too(stack: Stack) -> None:
    """A validation killed with SIGKILL while its next scans wait: its step stays
    ``running`` until the next validation marks it abandoned and continues it."""
    stall = StallScansOnceRecorded(stack.folder / "ledger.db", STOP_AFTER)
    stack.gateway.scans_opened = stall
    command = subprocess.Popen([sys.executable, "-m", "hbase_migrate", "validate",
                                "--config", str(stack.config)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while stall.recorded() < stall.after and command.poll() is None:
            assert time.monotonic() < deadline, "the validation recorded no ranges"
            time.sleep(0.1)
    finally:
        command.kill()
        command.wait()
        stall.released.set()
    with Ledger.open(stack.spec.ledger_url) as ledger:
        killed, (_, judged) = next(iter(ledger.checksum_steps(1).items()))
        status = next(s.status for s in ledger.steps(1) if s.id == killed)
    recorded = stack.recorded(killed)
    assert not judged and status is StepStatus.RUNNING and len(recorded) >= STOP_AFTER
    stack.gateway.scans_opened = collections.deque()
    after = validate(stack.spec, recompare_wait=0, gx=stack.gx)
    info = after.metrics["resumed"]
    assert (info["ranges"], info["from_step"]) == (len(recorded), killed)
    assert f"step {killed} (killed; ranges recorded from " in info["note"]
    assert stack.scanned() == stack.every - recorded
    assert after.verdict == "match"
    with Ledger.open(stack.spec.ledger_url) as ledger:
        reaped = next(s for s in ledger.steps(1) if s.id == killed)
    assert reaped.status is StepStatus.FAILED
    assert (reaped.error or "").startswith(f"abandoned: its process {command.pid} ")
