"""The choice of a replay run's path (``[replay] bulk``: bulk load or the write path) and its
one-line reason, and what the run records when its bulk load fails.

The choice is asked of jobs whose target is described here (no cluster) and of a replay
into the embedded cluster over HBase's RPC, which takes no bulk load: asked for one
(``bulk = "always"``), the run says why it writes through the target's write path and still
converges. A bulk load that fails (the embedded cluster's files refused, as a real region
server may refuse them) ends the run with the error naming the window's files, none of them
recorded as replayed; the next run (the write path) replays them again and converges.
Loading on real HBase: ``tests/realstack/test_bulk_replay_real.py``."""

from __future__ import annotations

import errno
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from dataclasses import replace as changed
from pathlib import Path
from typing import Any, TypeVar

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.config_parts import ClusterSpec, ReplaySettings
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay import bulkfiles, bulkrun, run
from hbase_migrate.replay.bulkload import BulkLoadError
from hbase_migrate.replay.bulkrun import BULK, WRITE, PathChoice, choose_path
from hbase_migrate.replay.errors import SpillError, SpillSpaceError
from hbase_migrate.replay.file_replay import FileProgress
from hbase_migrate.replay.job import FileTask, ReplayJob
from minihbase.zookeeper import ZooKeeperServer
from tests.replay.bulk_runs import (
    TABLE,
    ReadingLoad,
    RefusedLoad,
    bulk_loads_read,
    embedded_migration,
    with_memory,
)
from tests.support.minicluster import (
    clusters_over_rpc,
    compare,
)

GiB = 1 << 30
REAL = ClusterEndpoints("dst", zookeeper="zk:2181", client="native",
                        webhdfs="http://nn:9870", hbase_root="/hbase")


def target_of(found: ClusterEndpoints) -> ClusterSpec:
    """A migration's target section of explicit endpoints (what the choice asks of it)."""
    return ClusterSpec(role="target", explicit=found)


@dataclass
class Spec:
    replay: ReplaySettings


@dataclass
class Job:
    """A replay job as far as the choice reads it."""

    spec: Spec
    target: ClusterSpec
    force_thrift1: bool = False


@dataclass
class Probe:
    """The target's HBase root over WebHDFS: a real HBase's, or not, or no answer."""

    real: bool | Exception = True
    asked: list[str] = field(default_factory=list)

    def real_root(self, endpoints: ClusterEndpoints) -> bool:
        self.asked.append(endpoints.name)
        if isinstance(self.real, Exception):
            raise self.real
        return self.real


def job(bulk: str = "auto", target: ClusterEndpoints = REAL, **more: Any) -> Any:
    return Job(Spec(ReplaySettings(bulk=bulk, bulk_backlog=GiB)), target_of(target), **more)


def tasks(*sizes: int) -> list[FileTask]:
    """Files of ``sizes`` bytes, the first read from byte 1000 on."""
    return [FileTask(f"/hbase/oldWALs/rs%2C1%2C1.{n}", "rs,1,1", n, size, "archived",
                     start_offset=1000 if n == 0 else 0) for n, size in enumerate(sizes)]


def choice(asked: Any, planned: list[FileTask], probe: Probe | None = None) -> PathChoice:
    return choose_path(asked, planned, probe or Probe())


