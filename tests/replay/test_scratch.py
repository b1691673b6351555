"""A bulk replay's local folders left by a process killed (``replay/scratch.py``): child
processes spill a bulk window's runs as the product does and are SIGKILLed or kept alive;
:func:`sweep` removes a folder of a killed one with the bytes its files held (summed here
from the files before the kill), also once its pid belongs to a live process, and keeps
every other: a live process's, one whose name is not exactly ours, another host's, and one
locked by a live process whatever its name says. A bulk replay run after such kills removes
their folders as it starts."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.sizing import format_bytes
from hbase_migrate.config import load_config
from hbase_migrate.processes import process_started
from hbase_migrate.replay import run
from hbase_migrate.replay.bulkload import BulkLoadError
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.scratch import Scratch, host_name, sweep
from minihbase.zookeeper import ZooKeeperServer
from tests.replay.bulk_runs import ReadingLoad, bulk_loads_read, embedded_migration, with_memory
from tests.support.minicluster import clusters_over_rpc

CHILD = """
import sys
from pathlib import Path
from hbase_migrate.cluster.descriptors import FamilyDescriptor, RegionDescriptor, TableDescriptor
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.scratch import Scratch
from hbase_migrate.wal.model import Cell, CellType

window = BulkWindow(TableDescriptor("t", (FamilyDescriptor(b"f"),)),
                    [RegionDescriptor("t", b"", b"", 1)], memory=1, spill_dir=Path(sys.argv[1]))
for n in range(int(sys.argv[2])):
    window.add_cells([Cell(b"row%05d" % n, b"f", b"q", 1, CellType.PUT, b"v" * 1000)])
if sys.argv[3] == "bulk":  # its HFiles written, about to be loaded
    folder = Scratch("bulk", Path(sys.argv[1])).path
    window.write(folder, "t")
