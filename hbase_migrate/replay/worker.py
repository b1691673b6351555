"""Replay one WAL file (a :class:`FileTask`) into an open target: the unit of work that runs
in this process or in a Spark task.

It continues at the task's offset; when a live file's open fails because it moved (to its
dead server's ``-splitting`` folder or to ``oldWALs/``) meanwhile, it continues at the same
offset there (DESIGN 4.2); a file found nowhere vanished (a gap, not a failure). Progress is
reported (``on_progress``) only as the target acknowledges it, with counters cumulative from
the file's first byte. A bad file or a refused write does not raise: the outcome carries the
error (file and byte offset) and the progress acknowledged before it. A target that stays
unreachable does raise (``TargetUnavailableError``), as does a source storage that does not
answer: the run stops, offsets kept, and a follow waits the outage out (:mod:`outage`); so
does a bulk window whose local folder fails (no room for its next spilled run, removed
under it: ``SpillError``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.cluster.storage.walstore import WalStore
from hbase_migrate.errors import (
    HBaseMigrateError,
    Kind,
    WalCorruptError,
    WalEmptyError,
    WalSourceError,
)
from hbase_migrate.replay.apply import ReplayTarget
from hbase_migrate.replay.errors import SpillError
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec, replay_file
from hbase_migrate.replay.job import BulkLoad, FileOutcome, FileTask, Totals
from hbase_migrate.replay.touched import TouchedRows

log = logging.getLogger(__name__)

CLOSED_STATES = ("archived", "splitting")
ProgressHook = Callable[[str, FileProgress, Totals], None]


def _add(base: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    total = Counter(base)
    total.update(more)
    return dict(total)


def totals_after(task: FileTask, progress: FileProgress) -> Totals:
    """The file's counters up to ``progress.offset``: what came before plus this run's."""
    base = task.totals
    return Totals(base.entries + progress.entries, _add(base.cells, progress.cells),
                  _add(base.markers, progress.markers),
                  base.approximated + sum(progress.approximations.values()),
                  progress.last_write_time if progress.last_write_time is not None
                  else base.last_write_time)


def _run_totals(progress: FileProgress) -> Totals:
    return Totals(progress.entries, dict(progress.cells), dict(progress.markers),
                  sum(progress.approximations.values()), progress.last_write_time,
                  progress.calls)


def _bulk_loads(progress: FileProgress) -> tuple[BulkLoad, ...]:
    return tuple(BulkLoad(b.table, b.encoded_region,
                          tuple(f.decode("utf-8", "backslashreplace") for f, _ in b.stores),
                          b.write_time, b.position.file, b.position.offset,
                          b.start_key.hex())
                 for b in progress.bulk_loads)


def replay_task(task: FileTask, spec: ReplaySpec, target: ReplayTarget, *,
                store: WalStore | None = None,
                on_progress: ProgressHook | None = None) -> FileOutcome:
    """Replay ``task`` and say how it ended (never raises for a bad file or write)."""
    path, moved_from = task.path, None
    acked: list[FileProgress] = []
    touched = TouchedRows()  # the rows written, for the validation of this round

    def report(progress: FileProgress) -> None:
        acked.append(progress)
        if on_progress is not None:
            on_progress(path, progress, totals_after(task, progress))

    def outcome(**values: Any) -> FileOutcome:
        last = acked[-1] if acked else None
        done = totals_after(task, last) if last else task.totals
        base = FileOutcome(path, task.server, task.start_offset,
                           last.offset if last else task.start_offset, False, done,
                           run=_run_totals(last) if last else Totals(),
                           moved_from=moved_from,
                           bulk_loads=_bulk_loads(last) if last else (),
                           tags_dropped=last.tags_dropped if last else 0,
                           touched=touched.frozen())
        return replace(base, **values)

    closed = task.state in CLOSED_STATES
    for attempt in range(2):
        try:
            result = replay_file(path, spec, target, start_offset=task.start_offset,
                                 start_index=task.start_index, on_progress=report,
                                 touched=touched)
        except FileNotFoundError as exc:
            archived = _archived(store, path) if attempt == 0 else None
            if archived is None:
                where = acked[-1].offset if acked else task.start_offset
                return outcome(vanished=True, error=f"{path}: WAL file vanished at byte "
                               f"offset {where} ({exc.strerror or exc})")
            log.info("%s moved to %s; continuing at offset %d", path, archived,
                     task.start_offset)
            moved_from, path, closed = path, archived, True  # splitting or archived: closed
            continue
        except WalEmptyError as exc:
            return outcome(empty=True, complete=closed, end_reason=str(exc))
        except WalCorruptError as exc:
            return outcome(error=str(exc))
        except (ServiceUnreachableError, SpillError):
            # a service is down, or the bulk window's local folder failed (full, removed):
            # not this file's fault, the run stops, acknowledged offsets kept
            raise
        except (HBaseMigrateError, OSError) as exc:
            if isinstance(exc, WalSourceError) and exc.kind is Kind.OUTAGE:
                raise  # the source's storage did not answer: the same
            where = acked[-1].offset if acked else task.start_offset
            return outcome(error=f"{path}: replay stopped at byte offset {where}: {exc}",
                           retry=True)
        # A closed file (archived, or a dead server's in -splitting) read to its end is
        # finished even without a trailer (a crashed writer's last file).
        return outcome(complete=result.complete or closed, end_reason=result.end_reason,
                       offset=result.end_offset)
    raise AssertionError("unreachable")


def _archived(store: WalStore | None, path: str) -> str | None:
    """Where a live file moved (its dead server's -splitting folder, or the archive)."""
    if store is None or "/WALs/" not in path:
        return None
    try:
        return store.moved_path(path)
    except ValueError:
        return None
