"""What a replay run and a ``--follow`` did (:class:`RunSummary`, :class:`FollowSummary`,
with the exit codes), and the hooks a progress display gets as they go (:class:`Observer`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.replay.coverage import Gap
from hbase_migrate.replay.job import FileOutcome, FileTask
from hbase_migrate.replay.outage import RiddenOutage
from hbase_migrate.replay.retention import Retention
from hbase_migrate.replay.touched import TouchedRows
from hbase_migrate.wal.selection import Manifest

EXIT_OK, EXIT_FAILURES, EXIT_GAPS = 0, 1, 3


class Observer:
    """Hooks for a progress display; every method does nothing by default."""

    def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
        """The run's selection is known."""

    def file_started(self, task: FileTask) -> None:
        """A file's replay starts at ``task.start_offset``."""

    def file_advanced(self, task: FileTask, offset: int) -> None:
        """The target acknowledged ``task``'s file up to ``offset``."""

    def file_finished(self, task: FileTask, outcome: FileOutcome) -> None:
        """A file's replay ended (``outcome.error`` when it failed)."""

    def waiting(self, outage: RiddenOutage, retry_in: float, lag: int | None) -> None:
        """A service does not answer: the run waits ``retry_in`` s before asking again
        (``lag``: the replay lag as the ledger has it, None when unknown)."""

    def resumed(self, outage: RiddenOutage) -> None:
        """The service answers again; the run goes on."""

    def follow_started(self, summary: FollowSummary) -> None:
        """A ``--follow`` started; ``summary`` grows as it runs (live figures)."""

    def follow_ended(self, summary: FollowSummary) -> None:
        """A ``--follow`` ended: stopped, or by the error in ``summary.error``."""


@dataclass
class RunSummary:
    """What one run did; :attr:`exit_code` is 3 with open gaps, 1 with failures, else 0."""

    migration: str
    mode: str
    start: int
    end: int | None
    dry_run: bool
    listed: int = 0
    manifest: Manifest | None = None
    outcomes: list[FileOutcome] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    open_gaps: int = 0

    retention: Retention | None = None
    lag: int | None = None  # a catch-up's replay lag (ms) as it ended (status.replay_lag)
    outages: list[dict[str, Any]] = field(default_factory=list)  # waited out before it ran
    limits: dict[str, Any] | None = None  # the replay limit in force as the run ended
    engine: dict[str, Any] | None = None  # where the files ran and why, when it was chosen
    # a Bigtable target: what its writes left out (``Cluster.recorded_losses``: the accepted
    # losses by name, the masked puts), as the step's metrics hold it
    bigtable: dict[str, Any] | None = None
    # how the run wrote the target (bulk load or write path), why, and what its loads did
    replay_path: dict[str, Any] | None = None

    @property
    def failures(self) -> list[FileOutcome]:
        """Files that failed (a file that vanished is a gap, not a failure)."""
        return [o for o in self.outcomes if o.error is not None and not o.vanished]

    @property
    def exit_code(self) -> int:
        if self.gaps or self.open_gaps:
            return EXIT_GAPS
        return EXIT_FAILURES if self.failures else EXIT_OK

    def cells(self) -> dict[str, int]:
        """Cells written in this run, by type."""
        total: Counter[str] = Counter()
        for outcome in self.outcomes:
            total.update(outcome.run.cells)
        return dict(total)

    def markers(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for outcome in self.outcomes:
            total.update(outcome.run.markers)
        return dict(total)

    def touched(self) -> dict[str, frozenset[bytes] | None]:
        """The rows this run wrote, by target table (None: more than could be listed)."""
        rows = TouchedRows()
        for outcome in self.outcomes:
            rows.merge(outcome.touched)
        return rows.frozen()

    def to_json(self) -> dict[str, Any]:
        """The stable shape of ``--json`` and of the ledger step's metrics."""
        return {
            "migration": self.migration, "mode": self.mode, "dry_run": self.dry_run,
            "window": {"start": self.start, "end": self.end}, "files_listed": self.listed,
            "files_selected": len(self.manifest.included) if self.manifest else 0,
            "files_read": len(self.outcomes),
            "files_completed": sum(o.complete for o in self.outcomes),
            "bytes": sum(o.bytes_read for o in self.outcomes),
            "entries": sum(o.run.entries for o in self.outcomes),
            "cells": self.cells(), "markers": self.markers(),
            "calls": sum(o.run.calls for o in self.outcomes),
            "approximated_deletes": sum(o.run.approximated for o in self.outcomes),
            "bulk_loads": [vars(b) for o in self.outcomes for b in o.bulk_loads],
            "moves": [{"from": a, "to": b} for a, b in self.moves],
            "gaps": [vars(g) for g in self.gaps], "open_gaps": self.open_gaps,
            "retention": self.retention.to_json() if self.retention else None,
            "failures": [{"path": o.path, "error": o.error} for o in self.failures],
            "files": [o.to_json() for o in self.outcomes],
            "manifest": self.manifest.to_dict() if self.manifest else None,
            "lag": self.lag, "outages": self.outages, "limits": self.limits,
            "engine": self.engine, "replay_path": self.replay_path,
            "exit_code": self.exit_code,
            **({"bigtable": self.bigtable} if self.bigtable is not None else {}),
        }

    def to_metrics(self) -> dict[str, Any]:
        """The ledger step's metrics: :meth:`to_json` without its per-file lists (each file's
        facts live once, in its WAL-file row), so a step stays small whatever the number of
        files and a long ``--follow`` grows the ledger linearly. A window run (a backfill)
        writes no WAL-file rows: its manifest is kept as its record of the selection."""
        data = self.to_json()
        del data["files"]
        if self.end is None:
            del data["manifest"]
        data["moves"], data["failures"] = len(self.moves), len(self.failures)
        return data


@dataclass
class FollowSummary:
    """What a whole ``--follow`` did: its runs added up, and the outages it rode out."""

    migration: str
    stream: str
    started: int
    ended: int | None = None
    runs: int = 0
    files_read: int = 0
    files_completed: int = 0
    bytes: int = 0
    entries: int = 0
    cells: Counter[str] = field(default_factory=Counter)
    outages: list[RiddenOutage] = field(default_factory=list)
    exit_code: int = EXIT_OK
    error: str | None = None  # what ended it, when not a stop
    lag: int | None = None  # as the newest run ended

    def add(self, summary: RunSummary) -> None:
        self.runs += 1
        self.files_read += len(summary.outcomes)
        self.files_completed += sum(o.complete for o in summary.outcomes)
        self.bytes += sum(o.bytes_read for o in summary.outcomes)
        self.entries += sum(o.run.entries for o in summary.outcomes)
        self.cells.update(summary.cells())
        self.exit_code = max(self.exit_code, summary.exit_code)
        self.lag = summary.lag

    def to_json(self) -> dict[str, Any]:
        return {"migration": self.migration, "stream": self.stream, "started": self.started,
                "ended": self.ended, "runs": self.runs, "files_read": self.files_read,
                "files_completed": self.files_completed, "bytes": self.bytes,
                "entries": self.entries, "cells": dict(self.cells),
                "outages": [o.to_json() for o in self.outages], "lag": self.lag,
                "exit_code": self.exit_code, "error": self.error}
