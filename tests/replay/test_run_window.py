"""Window replays (backfill): the selection reads a file created before the window that
holds edits inside it, the manifest says why each file is in or out, only edits of the
window reach the target, and the ledger's catch-up offsets are left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.names import ServerName
from tests.support.replay import RS1, RS2, Clusters, Setup, T, puts

pytestmark = pytest.mark.integration
HOUR = 3_600_000
RS3 = ServerName("rs3.example.com", 16020, T + 3 * HOUR)


def test_backfill_reads_a_file_created_before_the_window(clusters: Clusters, table: str,
                                                         tmp_path: Path) -> None:
    s = Setup(clusters, table, tmp_path)
    start, end = T + HOUR, T + 2 * HOUR
    early = puts("early", 0, 3)  # before the window
    straddling = puts("in", HOUR + 10, 3)  # in the window, in a file created before it
    late = puts("late", 2 * HOUR + 10, 2)  # after the window
    root = s.root
    before = root.write(RS1, start - 30 * 60_000, table, [*early[:1], *straddling],
                        write_time=start - 1)  # entry 0 just before start, then 3 inside
    ancient = root.write(RS1, start - 3 * HOUR, table, early[1:])
    after = root.write(RS3, end + 3600_000, table, late)  # a server started after the window
    quiet = root.write(RS2, start - 20 * 60_000, table, late[:1], write_time=end + 10)
    s.source_writes(straddling)  # the window's edits only: what the target must get

    job = ReplayJob.from_spec(s.spec, tables=[table], start=start, end=end,
                              step_kind="backfill")
    dry = run_replay(ReplayJob.from_spec(s.spec, tables=[table], start=start, end=end,
                                         dry_run=True))
    assert dry.manifest is not None and dry.outcomes == []
    verdicts = {Path(i.path).name: (i.included, i.stage) for i in dry.manifest.items}
    assert verdicts == {before.name: (True, "content"), ancient.name: (False, "name"),
                        after.name: (False, "name"), quiet.name: (False, "content")}
    text = dry.manifest.render_text()
    assert all(str(p) in text for p in (before, ancient, after, quiet))
    assert "3 entries with write_time in the window" in text

    summary = run_replay(job)
    assert summary.exit_code == 0
    assert [Path(o.path).name for o in summary.outcomes] == [before.name]
    assert summary.cells() == {"Put": 3}
    assert compare_tables(clusters.src, clusters.dst, table).equal
    with Ledger.open(s.spec.ledger_url) as ledger:  # seen, not advanced
        migration = ledger.migration(s.spec.name)
        assert migration is not None
        rows = ledger.wal_files(migration.id, SOURCE)
        assert {(r.status, r.offset_reached) for r in rows} == {(WalStatus.SEEN, 0)}
        (step,) = ledger.steps(migration.id, "backfill")
        assert step.metrics["manifest"]["summary"]["included"] == 1
