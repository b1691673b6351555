"""WAL coverage from the watermark, against embedded clusters whose log cleaner is faster than
the replay: files deleted before the first listing, files deleted between two listings, a
file deleted between listing and reading, a crashed server's last file, idle rolls of empty
files, the lag, and the archived-WAL retention verdict. The truth is what a test-side watcher
saw in the source's WAL folders while the workload ran, and the clusters' own contents."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import GapKind, WalStatus
from hbase_migrate.cli import cli, main
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.apply import AppliedCounts, ReplayTarget, WrappingTarget
from hbase_migrate.replay.coverage import FIRST_WAL_DELAY_MS
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import FileTask, ReplayJob
from hbase_migrate.replay.job_target import open_job_target
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.replay.run import follow_replay, run_replay
from hbase_migrate.replay.summary import Observer, RunSummary
from hbase_migrate.wal.names import parse_wal_path
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.selection import Manifest
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import (
    EmbeddedClusters,
    compare,
    copy_table_schema,
    run_workload,
    set_watermark,
    write_migration,
)
from tests.support.wait import load_stretch, wait_for

pytestmark = pytest.mark.integration

TABLE = "orders"


class Watcher:
    """Lists the source's WAL folders every few ms: every file name that ever existed."""

    def __init__(self, root: Path) -> None:
        self.root, self._names = root, set[str]()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def names(self) -> set[str]:
        """Every name seen so far (a copy: the watcher goes on adding)."""
        with self._lock:
            return set(self._names)

    def _run(self) -> None:
        while not self._stop.is_set():
            for folder in (self.root / "oldWALs", *self.root.glob("WALs/*")):
                with suppress(FileNotFoundError):
                    found = os.listdir(folder)
                    with self._lock:
                        self._names.update(found)
            time.sleep(0.005)

    def __enter__(self) -> Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def times(self, server: str) -> list[int]:
        """Creation times of every WAL file of ``server`` seen."""
        infos = [parse_wal_path(n) for n in self.names]
        return sorted(i.timestamp for i in infos
                      if i.timestamp is not None and str(i.server) == server and not i.meta)


def fast_cleaner_source(clusters: EmbeddedClusters, *, roll: float, ttl: float
                        ) -> tuple[MiniHBase, MiniHBase]:
    """A source whose servers roll every ``roll`` s and whose cleaner deletes archived files
    ``ttl`` s old, and a target."""
    return clusters.pair(wal=WalSettings(region_servers=2, roll_period=roll, archive_ttl=ttl,
                                         cleaner_interval=0.05))


def gaps_of(config: Path) -> list[dict[str, object]]:
    status = CliRunner().invoke(cli, ["status", "--config", str(config), "--json"],
                                catch_exceptions=False)
    assert status.exit_code == 3, status.output
    migration, = json.loads(status.output)["migrations"]
    gaps: list[dict[str, object]] = migration["gaps"]
    return gaps


