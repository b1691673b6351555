"""Bulk replay runs of the embedded pair as the replay tests drive them: a migration
copied at T0 with edits of every kind after it, its ``[replay] bulk_memory`` set past the
reader's checks, and bulk loads that the region servers refuse (after reading the files
they were given, for a test to compare)."""

from __future__ import annotations

from dataclasses import replace as changed
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.replay import bulkfiles, bulkrun, bulkspill, run
from hbase_migrate.replay.bulkload import BulkLoadError
from hbase_migrate.replay.bulkrun import BULK, PathChoice
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.wal.model import Cell
from tests.support.minicluster import (
    copy_table_schema,
    run_workload,
    set_watermark,
    write_migration,
)

TABLE = "orders"


def embedded_migration(tmp_path: Path, src: Any, dst: Any, bulk: str) -> Path:
    """A migration between the embedded clusters copied at T0 (its watermark), then edits
    of every kind in the source's WAL files; ``[replay] bulk`` as given."""
    config = write_migration(tmp_path, src, dst, TABLE)
    with config.open("a", encoding="utf-8") as f:
        f.write(f'bulk = "{bulk}"\nbulk_window = "1KiB"\n')
    set_watermark(config)
    run_workload(src, TABLE, seed=78, ops=200)
    copy_table_schema(src, dst, TABLE)
    return config


class RefusedLoad:
    """A bulk load whose region servers refuse every file (as they may: a file they cannot
    read, rounds run out); the files it was given are kept."""

    given: list[Path] = []

    def __init__(self, calls: Any, table: Any, staging: Any, **_: Any) -> None:
        self.table = table

    def run(self, files: list[tuple[bytes, Path]]) -> Any:
        RefusedLoad.given += [p for _, p in files]
        raise BulkLoadError(f"table {self.table.name}: {len(files)} file(s) not loaded "
                            "after 10 round(s): refused")


class ReadingLoad(RefusedLoad):
    """:class:`RefusedLoad` reading the cells of the files it was given first."""

    read: list[list[Cell]] = []

    def run(self, files: list[tuple[bytes, Path]]) -> Any:
        for _family, path in sorted(files):
            with HFileReader(path) as reader:
                ReadingLoad.read.append([stored.cell for stored in reader.cells()])
        return super().run(files)


def bulk_loads_read(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Runs take the bulk path, their loads read by :class:`ReadingLoad` (and refused);
    the list fills with the path of every run a window spills."""
    spilled: list[Path] = []

    def spill(path: Path, slots: Any) -> Any:
        spilled.append(path)
        return bulkspill.spill(path, slots)

    monkeypatch.setattr(bulkfiles, "spill", spill)
    monkeypatch.setattr(run, "choose_path", lambda job, planned: PathChoice(
        BULK, "asked by the test", 1))
    monkeypatch.setattr(bulkrun, "BulkLoad", ReadingLoad)
    return spilled


def with_memory(job: ReplayJob, memory: int) -> ReplayJob:
    """``job`` with ``[replay] bulk_memory`` set past the reader's checks."""
    spec = changed(job.spec, replay=changed(job.spec.replay, bulk_memory=memory))
    return changed(job, spec=spec)
