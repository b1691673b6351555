"""The frozen spec of one replay job, the per-file unit of work and its outcome.

A :class:`ReplayJob` is built from a loaded :class:`~hbase_migrate.config.MigrationSpec` and
the command line. Two modes:

* **catch-up** (no ``end``): every edit with ``write_time >= start`` (by default the
  migration's watermark less the margin). The ledger's per-file offsets make it incremental:
  each run continues where the last acknowledged offset left off.
* **window** (``end`` given; ``backfill``): the edits with ``start <= write_time < end`` are
  replayed again from the start of every selected file, whatever the ledger says; the ledger
  records the files seen and the run as a step, never per-file offsets (a window replay does
  not advance catch-up).

:class:`FileTask` and :class:`FileOutcome` are plain picklable values, so the same per-file
code runs in this process or in a Spark task.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.audit.records import Provenance
from hbase_migrate.config import ClusterSpec, MigrationSpec, TableSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.file_replay import DEFAULT_BATCH_CELLS, ReplaySpec
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.touched import Touched
from hbase_migrate.timeutil import check_seconds, check_window, format_time

CATCH_UP = "catch-up"
WINDOW = "window"
# Per-file progress in the ledger (``wal_files.cluster``) is kept per stream: replay into
# the target is ``source``; another consumer of the same WAL files (the CDC stream) keeps
# its own offsets, files, gaps and lock, so the two never mix.
REPLAY_STREAM = "source"
DEFAULT_LOCK_TIMEOUT = 30.0


@dataclass(frozen=True)
class ReplayJob:
    """One replay job: which migration and tables, the window, and how to run it."""

    spec: MigrationSpec
    tables: tuple[TableSpec, ...]
    start: int | None = None  # None: the migration's watermark less the margin
    end: int | None = None  # None: catch-up (open-ended)
    force_thrift1: bool = False
    dry_run: bool = False
    batch_cells: int = DEFAULT_BATCH_CELLS
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    step_kind: str = "replay"
    provenance: Provenance = field(default_factory=Provenance)
    stream: str = REPLAY_STREAM  # the ledger's key of this job's per-file progress
    chains: tuple[str, ...] | None = None  # a part of the run: these chains only (parts.py)

    def __post_init__(self) -> None:
        check_window(self.start, self.end)
        if not self.tables:
            raise ConfigError(f"migration {self.spec.name!r}: no table to replay")
        check_seconds(self.lock_timeout, name=f"migration {self.spec.name!r}: lock timeout")

    @classmethod
    def from_spec(cls, spec: MigrationSpec, *, tables: Sequence[str] = (),
                  start: int | None = None, end: int | None = None, **options: Any
                  ) -> ReplayJob:
        """The job for ``spec``; ``tables`` (source or target names) narrows the configured
        tables. A ``start`` in the future is refused here, before any caller records
        anything: no WAL edit can have been written then yet."""
        now = time.time_ns() // 1_000_000
        if start is not None and start > now:
            raise ConfigError(f"migration {spec.name!r}: start {format_time(start)} is in the "
                              f"future (now {format_time(now)}); no WAL edit has been written "
                              "then yet")
        return cls(spec, spec.select_tables(tables), start, end, **options)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def ledger_url(self) -> str:
        return self.spec.ledger_url

    @property
    def source(self) -> ClusterSpec:
        return self.spec.source

    @property
    def target(self) -> ClusterSpec:
        return self.spec.target

    @property
    def lock_name(self) -> str:
        """The lock this job's runs hold: the migration's, or its stream's own."""
        return self.name if self.stream == REPLAY_STREAM else f"{self.name}@{self.stream}"

    @property
    def mode(self) -> str:
        return CATCH_UP if self.end is None else WINDOW

    def replay_spec(self, start: int) -> ReplaySpec:
        """The per-file spec: table mapping, families and the write-time window."""
        flt = ReplayFilter.build([f"{t.source}={t.target}" for t in self.tables],
                                 {t.source: t.families for t in self.tables if t.families},
                                 start_time=start, end_time=self.end)
        # a batch of about four put calls: multi-MB cells make small batches
        return ReplaySpec(flt, self.batch_cells, self.spec.replay.batches_in_flight,
                          batch_bytes=4 * self.spec.target.gateway.max_put_bytes)


@dataclass(frozen=True)
class Totals:
    """Counters of one file, cumulative from its first byte (as the ledger keeps them)."""

    entries: int = 0
    cells: Mapping[str, int] = field(default_factory=dict)
    markers: Mapping[str, int] = field(default_factory=dict)
    approximated: int = 0
    last_write_time: int | None = None
    calls: int = 0  # a run's share only: write calls its sink acknowledged (CDC: messages)


@dataclass(frozen=True)
class FileTask:
    """One WAL file to replay from ``start_offset`` (``totals`` describe what lies before).
    ``part``: the chains whose files are replayed in one sequence with this one (its own,
    and those a region move ties to it), as the plan's order found them
    (:mod:`hbase_migrate.replay.ordering`); empty before that."""

    path: str
    server: str
    name_time: int | None
    size: int | None
    state: str | None
    start_offset: int = 0
    totals: Totals = field(default_factory=Totals)
    part: tuple[str, ...] = ()

    @property
    def start_index(self) -> int | None:
        """Index of the entry at ``start_offset``: the entries already counted."""
        return self.totals.entries if self.start_offset else None


@dataclass(frozen=True)
class BulkLoad:
    """A BULK_LOAD marker met: the region's key range must be re-copied from the source."""

    table: str
    region: str
    families: tuple[str, ...]
    write_time: int
    file: str
    offset: int
    start_key: str  # the region's start key, hex (HBase's Thrift2 tells no region ids)


@dataclass(frozen=True)
class FileOutcome:
    """How one file's replay ended. ``path`` is where it was read last (it may have moved
    from ``moved_from``); ``totals`` hold acknowledged progress only; ``error`` is set when
    the file failed (naming file and byte offset)."""

    path: str
    server: str
    start_offset: int
    offset: int
    complete: bool
    totals: Totals
    end_reason: str = ""
    run: Totals = field(default_factory=Totals)  # this run's share of ``totals``
    moved_from: str | None = None
    bulk_loads: tuple[BulkLoad, ...] = ()
    tags_dropped: int = 0
    error: str | None = None
    empty: bool = False
    vanished: bool = False  # the file was gone when it was to be read (``error`` says so)
    # a failure of the write or the read, not of the file's contents (not corrupt, not gone):
    # the next run tries again from ``offset``, so the files after it in its part wait
    retry: bool = False
    touched: Touched = field(default_factory=dict)  # rows written, by target table

    @property
    def bytes_read(self) -> int:
        return max(0, self.offset - self.start_offset)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "server": self.server, "start_offset": self.start_offset,
                "offset": self.offset, "complete": self.complete, "end_reason": self.end_reason,
                "entries": self.totals.entries, "cells": dict(self.totals.cells),
                "markers": dict(self.totals.markers), "approximated": self.totals.approximated,
                "moved_from": self.moved_from, "error": self.error, "vanished": self.vanished,
                "bulk_loads": [vars(b) for b in self.bulk_loads]}
