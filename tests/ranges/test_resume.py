"""A resumable validation on the embedded stack: a validation stopped by a real fault (the
source gateway refuses every scanner once some ranges are recorded) continues on the next
validation without reading those ranges again (counted by the source gateway's own log of
the scanners it opened), and ends with the verdict and digests a fresh validation finds; a
changed plan, or ``--restart``, starts afresh and says why."""

from __future__ import annotations

import collections
import sqlite3
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import main
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.validate.gx_process import GxProcess
from minihbase.model import MiniHBaseError
from minihbase.server import MiniHBase
from tests.ranges.test_live import TABLE, configure, planned
from tests.replay.minicluster_util import run_workload

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


def test_a_stopped_validation_continues_where_it_stopped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with MiniHBase(tmp_path / "src", "source") as src, \
            MiniHBase(tmp_path / "dst", "target") as dst, GxProcess() as gx:
        run_workload(src, TABLE, seed=61, ops=600)
        config, spec = copied(tmp_path, src, dst)
        ranges = planned(config)
        every = {r.id for r in ranges}
        assert len(ranges) > STOP_AFTER + 2
        gateway = src.thrift2_handler
        assert gateway is not None

        def stopped_validation() -> int:
            """A strict validation stopped by the fault once STOP_AFTER ranges are recorded."""
            gateway.scans_opened = RefuseScansOnceRecorded(tmp_path / "ledger.db", STOP_AFTER)
            with pytest.raises(HBaseMigrateError, match="refuses new scanners"):
                validate(spec, recompare_wait=0, gx=gx)
            gateway.scans_opened = collections.deque()
            with Ledger.open(spec.ledger_url) as ledger:
                step, (_, judged) = next(iter(ledger.checksum_steps(1).items()))
            assert not judged
            return step

        stopped = stopped_validation()
        with Ledger.open(spec.ledger_url) as ledger:
            recorded = {KeyRange(r.table_name, r.range_start, r.range_end).id
                        for r in ledger.checksums(1, stopped)}
        assert STOP_AFTER <= len(recorded) < len(ranges)

        # the command line continues it, saying so
        code, out = run(["validate", "--config", str(config)], capsys)
        assert code == 0
        assert (f"validation resumed {len(recorded)} of {len(ranges)} key ranges from "
                f"validation step {stopped} (it failed; ranges recorded from ") in out
        assert scanned(ranges, gateway.scans_opened) == every - recorded
        with Ledger.open(spec.ledger_url) as ledger:
            resumed = ledger.steps(1, "validate")[-1]
        info = resumed.metrics["resumed"]
        assert (info["ranges"], info["from_step"]) == (len(recorded), stopped)
        with Ledger.open(spec.ledger_url) as ledger:
            rows = ledger.checksums(1, resumed.id)
            assert ledger.checksum_steps(1)[resumed.id][1]  # it recorded its verdict
        assert {r.resumed_from for r in rows} == {stopped, None}
        assert sum(r.resumed_from == stopped for r in rows) == len(recorded)

        # the newest validation finished: the next one has nothing to continue
        gateway.scans_opened = collections.deque()
        fresh = validate(spec, recompare_wait=0, gx=gx)
        assert fresh.metrics["resumed"] == {"from_step": None, "ranges": 0, "since": None,
                                            "note": ""}
        assert scanned(ranges, gateway.scans_opened) == every
        assert resumed.metrics["verdict"] == fresh.verdict == "match"
        assert digests(spec, resumed.id) == digests(spec, fresh.step_id)
        assert len(digests(spec, fresh.step_id)) == len(ranges)

        # another plan (here the mode) starts afresh, saying why
        stopped = stopped_validation()
        live = validate(spec, live=True, gx=gx)
        assert live.metrics["resumed"]["ranges"] == 0
        assert live.metrics["resumed"]["note"].startswith(
            f"starting afresh: the validation stopped at step {stopped} (ranges recorded from ")
        assert live.metrics["resumed"]["note"].endswith("had another mode (strict then, "
                                                        "live now)")

        # --restart reads every range again
        stopped = stopped_validation()
        with Ledger.open(spec.ledger_url) as ledger:
            count = len(ledger.checksums(1, stopped))
        restarted = validate(spec, recompare_wait=0, restart=True, gx=gx)
        assert restarted.metrics["resumed"]["ranges"] == 0
        assert restarted.metrics["resumed"]["note"].startswith(
            f"starting afresh (--restart): the {count} ranges validation step {stopped} "
            "recorded from ")
        assert scanned(ranges, gateway.scans_opened) == every
