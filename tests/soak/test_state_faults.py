"""Faults beside kills (issue 76), on the embedded stack: the state folder's disk fills
during a replay, and the ledger's PostgreSQL restarts during a snapshot copy. The command
ends in one clear line (or rides the restart out), the ledger holds nothing half recorded
and no step left running, and the same command run again once the fault is gone goes on
from there: the target equals the source cell for cell.

Each fault is dealt while the step's process is stopped (SIGSTOP) just after its first
fact is recorded, so that the step is mid-way whatever the machine's speed; the process is
then let go (SIGCONT) into the fault."""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, WalStatus
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.pgserver import PostgresServer
from minihbase.server import MiniHBase
from tests.audit.conftest import new_postgres_server
from tests.support.minicluster import EmbeddedClusters, compare, run_workload, write_migration
from tests.support.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

COMMAND = [sys.executable, "-m", "hbase_migrate"]
ERROR = "hbase-migrate: error: "


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    """One source and one target for the module's tests, a table each."""
    with EmbeddedClusters(tmp_path_factory.mktemp("faults")) as clusters:
        yield clusters.pair()


@pytest.fixture
def table() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a filesystem of its own, 8 MiB (a tmpfs), unmounted at the end."""
    folder = tmp_path / "state"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs",
                           str(folder)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"a small filesystem cannot be mounted here ({done.stderr.strip()})")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of the module's own: a test restarts it."""
    server = new_postgres_server()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def fill(folder: Path) -> Path:
    """Fill ``folder``'s filesystem to its last byte; the file that fills it."""
    filler = folder / "filler"
    for size in (65536, 4096, 1):  # the last partial blocks too
        try:
            with filler.open("ab", buffering=0) as out:
                while True:
                    out.write(b"\1" * size)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


def with_ledger(config: Path, url: str, extra: str) -> Path:
    """``config`` (as :func:`write_migration` writes it) on ledger ``url``, plus ``extra``."""
    lines = config.read_text().split("\n")
    assert lines[2].startswith("ledger = ")
    lines[2] = f'ledger = "{url}"'
    config.write_text("\n".join(lines) + extra)
    return config