def test_the_defaults_write_through_the_write_path() -> None:
    assert ReplaySettings() == ReplaySettings(bulk="never", bulk_backlog=GiB,
                                              bulk_window=256 << 20)
    probe = Probe()
    default = Job(Spec(ReplaySettings()), target_of(REAL))
    assert choice(default, tasks(3 * GiB), probe) == PathChoice(
        WRITE, '[replay] bulk = "never"', 3 * GiB - 1000)
    chosen = choice(job(), tasks(GiB // 2, GiB // 2 - 1000), probe)
    assert chosen == PathChoice(WRITE, "the backlog, 1.02e+03 MiB of WAL in 2 file(s), is "
                                "below [replay] bulk_backlog (1 GiB)", GiB - 2000)
    assert probe.asked == []  # nothing asked of the target below the threshold


def test_a_backlog_reaching_the_threshold_is_bulk_loaded() -> None:
    chosen = choice(job(), tasks(GiB // 2 + 1000, GiB // 2))
    assert chosen.bulk and chosen.backlog == GiB
    assert chosen.line == (
        "replay path: bulk load (the backlog, 1 GiB of WAL in 2 file(s), reaches [replay] "
        "bulk_backlog (1 GiB), and the target is HBase over its RPC with its HDFS over "
        "WebHDFS)")
    assert choice(job("always"), tasks(0, 10)) == PathChoice(
        BULK, '[replay] bulk = "always", and the target is HBase over its RPC with its HDFS '
        "over WebHDFS", 10)
    assert choice(job("never"), tasks(2 * GiB)) == PathChoice(
        WRITE, '[replay] bulk = "never"', 2 * GiB - 1000)


@pytest.mark.parametrize(("asked", "probe", "reason"), [
    (job("always", force_thrift1=True), Probe(),
     "--thrift1 writes through the target's Thrift1 gateway, which has no bulk load"),
    (job("always", ClusterEndpoints("dst", thrift="gw:9090", thrift2="gw:9091", webhdfs="http://nn:9870",
                                    hbase_root="/hbase")), Probe(),
     "the target cluster 'dst' is reached through its Thrift gateway, which has no bulk "
     'load (a bulk load goes over HBase\'s RPC: client = "native")'),
    (job("always", ClusterEndpoints(
        "dst", zookeeper="zk:2181", client="native", webhdfs="http://nn:9870",
        hbase_root="/hbase", security=ClusterSecurity(auth="kerberos", principal="me@R",
                                                      keytab="me.keytab"))), Probe(),
     "the target cluster 'dst' is Kerberos-secured, and its region servers take a bulk "
     "load only with a delegation token of its filesystem, which is not sent yet"),
    (job("always", ClusterEndpoints("dst", zookeeper="zk:2181", client="native")), Probe(),
     "the target cluster 'dst' names no webhdfs URL and hbase_root, and a bulk load stages "
     "its files on the target's HDFS over WebHDFS"),
    (job("always"), Probe(False),
     "the target cluster 'dst' has no hbase.version under its HBase root over WebHDFS: it "
     "is no HBase that keeps its tables in HFiles (the embedded cluster takes no bulk "
     "load)"),
    (job("always"), Probe(ConfigError("nn:9870 refused")),
     "the target cluster 'dst''s HBase root over WebHDFS could not be checked: nn:9870 "
     "refused"),
], ids=["thrift1", "gateway", "kerberos", "no-webhdfs", "no-real-root", "no-answer"])
def test_a_target_that_takes_no_bulk_load_is_written_saying_why(
        asked: Any, probe: Probe, reason: str) -> None:
    assert choice(asked, tasks(2 * GiB), probe) == PathChoice(WRITE, reason, 2 * GiB - 1000)


def test_a_bigtable_target_is_written_through_its_client() -> None:
    asked = job("always")
    asked.target = changed(asked.target, bigtable=object())
    assert choice(asked, tasks(1)).reason == ("the target is Cloud Bigtable, which takes no "
                                              "bulk load")


def test_bulk_settings_are_checked(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    for line, said in (('bulk = "sometimes"', "'auto' or 'always' or 'never'"),
                       ('bulk_backlog = "1KB"', "a size such as")):
        config.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n'
                          '[target]\nthrift = "h:9091"\n[[tables]]\nsource = "t"\n'
                          f"[replay]\n{line}\n", encoding="utf-8")
        with pytest.raises(ConfigError, match=said):
            load_config(config)
    config.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n'
                      '[target]\nthrift = "h:9091"\n[[tables]]\nsource = "t"\n'
                      '[replay]\nbulk = "always"\nbulk_backlog = "2GiB"\n'
                      'bulk_window = "64MiB"\n', encoding="utf-8")
    assert load_config(config).replay == ReplaySettings(bulk="always", bulk_backlog=2 * GiB,
                                                        bulk_window=64 << 20)


def replay_section(tmp_path: Path, lines: str) -> ReplaySettings:
    config = tmp_path / "m.toml"
    config.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n'
                      '[target]\nthrift = "h:9091"\n[[tables]]\nsource = "t"\n'
                      f"[replay]\n{lines}\n", encoding="utf-8")
    return load_config(config).replay


@pytest.mark.parametrize(("lines", "memory"), [
    ("", 64 << 20),  # the default
    ('bulk_memory = "16MiB"', 16 << 20),
    ('bulk_memory = "4MiB"', 4 << 20),  # the least
    ('bulk_memory = "256MiB"', 256 << 20),  # the whole default window
    (f"bulk_memory = {20 << 20}", 20 << 20),  # bytes
    ('bulk_window = "1GiB"\nbulk_memory = "512MiB"', 512 << 20),
    ('bulk_window = "8MiB"', 8 << 20),  # a window below the default: its own size
    ('bulk_window = "1KiB"', 1024),  # below the least too
    ('bulk_window = "1KiB"\nbulk_memory = 1024', 1024),
])
def test_bulk_memory_is_read(tmp_path: Path, lines: str, memory: int) -> None:
    assert replay_section(tmp_path, lines).bulk_memory == memory


@pytest.mark.parametrize(("lines", "expected", "got"), [
    ('bulk_memory = "1MiB"', "from 4MiB up to [replay] bulk_window (256MiB)", "'1MiB'"),
    ('bulk_memory = "512MiB"', "from 4MiB up to [replay] bulk_window (256MiB)", "'512MiB'"),
    ('bulk_window = "32MiB"\nbulk_memory = "64MiB"',
     "from 4MiB up to [replay] bulk_window (32MiB)", "'64MiB'"),
    ('bulk_window = "1KiB"\nbulk_memory = "4MiB"',
     "from 1KiB up to [replay] bulk_window (1KiB)", "'4MiB'"),
    ("bulk_memory = 0", "from 4MiB up to [replay] bulk_window (256MiB)", "0"),
    ('bulk_memory = "lots"', "from 4MiB up to [replay] bulk_window (256MiB)", "'lots'"),
    ("bulk_memory = true", "from 4MiB up to [replay] bulk_window (256MiB)", "True"),
])
def test_bulk_memory_out_of_its_range_is_refused_naming_it(
        tmp_path: Path, lines: str, expected: str, got: str) -> None:
    with pytest.raises(ConfigError) as refused:
        replay_section(tmp_path, lines)
    assert str(refused.value) == (f"{tmp_path / 'm.toml'}: [replay] bulk_memory: expected a "
                                  f"size in bytes {expected}, got {got}")


def test_bulk_memory_reaches_the_windows_and_round_trips(tmp_path: Path) -> None:
    from hbase_migrate.config import MigrationSpec

    config = tmp_path / "m.toml"
    config.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n'
                      '[target]\nthrift = "h:9091"\n[[tables]]\nsource = "t"\n'
                      '[replay]\nbulk_window = "1KiB"\n', encoding="utf-8")
    spec = load_config(config)  # a window below every budget: its default round-trips too
    assert MigrationSpec.from_dict(spec.to_dict()).replay == spec.replay
    assert ReplaySettings().bulk_memory == bulkfiles.SPILL_BYTES  # the window's own default


def replay_steps(config: Path) -> list[Any]:
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return [s for s in ledger.steps(record.id) if s.kind == "replay"]


@pytest.mark.integration
def test_the_embedded_target_takes_no_bulk_load_and_is_written_saying_why(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config = embedded_migration(tmp_path, src, dst, "always")
        summary = run.run_replay(ReplayJob.from_spec(load_config(config)))
        assert summary.exit_code == 0, summary.to_json()
        path = summary.to_json()["replay_path"]
        assert path["path"] == WRITE and "bulk" not in path, path
        assert path["reason"].endswith("has no hbase.version under its HBase root over "
                                       "WebHDFS: it is no HBase that keeps its tables in "
                                       "HFiles (the embedded cluster takes no bulk load)")
        assert replay_steps(config)[-1].metrics["replay_path"] == path
        result = compare(src, dst, TABLE)
        assert result.equal and result.source_cells > 100, result.to_json()


@pytest.mark.integration
def test_a_spilled_window_hands_the_load_the_files_of_one_held_whole(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's window spilling a sorted run after every mutation gives its load the cells
    the window held whole gives; the spilled runs are gone with the failed load."""
    spilled = bulk_loads_read(monkeypatch)
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        job = ReplayJob.from_spec(load_config(embedded_migration(tmp_path, src, dst, "always")))
        loads = {}
        for memory in (1 << 40, 1):  # never spilled; a run after every mutation
            ReadingLoad.read = []
            with pytest.raises(BulkLoadError):
                run.run_replay(with_memory(job, memory))
            loads[memory] = ReadingLoad.read
    assert len(spilled) > 10 and not any(p.parent.exists() for p in spilled)
    assert loads[1] == loads[1 << 40] and sum(map(len, loads[1])) > 100


E = TypeVar("E", bound=BaseException)


def recorded_files(config: Path, job: ReplayJob) -> list[Any]:
    """The WAL files the migration's ledger holds for ``job``'s stream."""
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return list(ledger.wal_files(record.id, job.stream))


def failed_run(tmp_path: Path, src: Any, dst: Any, error: type[E], memory: int | None
               ) -> tuple[Path, ReplayJob, E]:
    """A bulk replay of the embedded pair (``[replay] bulk_memory`` at ``memory``) that
    raises ``error``: the migration's config, the job and the error."""
    config = embedded_migration(tmp_path, src, dst, "always")
    job = ReplayJob.from_spec(load_config(config))
    job = job if memory is None else with_memory(job, memory)
    ReadingLoad.read = []
    with pytest.raises(error) as failed:
        run.run_replay(job)
    return config, job, failed.value


@pytest.mark.integration
def test_a_run_without_room_for_a_spilled_run_fails_in_one_line_recording_nothing(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window spills under TMPDIR; the free space read there is short of its first
    run: the run stops before writing it, in one line naming the folder, the bytes needed
    and the settings to change, no run and no spill folder left, no file recorded, nothing
    loaded; with room again, the next run spills there, loads and records its file."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    asked: list[Path] = []
    room = [10]

    def free(folder: Path) -> int:
        asked.append(folder)
        return room[0]

    monkeypatch.setattr(bulkrun, "free_bytes", free)
    spilled = bulk_loads_read(monkeypatch)
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config = embedded_migration(tmp_path, src, dst, "always")
        job = with_memory(ReplayJob.from_spec(load_config(config)), 1)
        ReadingLoad.read = []
        with pytest.raises(SpillSpaceError) as failed:
            run.run_replay(job)
        said = str(failed.value)
        assert "\n" not in said and failed.value.folder == str(temp)
        assert re.fullmatch(
            rf"migration mig: table {TABLE}: no room for the bulk window's next sorted run in "
            rf"{re.escape(str(temp))}: it needs up to (\d+) bytes \([^)]+\), 10 free; free "
            r"space there, point TMPDIR to a larger folder, or lower \[replay\] bulk_window "
            r"\(a window spills what it holds past \[replay\] bulk_memory\); none of the "
            r"window's WAL files is recorded as replayed \(the next run replays them again\)",
            said), said
        assert failed.value.needed > 10 and asked == [temp]
        assert spilled == [] and list(temp.iterdir()) == [] and ReadingLoad.read == []
        rows = recorded_files(config, job)
        assert rows and not [r for r in rows if r.status == "replayed" or r.offset_reached]
        step = replay_steps(config)[-1]
        assert step.error and said in step.error

        room[0] = 1 << 40
        with pytest.raises(BulkLoadError):  # the embedded target refuses the load itself
            run.run_replay(job)
        assert spilled and all(p.parent.parent == temp for p in spilled)
        assert ReadingLoad.read and list(temp.iterdir()) == []


@pytest.mark.integration
def test_a_spill_folder_removed_under_the_run_stops_it_and_no_file_is_taken_for_vanished(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cleaner empties TMPDIR while the window spills: the next run's file cannot be
    made there. That FileNotFoundError is the spill folder's, not a WAL file that vanished:
    the run stops in one line naming the folder, and no WAL file is recorded as replayed,
    vanished or a gap."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    removed: list[Path] = []

    def free(folder: Path) -> int:  # the spill folders gone once the first run is there
        for made in folder.glob("hbase-migrate-spill-*"):
            if any(made.iterdir()):
                shutil.rmtree(made)
                removed.append(made)
        return 1 << 40

    monkeypatch.setattr(bulkrun, "free_bytes", free)
    bulk_loads_read(monkeypatch)
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config, job, failed = failed_run(tmp_path, src, dst, SpillError, 1)
        said = str(failed)
        assert removed and "\n" not in said and failed.folder == str(temp)
        assert "could not be written: No such file or directory" in said, said
        assert said.endswith("none of the window's WAL files is recorded as replayed (the "
                             "next run replays them again)"), said
        rows = recorded_files(config, job)
        assert rows and all(r.status not in ("replayed", "gap") and r.vanished_at is None
                            and not r.offset_reached
                            for r in rows), rows
        assert said in (replay_steps(config)[-1].error or "") and ReadingLoad.read == []


@pytest.mark.integration
def test_a_disk_filling_as_the_windows_files_are_written_stops_the_run_in_one_line(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's HFiles find no room under TMPDIR as they are written: one line naming
    the folder and the system's word, no file recorded as replayed, nothing loaded."""
    def full(self: bulkfiles.BulkWindow, folder: Path, task: str, **_: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device", str(folder / "f" / "hfile"))

    bulk_loads_read(monkeypatch)
    monkeypatch.setattr(bulkfiles.BulkWindow, "write", full)
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config, job, failed = failed_run(tmp_path, src, dst, SpillError, None)
        said = str(failed)
        assert "\n" not in said and failed.folder == tempfile.gettempdir()
        assert (f"the bulk window's files could not be written under {tempfile.gettempdir()}"
                ": No space left on device") in said, said
        rows = recorded_files(config, job)
        assert rows and not [r for r in rows if r.status == "replayed" or r.offset_reached]
        assert ReadingLoad.read == []


@pytest.mark.integration
def test_a_failed_bulk_load_fails_the_run_and_records_none_of_its_files(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config = embedded_migration(tmp_path, src, dst, "always")
        job = ReplayJob.from_spec(load_config(config))
        monkeypatch.setattr(run, "choose_path", lambda job, planned: PathChoice(
            BULK, "asked by the test", 1))
        monkeypatch.setattr(bulkrun, "BulkLoad", RefusedLoad)
        with pytest.raises(BulkLoadError) as failed:
            run.run_replay(job)
        said = str(failed.value)
        assert said.startswith("migration mig: the bulk load of 1 WAL file(s) failed, none "
                               "of them recorded as replayed (the next run replays them "
                               "again): ")
        assert f"table {TABLE}: " in said and RefusedLoad.given
        # one file per region and family, written for the load and removed after it
        assert {p.parent.name for p in RefusedLoad.given} == {"d", "m"}
        assert not any(p.exists() for p in RefusedLoad.given)
        rows = recorded_files(config, job)
        held = [r for r in rows if r.path in said]
        assert len(held) == 1 and held[0].offset_reached == 0, held
        assert held[0].status != "replayed"
        step = replay_steps(config)[-1]
        assert step.error and said.splitlines()[0] in step.error
        assert step.metrics["replay_path"]["bulk"]["loads"] == 0
        assert not compare(src, dst, TABLE).equal

        monkeypatch.undo()
        again = run.run_replay(job)  # the embedded target: the write path, every file
        assert again.exit_code == 0, again.to_json()
        assert again.to_json()["replay_path"]["path"] == WRITE
        assert compare(src, dst, TABLE).equal


def test_the_run_summary_says_the_path_and_what_the_loads_did() -> None:
    from hbase_migrate.commands.replay import render_summary
    from hbase_migrate.replay.summary import RunSummary

    summary = RunSummary("m", "catch-up", 0, None, False)
    summary.replay_path = {"path": BULK, "reason": '[replay] bulk = "always", and ...',
                           "backlog_bytes": 3 << 30,
                           "bulk": {"loads": 2, "files": 8, "bytes": 5 << 20, "regions": 4,
                                    "cells": 900, "split": 0, "seconds": 12.34}}
    assert ('replay path: bulk load ([replay] bulk = "always", and ...); 2 load(s) of 8 '
            "file(s), 5 MiB, into 4 region(s) in 12.3 s") in render_summary(summary)
    summary.replay_path = {"path": WRITE, "reason": '[replay] bulk = "never"',
                           "backlog_bytes": 10}
    assert 'replay path: write path ([replay] bulk = "never")\n' in render_summary(summary)
    assert summary.to_json()["replay_path"] == summary.replay_path


class Recorded:
    """A run's ledger bookkeeping as calls, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def handled(self, task: FileTask) -> bool:
        return False

    def begin(self, task: FileTask) -> None:
        self.calls.append(("begin", task.path))

    def progress_hook(self, task: FileTask) -> Any:
        return lambda path, progress, totals: self.calls.append(
            ("progress", path, progress.offset))

    def settle(self) -> None:
        self.calls.append(("settle",))

    def finish(self, task: FileTask, outcome: Any) -> Any:
        self.calls.append(("finish", task.path, outcome.tags_dropped))
        return outcome


def acknowledged(path: str, offset: int) -> FileProgress:
    """A file's progress acknowledged up to ``offset`` (its counts empty)."""
    return FileProgress(path, offset, None, 0, 0, {}, {}, 0, {}, (), (), {}, 0, 0, None)


def test_held_books_record_nothing_before_the_load_then_each_file_in_order() -> None:

    from hbase_migrate.replay.bulkrun import HeldBooks
    from hbase_migrate.replay.job import FileOutcome, Totals

    inner = Recorded()
    books = HeldBooks(inner)
    first, second = tasks(10, 20)
    for task, offsets in ((first, (400, 700)), (second, (900,))):
        books.begin(task)
        hook = books.progress_hook(task)
        for offset in offsets:
            hook(task.path, acknowledged(task.path, offset), Totals())
        outcome = FileOutcome(task.path, task.server, 0, offsets[-1], True, Totals(),
                              tags_dropped=3)
        assert books.finish(task, outcome) == changed(outcome, tags_dropped=0)
    books.settle()  # as a run that stops does: nothing held is recorded
    assert inner.calls == [("begin", first.path), ("begin", second.path), ("settle",)]
    assert books.paths() == [first.path, second.path]
    books.release()
    assert inner.calls[3:] == [  # the newest progress of each, its end, in the run's order
        ("progress", first.path, 700), ("finish", first.path, 0),
        ("progress", second.path, 900), ("finish", second.path, 0), ("settle",)]
    assert books.paths() == []
