"""Catch-up runs over a synthetic HBase root into a real target: every file replayed, the
ledger's offsets at the file ends, reruns that read no byte twice, live files that grow and
move to the archive, gaps, corrupt files and bulk loads."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import WalStatus
from hbase_migrate.audit.status import compute_status, drained
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.storage.walstore import LocalWalStore, WalListing
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay import run_books
from hbase_migrate.replay.apply import AppliedCounts, ReplayTarget
from hbase_migrate.replay.discovery import SOURCE, reconcile
from hbase_migrate.replay.errors import ReplayError
from hbase_migrate.replay.job import FileTask, ReplayJob
from hbase_migrate.replay.job_target import open_job_target
from hbase_migrate.replay.lock import run_lease_name
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.replay.run import run_replay
from hbase_migrate.replay.summary import Observer, RunSummary
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import Cell, CellType, Tag
from hbase_migrate.wal.names import ServerName, wal_file_name
from hbase_migrate.wal.selection import Manifest
from hbase_migrate.wal.writer import WalOptions
from minihbase.webhdfs import WebHdfsServer
from tests.support.replay import (
    REGION,
    RS1,
    RS2,
    START,
    Clusters,
    HBaseRoot,
    Setup,
    T,
    corrupt_entry,
    entry_offsets,
    puts,
)

pytestmark = pytest.mark.integration


def data_end(path: Path) -> int:
    """The end of a WAL's last entry (a closed file's trailer follows it)."""
    offset, size = entry_offsets(path)[-1]
    return offset + size
RS_OLD = ServerName("rs-old.example.com", 16020, T - 14_400_000)


@pytest.fixture
def setup(clusters: Clusters, table: str, tmp_path: Path) -> Setup:
    return Setup(clusters, table, tmp_path)


@pytest.fixture(params=["local", "webhdfs"])
def any_setup(request: pytest.FixtureRequest, clusters: Clusters, table: str,
              tmp_path: Path) -> Iterator[Setup]:
    if request.param == "local":
        yield Setup(clusters, table, tmp_path)
        return
    with WebHdfsServer(tmp_path / "hbase", hbase_root="/hbase") as server:
        yield Setup(clusters, table, tmp_path, webhdfs=server.url)


def test_catch_up_replays_every_file_and_a_rerun_reads_nothing_again(any_setup: Setup) -> None:
    s, root = any_setup, any_setup.root
    a, b, c = puts("a", 0, 5), puts("b", 100, 4), puts("c", 50, 3)
    archived = root.write(RS1, T - 600_000, s.table, a, write_time=T)
    live = root.write(RS1, T + 100, s.table, b, state="live", trailer=False,
                      options=WalOptions(compression=True))
    splitting = root.write(RS2, T + 50, s.table, c, state="splitting", trailer=False)
    # a server that stopped long before the window
    old = root.write(RS_OLD, T - 10_800_000, s.table, puts("old", 0, 2))
    (root.root / "oldWALs" / "pv2-00000000000000000001.log").write_bytes(b"not a WAL")
    s.source_writes([*a, *b, *c])

    first = run_replay(s.job)
    assert first.exit_code == 0, first.to_json()
    assert s.equal()
    assert s.rows() == {
        archived.name: (WalStatus.REPLAYED, data_end(archived), 5),  # the trailer follows
        live.name: (WalStatus.REPLAYING, live.stat().st_size, 4),
        # a dead server's last file, closed though it has no trailer: read to its end, done
        splitting.name: (WalStatus.REPLAYED, splitting.stat().st_size, 3),
        old.name: (WalStatus.SKIPPED, 0, 0)}
    assert first.cells() == {"Put": 12}
    assert sum(o.bytes_read for o in first.outcomes) == sum(
        data_end(p) for p in (archived, live, splitting))  # header included

    rows = s.rows()
    again = run_replay(s.job)
    assert again.exit_code == 0
    assert [o.bytes_read for o in again.outcomes] == [0]  # the live file, not re-read
    assert again.cells() == {}
    assert s.rows() == rows
    assert s.equal()


def test_a_live_file_grows_then_moves_to_the_archive(setup: Setup) -> None:
    s, root = setup, setup.root
    calls = puts("g", 0, 12)
    live = root.write(RS1, T, s.table, calls[:5], state="live", trailer=False)
    s.source_writes(calls)
    assert run_replay(s.job).exit_code == 0
    size5 = live.stat().st_size
    assert s.rows()[live.name] == (WalStatus.REPLAYING, size5, 5)

    root.write(RS1, T, s.table, calls[:9], state="live", trailer=False)  # it grew
    grown = run_replay(s.job)
    (outcome,) = grown.outcomes
    assert (outcome.start_offset, outcome.offset) == (size5, live.stat().st_size)
    assert outcome.run.entries == 4
    assert s.rows()[live.name] == (WalStatus.REPLAYING, live.stat().st_size, 9)
    size9 = live.stat().st_size

    root.write(RS1, T, s.table, calls, state="live", trailer=True)  # closed, then archived
    archived = root.archive(live)
    moved = run_replay(s.job)
    assert moved.moves == [(str(live), str(archived))]
    (outcome,) = moved.outcomes
    assert (outcome.path, outcome.start_offset, outcome.complete) == (str(archived), size9, True)
    assert s.rows() == {archived.name: (WalStatus.REPLAYED, data_end(archived), 12)}
    assert s.equal()


class KilledAt(Observer):
    """Kills the run when the target has acknowledged ``acks`` batches of a file: the
    ledger as the kill leaves it is copied aside (a killed process records nothing more),
    and the run is stopped by an exception no code path handles."""

    def __init__(self, ledger_db: Path, acks: int) -> None:
        self.ledger_db, self.left, self.acknowledged = ledger_db, acks, 0

    def file_advanced(self, task: FileTask, offset: int) -> None:
        self.left -= 1
        if self.left == 0:
            self.acknowledged = offset
            with (sqlite3.connect(self.ledger_db) as live,
                  sqlite3.connect(self.ledger_db.with_suffix(".killed")) as copy):
                live.backup(copy)
            raise Killed


class Killed(BaseException):
    pass


def test_a_run_killed_between_progress_records_replays_the_unrecorded_tail_exactly(
        setup: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    """Progress is recorded at most every PROGRESS_EVERY_MS: what the ledger holds after a
    kill was acknowledged, and the next run replays the rest again, to exact counters."""
    monkeypatch.setattr(run_books, "PROGRESS_EVERY_MS", 3_600_000)  # the first ack only
    s, root = setup, setup.root
    calls = puts("k", 0, 8)
    archived = root.write(RS1, T, s.table, calls)
    s.source_writes(calls)
    ledger_db = Path(s.spec.ledger_url.removeprefix("sqlite:///"))
    job = replace(s.job, batch_cells=1)  # one entry per acknowledged batch
    ends = [offset + size for offset, size in entry_offsets(archived)]

    killer = KilledAt(ledger_db, acks=3)
    with pytest.raises(Killed):
        run_replay(job, killer)
    assert killer.acknowledged == ends[2]
    for journal in ("-wal", "-shm"):  # the ledger as the kill left it
        Path(f"{ledger_db}{journal}").unlink(missing_ok=True)
    ledger_db.with_suffix(".killed").replace(ledger_db)
    with Ledger.open(s.spec.ledger_url) as ledger:  # the lock's and the run's leases, freed
        for lease in (f"migration/{s.spec.name}",   # as a dead holder's are taken over
                      run_lease_name(job.name, job.lock_name)):
            holder, _ = ledger.take_lease(lease, "a look", 1)
            ledger.release_lease(lease, holder)
    assert s.rows() == {archived.name: (WalStatus.REPLAYING, ends[0], 1)}

    rerun = run_replay(job)
    assert rerun.exit_code == 0, rerun.to_json()
    (outcome,) = rerun.outcomes
    assert (outcome.start_offset, outcome.complete) == (ends[0], True)
    assert rerun.cells() == {"Put": 7}  # the two unrecorded batches again, then the rest
    assert s.rows() == {archived.name: (WalStatus.REPLAYED, data_end(archived), 8)}
    assert s.equal()


def test_a_run_with_nothing_left_to_replay_does_not_need_its_target(setup: Setup) -> None:
    """A run opens its target while it plans; with no file to replay it leaves it alone:
    a target that cannot be opened fails nothing, until a file needs it."""
    s, root = setup, setup.root
    calls = puts("n", 0, 3)
    archived = root.write(RS1, T, s.table, calls)
    s.source_writes(calls)
    assert run_replay(s.job).exit_code == 0

    def unreachable(job: ReplayJob) -> ReplayTarget:
        raise ConfigError("the target cannot be opened")

    again = run_replay(s.job, sink=unreachable)
    assert (again.exit_code, again.outcomes, again.failures) == (0, [], [])
    assert s.rows() == {archived.name: (WalStatus.REPLAYED, data_end(archived), 3)}
    root.write(RS1, T + 1000, s.table, puts("n", 3, 1))  # one more file: it is needed now
    with pytest.raises(ConfigError, match="the target cannot be opened"):
        run_replay(s.job, sink=unreachable)


def test_tags_left_behind_are_said_per_file(setup: Setup,
                                            caplog: pytest.LogCaptureFixture) -> None:
    s, root = setup, setup.root
    calls = puts("t", 0, 3)
    calls[1] = [calls[1][0]._replace(tags=(Tag(8, bytes(8)), Tag(200, b"dc1")))]
    tagged = root.write(RS1, T, s.table, calls)
    s.source_writes([[c._replace(tags=()) for c in cells] for cells in calls])
    with caplog.at_level(logging.WARNING, logger="hbase_migrate.replay.run_books"):
        assert run_replay(s.job).exit_code == 0
    assert s.equal()
    said = [r.getMessage() for r in caplog.records if "cell tags" in r.getMessage()]
    assert said == [f"{tagged}: 2 cell tags not written to the target (replay writes "
                    "cells without their tags: per-cell TTLs, ACLs and visibility labels "
                    "are not replayed)"]


class ArchiveOnPlan(Observer):
    """Moves the live files to oldWALs/ right after the run planned them: the replay's
    open fails with file-not-found and must continue at the archived path."""

    def __init__(self, root: HBaseRoot) -> None:
        self.root = root

    def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
        for task in tasks:
            if "/WALs/" in task.path:
                self.root.archive(Path(task.path))


def test_a_file_archived_between_listing_and_reading_is_continued_at_its_offset(
        setup: Setup) -> None:
    s, root = setup, setup.root
    calls = puts("m", 0, 8)
    live = root.write(RS1, T, s.table, calls[:3], state="live", trailer=False)
    s.source_writes(calls)
    run_replay(s.job)
    offset3 = live.stat().st_size
    root.write(RS1, T, s.table, calls, state="live", trailer=True)
    summary = run_replay(s.job, ArchiveOnPlan(root))
    (outcome,) = summary.outcomes
    archived = root.root / "oldWALs" / live.name
    assert (outcome.moved_from, outcome.path) == (str(live), str(archived))
    assert (outcome.start_offset, outcome.run.entries, outcome.complete) == (offset3, 5, True)
    assert s.rows() == {live.name: (WalStatus.REPLAYED, data_end(archived), 8)}
    with Ledger.open(s.spec.ledger_url) as ledger:
        migration = ledger.migration(s.spec.name)
        assert migration is not None
        assert [r.path for r in ledger.wal_files(migration.id)] == [str(archived)]
    assert s.equal()


class SplitAfterListing(LocalWalStore):
    """A dead server's split finishing right after a listing: a file listed in its
    -splitting folder is already in oldWALs/ when the run next looks for it."""

    def listing(self) -> WalListing:
        listed = super().listing()
        for f in listed.files:
            if f.state == "splitting":
                shutil.move(f.path, self.hbase_root / "oldWALs" / f.name)
        return listed


def test_a_file_listed_in_splitting_then_archived_keeps_one_row_and_its_offset(
        setup: Setup) -> None:
    s, root = setup, setup.root
    calls = puts("s", 0, 6)
    live = root.write(RS1, T, s.table, calls[:3], state="live", trailer=False)
    s.source_writes(calls)
    assert run_replay(s.job).exit_code == 0
    offset3 = live.stat().st_size
    root.write(RS1, T, s.table, calls, state="live", trailer=False)  # then the server dies
    splitting = live.parent.rename(live.parent.with_name(live.parent.name + "-splitting"))
    (root.root / "oldWALs").mkdir(exist_ok=True)
    with Ledger.open(s.spec.ledger_url) as ledger:
        migration = ledger.migration(s.spec.name)
        assert migration is not None
        found = reconcile(ledger, migration.id, SplitAfterListing(root.root), since=START)
        rows = [(r.path, r.offset_reached) for r in ledger.wal_files(migration.id, SOURCE)]
    assert found.moves == [(str(live), str(splitting / live.name))]
    assert rows == [(str(splitting / live.name), offset3)]  # one row, its progress kept

    summary = run_replay(s.job)  # finds it archived: continues at its offset
    assert summary.exit_code == 0, summary.to_json()
    (outcome,) = summary.outcomes
    archived = root.root / "oldWALs" / live.name
    assert (outcome.path, outcome.start_offset) == (str(archived), offset3)
    assert (outcome.run.entries, outcome.complete) == (3, True)
    assert s.rows() == {live.name: (WalStatus.REPLAYED, archived.stat().st_size, 6)}
    assert s.equal()


def test_a_file_deleted_before_it_was_replayed_is_a_gap(setup: Setup) -> None:
    s, root = setup, setup.root
    kept = root.write(RS1, T, s.table, puts("k", 0, 2))
    lost = root.write(RS2, T + 5, s.table, puts("l", 0, 2))
    with Ledger.open(s.spec.ledger_url) as ledger:  # an earlier listing saw it
        migration = ledger.ensure_spec(s.spec)
        ledger.record_wal_seen(migration.id, SOURCE, str(RS2), str(lost), 10, T + 5)
    lost.unlink()
    summary = run_replay(s.job)
    assert summary.exit_code == 3
    (gap,) = summary.gaps
    assert (gap.path, gap.server) == (str(lost), str(RS2))
    assert "re-copy the affected key ranges" in gap.describe()
    assert s.rows()[lost.name][0] is WalStatus.GAP
    assert s.rows()[kept.name][0] is WalStatus.REPLAYED
    with Ledger.open(s.spec.ledger_url) as ledger:
        report = compute_status(ledger, now=now_ms())
    assert report.has_gaps
    assert run_replay(s.job).exit_code == 3  # the gap stays open until resolved


def test_a_corrupt_file_fails_with_its_offset_while_the_others_replay(setup: Setup) -> None:
    s, root = setup, setup.root
    good, bad_calls = puts("ok", 0, 4), puts("bad", 0, 6)
    root.write(RS1, T, s.table, good)
    bad = root.write(RS2, T, s.table, bad_calls)
    offset = corrupt_entry(bad, 3)
    s.source_writes([*good, *bad_calls[:3]])  # what precedes the bad entry is replayed
    summary = run_replay(s.job)
    assert summary.exit_code == 1
    (failure,) = summary.failures
    assert failure.error is not None
    assert str(bad) in failure.error and f"byte offset {offset}" in failure.error
    with Ledger.open(s.spec.ledger_url) as ledger:
        migration = ledger.migration(s.spec.name)
        assert migration is not None
        row = ledger.wal_file(migration.id, SOURCE, str(bad))
        assert row is not None and row.error is not None
        assert (row.status, row.offset_reached) == (WalStatus.FAILED, offset)
        assert f"byte offset {offset}" in row.error
        (step,) = ledger.steps(migration.id, "replay")
        assert step.status == "failed" and str(bad) in (step.error or "")
    assert s.equal()


class RefusingRows:
    """The run's target, refusing every write of rows that begin with ``prefix``."""

    def __init__(self, job: ReplayJob, prefix: bytes) -> None:
        self.target, self.prefix = open_job_target(job), prefix
        self.name = self.target.name

    def describe(self, table: str) -> TableDescriptor:
        return self.target.describe(table)

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        if any(m.row.startswith(self.prefix) for m in mutations):
            raise ReplayError(f"{self.name}: write refused")
        return self.target.apply(table, mutations)

    def close(self) -> None:
        self.target.close()