class Command:
    """A command of the migration run in a process of its own, its stderr read as it
    comes; stopped (SIGKILL) at the end if still running."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([*COMMAND, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.output: list[str] = []
        self.errors: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.output),
                                               (self.proc.stderr, self.errors))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream: IO[str], lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def pause(self) -> None:
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.proc.pid, signal.SIGCONT)

    def end(self, timeout: float) -> int:
        """Its exit code once it ended and its output is read."""
        code = self.proc.wait(timeout)
        for reader in self._readers:
            reader.join(timeout)
        return code

    def __enter__(self) -> Command:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.end(60)


def no_step_running(ledger: Ledger, mid: int) -> list[str]:
    return [f"{s.kind} #{s.id}" for s in ledger.steps(mid) if s.status is StepStatus.RUNNING]


def test_a_full_state_disk_stops_the_replay_in_one_line_and_the_rerun_goes_on(
        tmp_path: Path, pair: tuple[MiniHBase, MiniHBase], table: str,
        small_disk: Path) -> None:
    src, dst = pair
    url = f"sqlite:///{small_disk / 'ledger.db'}"
    config = with_ledger(write_migration(tmp_path, src, dst, table, name=table), url,
                         "[limits]\nreplay_cells_per_second = 200\n")
    spec = load_config(config)
    run_workload(src, table, seed=761, ops=100)
    prepare(spec)
    snapshot(spec)
    run_workload(src, table, seed=762, ops=400)  # only the replay brings these over
    assert src.region_servers is not None
    src.region_servers.roll()

    with Command("replay", "--config", str(config)) as replay, \
            Ledger.open(url, upgrade_schema=False) as ledger:
        mid = ledger.migration(table).id  # type: ignore[union-attr]
        wait_for(lambda: any(f.offset_reached for f in ledger.wal_files(mid, "source")), 60,
                 "the replay to record its first offsets")
        replay.pause()
        before = sorted((f.path, f.status, f.offset_reached, f.entries)
                        for f in ledger.wal_files(mid, "source"))
        assert any(status is not WalStatus.REPLAYED for _, status, _, _ in before), before
        filler = fill(small_disk)
        replay.resume()
        code = replay.end(120)
    # one line, naming the folder and what is wrong (log lines are none at this level)
    assert code == 2, replay.errors
    assert replay.errors == [f"{ERROR}no space left on the device of {small_disk} (the "
                             f"folder of ledger {url}): what was done before is recorded, the "
                             "last fact was not; free space there and run the same command "
                             "again"], replay.errors

    with Ledger.open(url, upgrade_schema=False) as ledger:
        with ledger._engine.begin() as conn:
            assert conn.exec_driver_sql("PRAGMA integrity_check").scalar() == "ok"
        # nothing recorded once the disk was full: every WAL file where it stood
        after = sorted((f.path, f.status, f.offset_reached, f.entries)
                       for f in ledger.wal_files(mid, "source"))
        assert after == before
        # the step recorded failed (the spare's room), not left running
        assert no_step_running(ledger, mid) == []
        failed = ledger.steps(mid, "replay")[-1]
        assert failed.status is StepStatus.FAILED
        assert (failed.error or "").startswith("LedgerFullError: no space left")

    filler.unlink()
    again = subprocess.run([*COMMAND, "replay", "--config", str(config)],
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    # a WAL file recorded further than the target got would be skipped, and differ here
    assert compare(src, dst, table).equal
    assert (small_disk / "ledger.db-spare").is_file()  # made again for the next fault


def test_a_postgresql_restart_mid_copy_is_ridden_out_or_one_line_and_the_rerun_goes_on(
        tmp_path: Path, pair: tuple[MiniHBase, MiniHBase], table: str,
        postgres: PostgresServer) -> None:
    src, dst = pair
    url = postgres.url(postgres.create_database(table))
    # as the ledger names itself: its driver, the password masked
    shown = url.replace("postgresql://", "postgresql+psycopg://").replace(postgres.password,
                                                                          "***")
    config = with_ledger(write_migration(tmp_path, src, dst, table, name=table), url,
                         "[limits]\ncopy_cells_per_second = 150\n"
                         "[ranges]\nmax_cells = 60\nplan_copy_cells = 1\n"
                         '[spark]\nmaster = "in-process"\n')
    spec = load_config(config)
    run_workload(src, table, seed=763, ops=500)
    prepare(spec)

    with Command("snapshot", "--config", str(config)) as copy, \
            Ledger.open(url, upgrade_schema=False) as ledger:
        mid = ledger.migration(table).id  # type: ignore[union-attr]
        wait_for(lambda: any(r.copied_at for r in ledger.key_ranges(mid)), 60,
                 "the copy to record its first range")
        copy.pause()
        postgres.pause()
        copy.resume()
        try:  # down until the copy met it: it ended, or waits to record its end
            wait_for(lambda: copy.proc.poll() is not None or copy.errors, 60,
                     "the copy to meet the stopped ledger")
        finally:
            postgres.run()
        code = copy.end(120)
    with Ledger.open(url, upgrade_schema=False) as ledger:
        steps = ledger.steps(mid, "snapshot")
        kept = sum(r.copied_at is not None for r in ledger.key_ranges(mid))
        running = no_step_running(ledger, mid)
    assert running == []
    if code != 0:  # failed in one line, its step recorded failed once the ledger was back
        errors = [line for line in copy.errors if line.startswith(ERROR)]
        assert code == 2 and len(errors) == 1, copy.errors
        assert errors[0].startswith(f"{ERROR}snapshot of migration '{table}' stopped: its "
                                    f"ledger {shown} did not answer ("), errors
        assert errors[0].endswith("what was recorded before is kept: run the same command "
                                  "again once the ledger answers"), errors
        assert postgres.password not in "\n".join(copy.errors)
        assert [s.status for s in steps] == [StepStatus.FAILED]
        assert (steps[0].error or "").startswith("LedgerUnreachableError: snapshot of")
        # the only other line: that it waited for the ledger to record the step's end
        assert all(line == errors[0] or "does not answer" in line for line in copy.errors)

        again = subprocess.run([*COMMAND, "snapshot", "--config", str(config)],
                               capture_output=True, text=True, timeout=120, check=False)
        assert again.returncode == 0, again.stderr
        skipped = re.search(r"^(\d+) key range\(s\) copied before: skipped$", again.stdout,
                            re.MULTILINE)
        assert skipped is not None and int(skipped[1]) == kept > 0, again.stdout
    assert compare(src, dst, table).equal