def test_files_deleted_before_the_first_listing_are_a_gap_from_the_watermark(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = fast_cleaner_source(make_embedded, roll=0.5, ttl=2.0)
    with Watcher(src.hbase_root_dir) as watcher:  # a 2 s archive TTL
        config = write_migration(tmp_path, src, dst, TABLE)
        run_workload(src, TABLE, seed=5, ops=20)
        copy_table_schema(src, dst, TABLE)
        spec = set_watermark(config)
        with Ledger.open(spec.ledger_url) as ledger:
            record = ledger.migration(spec.name)
            assert record is not None and record.watermark is not None
            watermark = record.watermark
            anchors = {a.server: a for a in ledger.anchors(record.id)}
        assert src.region_servers is not None
        writing = {str(s.name) for s in src.region_servers.servers if s.wal is not None}
        assert set(anchors) == writing and writing  # the file of every writing server at T0
        servers = set(anchors)
        run_workload(src, TABLE, seed=6, ops=300, rate=150)  # ~2 s: several rolls
        anchor_files = [Path(a.path).name for a in anchors.values()]
        wait_for(lambda: not any(p.name in anchor_files
                                 for p in src.hbase_root_dir.rglob("*")), 10,
                 "the cleaner to delete the files current at the watermark")

        result = CliRunner().invoke(cli, ["replay", "--config", str(config)],
                                    catch_exceptions=False)
        assert result.exit_code == 3, result.output
        assert "result: GAPS" in result.output
        assert not compare(src, dst, TABLE).equal  # edits really are lost

        gaps = gaps_of(config)
        for server in servers:
            spans = [g for g in gaps if g["server"] == server]
            assert spans, (server, gaps)
            # the lost stretch starts at the watermark and reaches the oldest surviving file
            # (a slow listing may have found the file of T0 cleaned already: no name time)
            after = anchors[server].name_time or watermark
            surviving = min(t for t in watcher.times(server)
                            if (src.hbase_root_dir / "oldWALs").exists() and t > after)
            assert min(g["first_time"] for g in spans) <= watermark  # type: ignore[type-var]
            assert max(g["last_time"] for g in spans) >= surviving  # type: ignore[type-var]
        missing = [g for g in gaps if g["kind"] == GapKind.MISSING.value]
        assert missing and all(g["path"] is None and g["detail"] for g in missing)

        again = CliRunner().invoke(cli, ["replay", "--config", str(config)],
                                   catch_exceptions=False)
        assert again.exit_code == 3  # the gap stays open: never exit 0
        after = [g for g in gaps_of(config) if g["kind"] == GapKind.MISSING.value]
        assert all(after.count(g) == 1 for g in missing)  # each stretch recorded once


def test_files_created_and_deleted_between_two_listings_are_a_gap(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = fast_cleaner_source(make_embedded, roll=0.4, ttl=3.0)
    with Watcher(src.hbase_root_dir) as watcher:
        # While the cleaner is off no file is deleted: the first run is told so (an archive
        # TTL far longer than it lasts), so however slow the machine, it proves its chains.
        config = write_migration(tmp_path, src, dst, TABLE, archive_ttl="10m")
        run_workload(src, TABLE, seed=7, ops=10)
        copy_table_schema(src, dst, TABLE)
        time.sleep(3.0)  # the first files, all before the watermark, may go unread: no gap
        assert src.region_servers is not None
        src.region_servers.cleaner_switch(False)
        set_watermark(config)
        first = run_replay(ReplayJob.from_spec(load_config(config)))
        src.region_servers.cleaner_switch(True)
        assert first.exit_code == 0, first.to_json()
        spec = load_config(write_migration(tmp_path, src, dst, TABLE))  # the cleaner's 3 s
        with Ledger.open(spec.ledger_url) as ledger:
            record = ledger.migration(spec.name)
            assert record is not None
            listed_before = {Path(r.path).name for r in ledger.wal_files(record.id, SOURCE)}
            watermark = record.watermark or 0
        run_workload(src, TABLE, seed=8, ops=600, rate=150)  # 4 s with no listing
        servers = {str(s.name) for s in src.region_servers.servers}
        wait_for(lambda: servers <= {str(parse_wal_path(n).server) for n in
                                     deleted_since(watcher, src.hbase_root_dir, watermark,
                                                   listed_before)},
                 30, "files of every server rolled, archived and deleted since the first run")

        second = run_replay(ReplayJob.from_spec(spec))
        assert second.exit_code == 3, second.to_json()
        with Ledger.open(spec.ledger_url) as ledger:
            listed = {Path(r.path).name for r in ledger.wal_files(record.id, SOURCE)}
            gaps = ledger.gaps(record.id)
        newest = {}  # per server, the newest file the second listing saw
        for name in listed:
            info = parse_wal_path(name)
            newest[str(info.server)] = max(newest.get(str(info.server), 0), info.timestamp or 0)
        never_listed = {n for n in watcher.names - listed - listed_before
                        if parse_wal_path(n).kind == "wal"
                        and watermark < (parse_wal_path(n).timestamp or 0) < newest[str(
                            parse_wal_path(n).server)]}
        assert never_listed  # the test really made files vanish unseen
        for name in never_listed:
            info = parse_wal_path(name)
            assert info.timestamp is not None
            assert any(g.server == str(info.server) and g.first_time is not None
                       and g.last_time is not None
                       and g.first_time <= info.timestamp <= g.last_time
                       for g in gaps), (name, gaps)


def deleted_since(watcher: Watcher, root: Path, since: int, listed: set[str]) -> set[str]:
    """Region server WAL files created after ``since`` the watcher saw, ``listed`` lacks
    and that no longer exist."""
    seen = set(watcher.names)
    live = {p.name for p in root.glob("WALs/*/*")}  # before oldWALs/: files only move there
    present = live | {p.name for p in root.glob("oldWALs/*")}
    return {n for n in seen - listed - present if (info := parse_wal_path(n)).kind == "wal"
            and (info.timestamp or 0) > since}


def listed_names(spec: MigrationSpec) -> set[str]:
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return {Path(r.path).name for r in ledger.wal_files(record.id, SOURCE)}


class DeleteOnePlanned(Observer):
    """Deletes the first planned archived file after planning, before it is read: the log
    cleaner winning the race between listing and reading."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.deleted: tuple[str, list[int]] | None = None

    def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
        task = next(t for t in tasks if t.state == "archived")
        local = self.root / "oldWALs" / parse_wal_path(task.path).name
        with WalReader(local) as reader:
            times = [e.key.write_time for e in reader]
        local.unlink()
        self.deleted = (task.path, times)


def test_a_file_deleted_between_listing_and_reading_is_a_gap_in_the_same_run(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = fast_cleaner_source(make_embedded, roll=3600, ttl=3600)
    config = write_migration(tmp_path, src, dst, TABLE, roll_period="1h")
    spec = set_watermark(config)
    run_workload(src, TABLE, seed=9, ops=100)
    copy_table_schema(src, dst, TABLE)
    assert src.region_servers is not None
    src.region_servers.roll()
    observer = DeleteOnePlanned(src.hbase_root_dir)
    summary = run_replay(ReplayJob.from_spec(spec), observer)
    assert observer.deleted is not None
    path, times = observer.deleted
    assert summary.exit_code == 3, summary.to_json()
    assert not summary.failures  # a gap, not a file failure
    gap, = summary.gaps
    assert gap.path == path and gap.first_time is not None and gap.last_time is not None
    assert gap.first_time <= min(times) and max(times) <= gap.last_time  # includes them
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        row = ledger.wal_file(record.id, SOURCE, path)
        assert row is not None and row.status is WalStatus.GAP


def test_a_crashed_servers_last_file_is_replayed_and_its_deletion_is_no_gap(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600, archive_ttl=0.5,
                           cleaner_interval=0.05, split_delay=3600)
    src, dst = make_embedded.pair(wal=settings)
    config = write_migration(tmp_path, src, dst, TABLE)
    spec = set_watermark(config)
    run_workload(src, TABLE, seed=11, ops=200)
    copy_table_schema(src, dst, TABLE)
    job = ReplayJob.from_spec(spec)
    assert run_replay(job).exit_code == 0
    assert src.region_servers is not None
    victim = src.region_servers.servers[0].name
    live_file = next(p for p in (src.hbase_root_dir / "WALs" / str(victim)).iterdir())
    run_workload(src, TABLE, seed=12, ops=100)
    src.region_servers.kill(str(victim))
    splitting = run_replay(job)  # its file waits in -splitting: read to its end
    assert splitting.exit_code == 0, splitting.to_json()
    assert [Path(o.path).parent.name for o in splitting.outcomes
            if Path(o.path).name == live_file.name] == [f"{victim}-splitting"]
    src.region_servers.cleaner_switch(False)  # archived, and still there for the next run
    assert src.region_servers.finish_split() == [live_file.name]
    archived = run_replay(job)
    assert archived.exit_code == 0, archived.to_json()
    assert [(Path(a).parent.name, Path(b).parent.name) for a, b in archived.moves] == [
        (f"{victim}-splitting", "oldWALs")]
    src.region_servers.cleaner_switch(True)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        rows = {Path(r.path).name: r for r in ledger.wal_files(record.id, SOURCE)}
    assert rows[live_file.name].status is WalStatus.REPLAYED
    wait_for(lambda: not any(p.name == live_file.name
                             for p in src.hbase_root_dir.rglob("*")), 10,
             "the cleaner to delete the dead server's file")
    final = run_replay(job)
    assert final.exit_code == 0, final.to_json()
    status = CliRunner().invoke(cli, ["status", "--config", str(config), "--json"],
                                catch_exceptions=False)
    assert status.exit_code == 0, status.output
    assert compare(src, dst, TABLE).equal


def test_idle_rolls_and_empty_files_are_no_gap_and_lag_is_zero_when_drained(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    # the follow lists the source more often than the TTL: on a busy machine its runs take
    # longer, so the TTL stretches with the load to keep that so
    src, dst = fast_cleaner_source(make_embedded, roll=0.5, ttl=2.5 * load_stretch())
    with Watcher(src.hbase_root_dir):
        # the config's roll period leaves room for a stalled roller (a busy machine once
        # held this process for 1.4 s: files 1.6 s apart read as a missing one at 500 ms)
        config = write_migration(tmp_path, src, dst, TABLE, roll_period="2s")
        run_workload(src, TABLE, seed=13, ops=50)
        copy_table_schema(src, dst, TABLE)
        spec = set_watermark(config)
        job = ReplayJob.from_spec(spec)
        stop = threading.Event()
        runs: list[int] = []
        sizes: set[int] = set()

        def watch_sizes() -> None:
            while not stop.is_set():
                sizes.update(p.stat().st_size for p in
                             (src.hbase_root_dir / "oldWALs").glob("*") if p.exists())
                time.sleep(0.02)

        sizer = threading.Thread(target=watch_sizes, daemon=True)
        sizer.start()
        follower = threading.Thread(target=lambda: runs.append(
            follow_replay(job, 0.1, stop).exit_code), daemon=True)
        follower.start()
        # written while the follow lists the source more often than the archive TTL
        run_workload(src, TABLE, seed=14, ops=50)
        time.sleep(4.0)  # idle source: rolls of empty files, archived and deleted
        stop.set()
        follower.join()
        sizer.join()
        assert runs == [0]
        assert run_replay(job).exit_code == 0  # what a stop mid-run left for the next run
        assert min(sizes) < 100  # header-and-trailer files were archived meanwhile
        assert compare(src, dst, TABLE).equal
        time.sleep(1.0)
        status = CliRunner().invoke(cli, ["status", "--config", str(config), "--json"],
                                    catch_exceptions=False)
        assert status.exit_code == 0, status.output
        migration, = json.loads(status.output)["migrations"]
        assert migration["lag"] == 0  # drained: the idle second did not add to it
        assert migration["retention"]["kind"] == "ttl"


class SlowFirstApply(WrappingTarget):
    """A target whose first write waits ``seconds`` (a slow target under a backlog): the
    run holding it lasts that long."""

    def __init__(self, target: ReplayTarget, slowed: threading.Event, seconds: float) -> None:
        super().__init__(target)
        self.slowed, self.seconds = slowed, seconds

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        if not self.slowed.is_set():
            self.slowed.set()
            time.sleep(self.seconds)
        return self.target.apply(table, mutations)


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "unwatched"])
def test_a_follow_run_longer_than_the_archive_ttl_is_listed_beside_and_proven_whole(
        tmp_path: Path, make_embedded: EmbeddedClusters, monkeypatch: pytest.MonkeyPatch,
        watched: bool) -> None:
    """A follow's run lasts three archive TTLs while the source rolls every 0.4 s. No file
    is deleted (the cleaner is off), but nothing but listings can prove that: the follow
    lists beside its run, so its next run finds every chain whole. Unwatched (the listings
    beside the run turned off), the next run cannot prove the stretch and says so: what the
    listings beside the run add."""
    if not watched:
        monkeypatch.setattr("hbase_migrate.replay.run.watch_period", lambda *_: 3600.0)
    # (the load average lags a load that just began: a TTL of a few seconds, not one)
    ttl = 2.0 * load_stretch()
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=2, roll_period=0.4,
                                                  archive_ttl=3600))
    assert src.region_servers is not None
    src.region_servers.cleaner_switch(False)
    config = write_migration(tmp_path, src, dst, TABLE, roll_period="2s",
                             archive_ttl=f"{int(ttl * 1000)}ms")
    run_workload(src, TABLE, seed=21, ops=50)
    copy_table_schema(src, dst, TABLE)
    job = ReplayJob.from_spec(set_watermark(config))
    stop, slowed = threading.Event(), threading.Event()
    runs: list[RunSummary] = []
    long: list[int] = []  # the index of the run the slow target held

    def on_run(summary: RunSummary) -> None:
        runs.append(summary)
        if slowed.is_set() and not long:
            long.append(len(runs) - 1)
        elif long:  # the run after the long one
            stop.set()

    # the follow lists from the watermark on, quick runs until the edits come
    follower = threading.Thread(target=follow_replay, args=(job, 0.2, stop), kwargs={
        "on_run": on_run,
        "sink": lambda j: SlowFirstApply(open_job_target(j), slowed, 3 * ttl)}, daemon=True)
    follower.start()
    run_workload(src, TABLE, seed=22, ops=50)  # what the long run applies
    follower.join(120)
    assert not follower.is_alive()
    assert slowed.is_set() and long and len(runs) == long[0] + 2
    assert all(r.exit_code == 0 for r in runs[:long[0]]), [r.to_json() for r in runs]
    runs = runs[long[0]:]
    long_run, after = runs
    assert long_run.exit_code == 0, long_run.to_json()
    unproven = [g for g in after.gaps if g.server is not None]
    if watched:
        assert after.exit_code == 0, after.to_json()
        assert run_replay(job).exit_code == 0
        assert compare(src, dst, TABLE).equal
    else:
        assert after.exit_code == 3 and unproven, after.to_json()


def test_follow_refuses_an_interval_the_cleaner_outruns_unless_pinned(
        tmp_path: Path, make_embedded: EmbeddedClusters,
        capsys: pytest.CaptureFixture[str]) -> None:
    settings = WalSettings(region_servers=2, roll_period=3600)
    src = make_embedded("source", over="native", folder=tmp_path / "src", wal=settings,
                        replication_peer="1")  # registered: its replication peer
    dst = make_embedded("target", folder=tmp_path / "dst")
    config = write_migration(tmp_path, src, dst, TABLE, archive_ttl="10s")
    spec = set_watermark(config)
    job = ReplayJob.from_spec(spec)
    stop = threading.Event()
    stop.set()
    with pytest.raises(ConfigError, match=r"too long.*archive TTL"):
        follow_replay(job, 5.0, stop)
    assert follow_replay(job, 4.9, stop).exit_code == 0
    assert follow_replay(job, 5.0, stop, force=True).exit_code == 0
    with pytest.raises(SystemExit) as refused:
        main(["replay", "--config", str(config), "--follow", "--interval", "6s"])
    assert refused.value.code == 2
    assert "--force" in capsys.readouterr().err

    info = CliRunner().invoke(cli, ["cluster", "info", "--config", str(config), "--json"],
                              catch_exceptions=False)
    assert json.loads(info.output)["retention"]["kind"] == "ttl"
    assert src.region_servers is not None and src.region_servers.replication is not None
    src.region_servers.replication.set_enabled(False)  # a disabled peer pins every WAL
    run_workload(src, TABLE, seed=15, ops=20)
    src.region_servers.roll()
    src.region_servers.replication.sync()
    info = CliRunner().invoke(cli, ["cluster", "info", "--config", str(config), "--json"],
                              catch_exceptions=False)
    retention = json.loads(info.output)["retention"]
    assert (retention["kind"], retention["peer"]) == ("pinned", "1"), retention
    assert follow_replay(job, 60.0, stop).exit_code == 0  # pinned: a long interval is safe

    # A queued file deleted behind HBase's back (never listed by replay) is missing.
    run_workload(src, TABLE, seed=16, ops=20)
    second = next(name for name in src.region_servers.roll()
                  if name not in listed_names(spec))
    src.region_servers.replication.sync()
    (src.hbase_root_dir / "oldWALs" / second).unlink()
    summary = run_replay(job)
    assert summary.exit_code == 3, summary.to_json()
    gap, = summary.gaps
    assert gap.path is None and gap.detail is not None
    assert second in gap.detail and "replication queue" in gap.detail



def test_a_replay_from_before_the_servers_started_reports_files_deleted_unseen(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    """A window starting before the source's servers did: the files holding the puts rolled,
    were archived and deleted before the first listing. The archived files still listed are
    a roll period apart, so only the head of each chain (the server's first file) shows the
    hole; it is a gap naming the server, and the replay exits 3."""
    start = int(time.time() * 1000) - 1_000
    time.sleep(0.05)
    src, dst = fast_cleaner_source(make_embedded, roll=1.0, ttl=2.0)
    with Watcher(src.hbase_root_dir) as watcher:
        config = write_migration(tmp_path, src, dst, TABLE)
        assert src.region_servers is not None
        servers = {str(s.name) for s in src.region_servers.servers}
        run_workload(src, TABLE, seed=11, ops=1_500, rate=1_500)
        copy_table_schema(src, dst, TABLE)
        first_files = {server: min(watcher.times(server)) for server in servers}
        wait_for(lambda: not any(p.name.endswith(f".{t}") for t in first_files.values()
                                 for p in src.hbase_root_dir.rglob("*") if p.is_file()), 15,
                 "the cleaner to delete every server's first WAL file")
        # as in the field, the replay comes later: every file of a server's first
        # FIRST_WAL_DELAY_MS (a server's first WAL may be made that late) is gone
        began = max(int(s.rsplit(",", 1)[1]) for s in servers) / 1000
        time.sleep(max(0.0, began + FIRST_WAL_DELAY_MS / 1000 + 4.0 - time.time()))

        result = CliRunner().invoke(cli, ["replay", "--config", str(config), "--start",
                                          str(start)], catch_exceptions=False)
        assert result.exit_code == 3, result.output
        assert "result: GAPS" in result.output
        assert not compare(src, dst, TABLE).equal  # the puts really are lost

        gaps = gaps_of(config)
        for server, first in first_files.items():
            span, = [g for g in gaps if g["server"] == server
                     and "the server started at" in str(g["detail"])]
            assert span["kind"] == GapKind.MISSING.value
            # the hole reaches from the server's start over its first file, deleted unseen
            started = int(server.rsplit(",", 1)[1])
            assert span["first_time"] <= started <= first <= span["last_time"]  # type: ignore[operator]
            assert server in result.output