def test_after_a_refused_write_the_files_after_it_in_its_chain_wait(setup: Setup) -> None:
    """A write that fails the file is retried by the next run; a later file of the same
    chain, applied meanwhile, would then be overwritten with the older cells (the same cell
    rewritten at one timestamp): it waits for the next run, while other chains go on."""
    s, root = setup, setup.root
    first, later, other = puts("a", 0, 3), puts("b", 0, 3), puts("c", 0, 3)
    same = [Cell(b"same", b"d", b"q", T, CellType.PUT, v) for v in (b"old", b"new")]
    first.append([same[0]])
    later.append([same[1]])
    paths = [root.write(RS1, T, s.table, first), root.write(RS1, T + 1000, s.table, later),
             root.write(RS2, T, s.table, other)]
    s.source_writes([*first, *later, *other])

    refused = run_replay(s.job, sink=lambda job: RefusingRows(job, b"a-"))
    assert refused.exit_code == 1
    assert {Path(o.path).name: o.error is None for o in refused.outcomes} == {
        paths[0].name: False, paths[2].name: True}  # RS1's later file was not begun
    assert refused.failures[0].retry

    again = run_replay(s.job)
    assert again.exit_code == 0, again.to_json()
    assert [Path(o.path).name for o in again.outcomes] == [paths[0].name, paths[1].name]
    assert s.equal()


