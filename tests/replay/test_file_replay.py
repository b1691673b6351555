"""The one-file replay loop against a recording target (no server): bounded batches,
progress only after acknowledgement, progress over skipped stretches, failures."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.replay.apply import AppliedCounts, count_cells
from hbase_migrate.replay.errors import ReplayWriteError
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.reader import WalReader
from tests.support.replay import T, entries_for, make_wal


class Recorder:
    """A target that records what it acknowledges, and can refuse the n-th call."""

    name = "recorder"

    def __init__(self, fail_on_call: int | None = None) -> None:
        self.events: list[tuple[str, int]] = []  # ("apply", end offset) / ("progress", offset)
        self.sizes: list[int] = []
        self.fail_on_call = fail_on_call

    def describe(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, (FamilyDescriptor(b"d"),))

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        if self.fail_on_call == len(self.sizes):
            raise ReplayWriteError("refused")
        self.sizes.append(sum(len(m.cells) for m in mutations))
        self.events.extend(("apply", m.position.offset) for m in mutations)
        return AppliedCounts(count_cells(mutations), 1)

    def progress(self, p: FileProgress) -> None:
        self.events.append(("progress", p.offset))


def _calls(n: int, width: int) -> list[list[Cell]]:
    return [[Cell(b"r%03d" % i, b"d", b"q%d" % j, T + i, CellType.PUT, b"v")
             for j in range(1 + i % width)] for i in range(n)]


class Sender(Recorder):
    """A target that sends without waiting (``send``), acknowledging when waited for; a
    batch refused at its wait (``fail_on_call``) fails."""

    def __init__(self, fail_on_call: int | None = None) -> None:
        super().__init__(fail_on_call)
        self.outstanding = 0  # batches sent, not yet waited for
        self.threads: set[int] = set()
        self.prepared_early = 0  # batches prepared while the one before was outstanding

    def prepare(self, table: str, mutations: Sequence[RowMutation]
                ) -> Callable[[], Callable[[], AppliedCounts]]:
        self.prepared_early += self.outstanding
        return lambda: self.send(table, mutations)

    def send(self, table: str, mutations: Sequence[RowMutation]
             ) -> Callable[[], AppliedCounts]:
        assert self.outstanding == 0, "sent before the batch before it was acknowledged"
        self.threads.add(threading.get_ident())
        self.events.append(("send", mutations[0].position.offset))
        self.outstanding += 1

        def wait() -> AppliedCounts:
            self.outstanding -= 1
            return self.apply(table, mutations)
        return wait


@pytest.mark.parametrize("target_class", [Recorder, Sender])  # Sender: sent from the reading thread
@pytest.mark.parametrize("in_flight", [0, 1, 2, 5])
def test_batches_are_bounded_and_progress_follows_acknowledgement(
        tmp_path: Path, in_flight: int, target_class: type[Recorder]) -> None:
    wal = make_wal(tmp_path / "wal.1", entries_for("t", _calls(50, 4)))
    target = target_class()
    result = replay_file(wal, ReplaySpec(batch_cells=7, in_flight=in_flight), target,
                         on_progress=target.progress)
    assert all(size <= 7 + 4 for size in target.sizes)  # the limit plus at most one entry
    with WalReader(wal) as reader:
        entries = list(reader)
    for i, (kind, offset) in enumerate(target.events):
        if kind == "progress":  # every entry before the offset was applied before it
            applied = {o for k, o in target.events[:i] if k == "apply"}
            assert {e.offset for e in entries if e.offset < offset} <= applied
            assert offset in {e.offset + e.size for e in entries}
    assert result.progress.cells == {"Put": sum(len(c) for c in _calls(50, 4))}
    assert result.progress.calls == len(target.sizes)
    offsets = [o for k, o in target.events if k == "progress"]
    assert offsets == sorted(set(offsets)) and offsets[-1] == result.end_offset
    if isinstance(target, Sender) and in_flight:
        assert target.threads == {threading.get_ident()}  # no writer thread
        # with two in flight, each batch but the first is prepared while the one before
        # awaits its acknowledgement; with one, once it has it
        early = len(target.sizes) - 1 if in_flight > 1 else 0
        assert target.prepared_early == early and len(target.sizes) > 1


class Gate(Recorder):
    """A target whose calls wait until released, counting the batches handed to it."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Semaphore(0)

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        self.started.release()
        self.release.wait(30)
        return super().apply(table, mutations)


@pytest.mark.parametrize("in_flight", [1, 3])
def test_nothing_is_reported_while_the_first_batch_waits_for_the_target(
        tmp_path: Path, in_flight: int) -> None:
    wal = make_wal(tmp_path / "wal.g", entries_for("t", _calls(40, 1)))
    target = Gate()
    read: list[int] = []
    done = threading.Thread(target=replay_file, args=(wal, ReplaySpec(
        batch_cells=2, in_flight=in_flight), target), kwargs={"on_progress": read.append})
    done.start()
    assert target.started.acquire(timeout=30)  # the first batch is with the target
    time.sleep(0.5)  # the reader fills what it may meanwhile, then waits for the target
    assert read == [] and target.sizes == []
    target.release.set()
    done.join(30)
    assert not done.is_alive() and len(target.sizes) == 20 and len(read) == 20


@pytest.mark.parametrize("target_class", [Recorder, Sender])
def test_in_flight_batches_after_a_refused_one_are_neither_applied_nor_reported(
        tmp_path: Path, target_class: type[Recorder]) -> None:
    wal = make_wal(tmp_path / "wal.5", entries_for("t", _calls(40, 1)))
    target = target_class(fail_on_call=3)
    reported: list[FileProgress] = []
    with pytest.raises(ReplayWriteError):
        replay_file(wal, ReplaySpec(batch_cells=4, in_flight=3), target,
                    on_progress=reported.append)
    assert [p.entries for p in reported] == [4, 8, 12]
    assert len(target.sizes) == 3
    assert [k for k, _ in target.events].count("send") in (0, 4)  # the refused one last


def test_progress_advances_over_skipped_entries(tmp_path: Path) -> None:
    wal = make_wal(tmp_path / "wal.2", entries_for("other", _calls(30, 1)))
    target = Recorder()
    reported: list[FileProgress] = []
    result = replay_file(wal, ReplaySpec(ReplayFilter.build(["t"]), batch_cells=10), target,
                         on_progress=reported.append)
    assert target.sizes == []
    assert [p.entries for p in reported] == [10, 20, 30]
    assert result.progress.entries_skipped == {"table not mapped": 30}


def test_a_refused_batch_reports_nothing_after_the_last_acknowledged_one(
        tmp_path: Path) -> None:
    wal = make_wal(tmp_path / "wal.3", entries_for("t", _calls(20, 1)))
    target = Recorder(fail_on_call=2)
    reported: list[FileProgress] = []
    with pytest.raises(ReplayWriteError):
        replay_file(wal, ReplaySpec(batch_cells=5), target, on_progress=reported.append)
    assert [p.entries for p in reported] == [5, 10]


def test_an_empty_wal_reports_its_edit_start(tmp_path: Path) -> None:
    wal = make_wal(tmp_path / "wal.4", [], trailer=False)
    reported: list[FileProgress] = []
    result = replay_file(wal, ReplaySpec(), Recorder(), on_progress=reported.append)
    assert result.end_reason == "eof" and not result.complete
    assert reported == [result.progress] and result.progress.entries == 0
    assert result.progress.next_index == 0

