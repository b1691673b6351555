"""A run's files replayed one after the other in this process (:func:`replay_here`),
through the write path or into windows bulk-loaded into the target, each file's
acknowledged progress handed to the run's bookkeeping (:mod:`run_books`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace

from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.replay.apply import ReplayTarget
from hbase_migrate.replay.bulkrun import Books, BulkReplay, PathChoice, path_metrics
from hbase_migrate.replay.file_replay import ReplaySpec
from hbase_migrate.replay.job import FileOutcome, FileTask, ReplayJob
from hbase_migrate.replay.parts import HeldBack
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.replay.worker import replay_task

log = logging.getLogger(__name__)


def replay_here(job: ReplayJob, store: WalStore, tasks: Sequence[FileTask], books: Books,
                start: int, opened: Callable[[], ReplayTarget],
                stop: threading.Event | None = None, *, bulk: PathChoice | None = None,
                summary: RunSummary | None = None) -> list[FileOutcome]:
    """The files replayed here in order; with ``bulk``, into windows bulk-loaded into the
    target (:mod:`hbase_migrate.replay.bulkrun`), their progress recorded once loaded."""
    if not tasks:
        return []
    spec = job.replay_spec(start)
    target = opened()
    loads: BulkReplay | None = None
    if bulk is not None:
        loads = BulkReplay(job, target, books, bulk)
        target, books = loads.sink, loads.books
        spec = replace(spec, in_flight=0)  # gathered in memory: nothing to overlap
    outcomes: list[FileOutcome] = []
    held = HeldBack()
    try:
        _replay_files(store, tasks, books, spec, target, held, outcomes, stop, loads)
    finally:
        if loads is None:
            target.close()
        else:
            if summary is not None:
                summary.replay_path = path_metrics(loads.choice, loads)
            loads.close()  # its sink's target too
    return outcomes


def _replay_files(store: WalStore, tasks: Sequence[FileTask], books: Books,
                  spec: ReplaySpec, target: ReplayTarget, held: HeldBack,
                  outcomes: list[FileOutcome], stop: threading.Event | None,
                  loads: BulkReplay | None) -> None:
    """Each task in turn into ``outcomes``; with ``loads``, a window loaded once full and
    the last one at the end (the files' progress recorded as each load is acknowledged)."""
    for task in tasks:
        if stop is not None and stop.is_set():
            break  # a stopped follow: the files left are the next run's
        if books.handled(task):
            continue
        if held.holds(task):
            log.info("%s waits for the next run: a file before it in its part failed",
                     task.path)
            continue
        books.begin(task)
        try:
            outcome = replay_task(task, spec, target, store=store,
                                  on_progress=books.progress_hook(task))
        except BaseException:
            _settle_quietly(books)  # the run stops: what the target acknowledged stays
            raise
        held.note(task, outcome)
        outcomes.append(books.finish(task, outcome))
        if loads is not None:
            loads.after_file()
    if loads is not None:
        loads.load()


def _settle_quietly(books: Books) -> None:
    """:meth:`RunBooks.settle <hbase_migrate.replay.run_books.RunBooks.settle>` while an
    error is raised (the ledger may be the outage): what cannot be recorded now is replayed
    again by the next run."""
    try:
        books.settle()
    except Exception as exc:
        log.warning("acknowledged progress not recorded (the next run replays it again): "
                    "%s", str(exc).splitlines()[0] if str(exc) else repr(exc))