print("spilled", flush=True)
sys.stdin.read()  # until killed
"""


class Spiller:
    """A child process that spilled ``runs`` runs of a bulk window under ``where`` (for
    ``kind`` bulk, then wrote the window's HFiles there)."""

    def __init__(self, where: Path, runs: int, kind: str = "spill") -> None:
        before = set(where.iterdir())
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, str(where), str(runs), kind],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline() == b"spilled\n"
        (self.folder,) = set(where.iterdir()) - before
        files = [p for p in self.folder.rglob("*") if p.is_file()]
        self.runs = sorted(str(p.relative_to(self.folder)) for p in files)
        self.bytes = sum(p.stat().st_size for p in files)
        assert self.runs == ([f"run-{n:05d}" for n in range(runs)] if kind == "spill"
                             else ["f/t-00000-first"]) and self.bytes > runs * 100

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        """SIGKILLed, and left a zombie: ended, not yet reaped."""
        os.kill(self.pid, signal.SIGKILL)
        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)

    def end(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


@pytest.fixture
def spillers() -> Iterator[list[Spiller]]:
    made: list[Spiller] = []
    yield made
    for spiller in made:
        spiller.end()


def spiller(made: list[Spiller], where: Path, runs: int, kind: str = "spill") -> Spiller:
    made.append(Spiller(where, runs, kind))
    return made[-1]


def gone_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.Popen([sys.executable, "-c", ""])
    done.wait()
    return done.pid


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the sweep logged (a whole suite's run may leave the root logger at INFO: the
    clusters' and the ledger's lines are captured too)."""
    return [r.getMessage() for r in caplog.records if r.name == "hbase_migrate.replay.scratch"]


def test_a_killed_processs_folder_is_removed_with_its_bytes_and_a_live_ones_kept(
        tmp_path: Path, spillers: list[Spiller], caplog: pytest.LogCaptureFixture) -> None:
    killed, live = spiller(spillers, tmp_path, 12), spiller(spillers, tmp_path, 3)
    assert killed.folder.name.startswith(f"hbase-migrate-spill-{host_name()}-{killed.pid}-")
    assert sweep(tmp_path) == []  # both alive
    killed.kill()
    mine = Scratch("spill", tmp_path)
    (mine.path / "run-00000").write_bytes(b"x" * 10)
    with caplog.at_level(logging.INFO, "hbase_migrate.replay.scratch"):
        assert sweep(tmp_path) == [(killed.folder, killed.bytes)]
    assert not killed.folder.exists()
    assert sorted(p.name for p in live.folder.iterdir()) == live.runs
    assert (mine.path / "run-00000").read_bytes() == b"x" * 10
    assert said(caplog) == [
        f"removed {killed.folder}, left by process {killed.pid} of this host, which is gone: "
        f"{killed.bytes} bytes ({killed.bytes / 1024:.3g} KiB) freed"]
    mine.remove()
    assert sweep(tmp_path) == [] and list(tmp_path.iterdir()) == [live.folder]


def test_folders_not_exactly_ours_or_of_another_host_are_kept(tmp_path: Path) -> None:
    """Only a folder named exactly as a bulk replay names it, of this host, goes; the one
    made last (of a gone process, named as ours) shows the sweep did run."""
    pid, host = gone_pid(), host_name()
    kept = [f"hbase-migrate-spill-{n}" for n in (
        "k2j4x_9a",  # named before issue 76: no owner
        f"other-host-{pid}-1-k2j4x_9a", f"{host}-{pid}-1-k2j4x_9a.old", f"{host}-{pid}-k2j4x_9a",
        f"{host}-x{pid}-1-k2j4x_9a", f"{host}-{pid}-1-K2J4X")] + [
        f"hbase-migrate-pg-{host}-{pid}-1-k2j4x_9a", f"hbase-migrate-spillx-{host}-{pid}-1-ab",
        f"my-hbase-migrate-spill-{host}-{pid}-1-k2j4x_9a", "hbase-migrate-spill-"]
    for name in kept:
        (tmp_path / name).mkdir()
        (tmp_path / name / "run-00000").write_bytes(b"kept")
    ours = f"hbase-migrate-bulk-{host}-{pid}-1-k2j4x_9a"
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "run-00000").write_bytes(b"kept")
    (tmp_path / f"hbase-migrate-spill-{host}-{pid}-1-aaaaaaaa").write_bytes(b"a file")
    (tmp_path / f"hbase-migrate-spill-{host}-{pid}-1-bbbbbbbb").symlink_to(tmp_path / "elsewhere")
    (tmp_path / ours).mkdir()
    (tmp_path / ours / "0").mkdir()
    (tmp_path / ours / "0" / "hfile").write_bytes(b"12345")
    assert sweep(tmp_path) == [(tmp_path / ours, 5)]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([
        *kept, "elsewhere", f"hbase-migrate-spill-{host}-{pid}-1-aaaaaaaa",
        f"hbase-migrate-spill-{host}-{pid}-1-bbbbbbbb"])
    assert all((tmp_path / n / "run-00000").read_bytes() == b"kept" for n in [*kept, "elsewhere"])


def test_a_pid_given_again_to_a_live_process_and_a_lock_held_are_told_apart(
        tmp_path: Path, spillers: list[Spiller]) -> None:
    """A killed process's folder whose pid now belongs to a live process (renamed here to
    that pid, as the kernel would give it again) goes: its start time is not the live
    one's. The live process's own folder renamed to the killed one's name, as a process of
    another pid namespace sharing TMPDIR could name it, stays: its lock is held."""
    killed, live = spiller(spillers, tmp_path, 2), spiller(spillers, tmp_path, 2)
    killed.kill()
    start = killed.folder.name.split("-")[-2]
    assert int(start) != process_started(live.pid)
    reused = killed.folder.with_name(killed.folder.name.replace(
        f"-{killed.pid}-{start}-", f"-{live.pid}-{start}-"))
    killed.folder.rename(reused)
    renamed = killed.folder.with_name(killed.folder.name.replace("-spill-", "-bulk-"))
    live.folder.rename(renamed)
    live_start = process_started(live.pid)
    alive_unlocked = tmp_path / f"hbase-migrate-spill-{host_name()}-{live.pid}-{live_start}-ab"
    alive_unlocked.mkdir()  # as between its making and its lock
    assert sweep(tmp_path) == [(reused, killed.bytes)]
    assert sorted(p.name for p in renamed.iterdir()) == live.runs and alive_unlocked.exists()
    live.kill()
    assert sorted(sweep(tmp_path)) == sorted([(renamed, live.bytes), (alive_unlocked, 0)])



@pytest.mark.integration
def test_a_bulk_replay_run_again_after_kills_removes_what_they_left(
        tmp_path: Path, zookeeper: ZooKeeperServer, monkeypatch: pytest.MonkeyPatch,
        spillers: list[Spiller], caplog: pytest.LogCaptureFixture) -> None:
    """Bulk replays killed as their window spilled and as its HFiles waited to be loaded
    leave their folders under TMPDIR; a bulk replay starting removes them, one line each,
    and keeps a live one's; its own folders are gone once it ended."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    spilled, loaded = spiller(spillers, temp, 5), spiller(spillers, temp, 3, "bulk")
    live = spiller(spillers, temp, 2)
    assert loaded.folder.name.startswith("hbase-migrate-bulk-")
    spilled.kill()
    loaded.kill()
    runs = bulk_loads_read(monkeypatch)
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        job = ReplayJob.from_spec(load_config(embedded_migration(tmp_path, src, dst, "always")))
        with caplog.at_level(logging.INFO, "hbase_migrate.replay.scratch"), \
                pytest.raises(BulkLoadError):  # the embedded target refuses the load itself
            run.run_replay(with_memory(job, 1))
    assert sorted(said(caplog)) == sorted(
        f"removed {k.folder}, left by process {k.pid} of this host, which is gone: {k.bytes} "
        f"bytes ({format_bytes(k.bytes)}) freed" for k in (spilled, loaded))
    assert runs and ReadingLoad.read and list(temp.iterdir()) == [live.folder]