def test_bulk_loads_become_step_metrics(setup: Setup) -> None:
    s, root = setup, setup.root
    bulk = M.BulkLoadDescriptor(TableName(b"default", s.table.encode()), REGION,
                                (M.StoreDescriptor(b"d", "d", ("hfile1",)),), 77)
    calls = [*puts("p", 0, 2), [M.bulk_load_marker(bulk, T + 5, start_key=b"k")]]
    path = root.write(RS1, T, s.table, calls)
    s.source_writes(calls[:2])
    summary: RunSummary = run_replay(s.job)
    assert summary.exit_code == 0
    (load,) = summary.to_json()["bulk_loads"]
    assert (load["table"], load["region"], load["families"], load["file"],
            load["start_key"]) == (s.table, REGION.decode(), ("d",), str(path), b"k".hex())
    with Ledger.open(s.spec.ledger_url) as ledger:
        migration = ledger.migration(s.spec.name)
        assert migration is not None
        (step,) = ledger.steps(migration.id, "replay")
    assert step.metrics["bulk_loads"][0]["region"] == REGION.decode()
    assert step.metrics["markers"] == {"BULK_LOAD": 1}


def test_meta_wals_live_or_archived_are_skipped_unread_and_leave_nothing_to_drain(
        setup: Setup) -> None:
    """hbase:meta's own WAL holds no table's edit: a catch-up marks it skipped, live or
    archived, so it is not a file "not replayed to its end" for the cutover gate."""
    s, root = setup, setup.root
    calls = puts("m", 0, 3)
    table = root.write(RS1, T + 10, s.table, calls, state="live", trailer=False)
    metas = []
    for state, created in (("live", T + 20), ("archived", T + 5)):
        written = root.write(RS1, created, "hbase:meta", puts("meta", 0, 2), state=state,
                             trailer=state == "archived")
        metas.append(written.rename(written.with_name(
            wal_file_name(RS1, created, meta=True))))
    s.source_writes(calls)
    done = run_replay(s.job)
    assert done.exit_code == 0, done.to_json()
    rows = s.rows()
    assert {rows[m.name] for m in metas} == {(WalStatus.SKIPPED, 0, 0)}, rows
    assert rows[table.name][0] is WalStatus.REPLAYING
    with Ledger.open(s.job.spec.ledger_url) as ledger:
        migration = ledger.migration(s.job.spec.name)
        assert migration is not None
        files = {f.path.rsplit("/", 1)[-1]: f for f in ledger.wal_files(migration.id, SOURCE)}
    assert all(drained(files[m.name]) for m in metas)
    assert s.equal()
