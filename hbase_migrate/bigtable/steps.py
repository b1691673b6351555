"""The lifecycle to Bigtable: ``prepare`` (the pre-flight check, then the tables),
``snapshot`` (the scan copy at a watermark), ``replay`` (the source's WAL edits from a time
on) and ``validate`` (range digests on both sides). Each takes a
:class:`~.settings.BigtableMigration` and returns a JSON-safe result.

The source is read with the project's own client and WAL reader; Bigtable is written and
read through :class:`~.client.BigtableClient`, which speaks the same client protocol, so the
copy, the replay (:func:`~hbase_migrate.replay.file_replay.replay_file`) and the digests
(:func:`~hbase_migrate.ranges.stats.range_stats`) are the ones an HBase target gets.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.migrations_book import OpenStep
from hbase_migrate.bigtable.client import BigtableClient
from hbase_migrate.bigtable.preflight import Report, check_rows, check_wal_cells
from hbase_migrate.bigtable.schema import table_id
from hbase_migrate.bigtable.settings import BigtableMigration
from hbase_migrate.bigtable.writer import MAX_MUTATIONS
from hbase_migrate.cluster.client import Client
from hbase_migrate.hbase.connect import open_client
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import range_stats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.discovery import open_wal_store
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.snapshot.schema import copy_schema, split_points
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.wal.model import METAFAMILY, Cell
from hbase_migrate.wal.reader import WalReader

SAMPLE_ROWS = 1000  # rows read from the start of each source region by the check
COPY_BATCH = 5000  # cells of the copy per MutateRows request


@contextmanager
def recorded(migration: BigtableMigration, kind: str) -> Iterator[OpenStep]:
    """Run a block as the ledger step ``bigtable <kind>`` of the migration (created when
    new): the block's result goes into the step's metrics; an exception fails the step
    with its text and propagates."""
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.ensure_migration(migration.name, migration.source.identity,
                                         migration.target.identity, migration.tables)
        with ledger.step(record.id, f"bigtable {kind}") as step:
            yield step


@contextmanager
def clients(migration: BigtableMigration) -> Iterator[tuple[Client, BigtableClient]]:
    """The source's client and Bigtable's, closed on exit."""
    with open_client(migration.source) as source, BigtableClient(migration.target) as target:
        yield source, target


def _wal_paths(migration: BigtableMigration) -> list[str]:
    store = open_wal_store(migration.source)
    files = sorted(store.list_wal_files(), key=lambda f: (f.timestamp or 0, f.name))
    return [store.to_path(f.relpath) for f in files]


def _moved(migration: BigtableMigration, path: str) -> str | None:
    """Where the WAL file at ``path`` is now (HBase moved it to ``-splitting`` or
    ``oldWALs/``: its name stays), or None when it is gone."""
    store = open_wal_store(migration.source)
    name = path.rstrip("/").rsplit("/", 1)[-1]
    found = [f for f in store.list_wal_files() if f.name == name]
    return store.to_path(found[0].relpath) if found else None


def preflight(migration: BigtableMigration, source: Client,
              sample_rows: int = SAMPLE_ROWS) -> Report:
    """Check a sample of each table's rows (the first ``sample_rows`` of each region) and
    every cell of the source's WAL files against Bigtable's limits."""
    report = Report(frozenset(migration.target.accept))
    for table in migration.tables:
        for region in source.regions(table.source):
            rows = source.scan(table.source, region.start_key, region.end_key)
            check_rows(report, table.source, _first(rows, sample_rows))
    mapped = migration.table_mapping()
    for path in _wal_paths(migration):
        with WalReader(path) as reader:
            for entry in reader:
                name = entry.key.table_name.decode("utf-8", "replace")
                cells = [c for c in entry.cells if c.family != METAFAMILY]
                if name in mapped and cells:
                    check_wal_cells(report, name, cells, MAX_MUTATIONS)
    return report


def _first(rows: Iterator[list[Any]], limit: int) -> Iterator[list[Any]]:
    seen = 0
    last = None
    for piece in rows:
        if piece and piece[0].row != last:
            seen += 1
            last = piece[0].row
            if seen > limit:
                return
        yield piece


def prepare(migration: BigtableMigration, sample_rows: int = SAMPLE_ROWS) -> dict[str, Any]:
    """The pre-flight check, refusing (:class:`~.errors.BigtablePreflightError`) before any
    write unless every finding is accepted; then a Bigtable table per source table, with
    its families' GC rules and the source's split points."""
    with recorded(migration, "prepare") as step, clients(migration) as (source, target):
        report = preflight(migration, source, sample_rows)
        step.metrics["preflight"] = report.to_json()
        report.raise_refused()
        tables = []
        for table in migration.tables:
            existed = target.table_exists(table.target)
            desc = copy_schema(source, target, table.source, table.target)
            tables.append({"source": table.source, "target": table_id(table.target),
                           "created": not existed,
                           "families": sorted(f.name.decode() for f in desc.families),
                           "split_points": len(split_points(source, table.source))})
        step.metrics.update(tables=tables, known_losses=sorted(
            n for n in report.found if n in report.accepted))
        return step.metrics


def snapshot(migration: BigtableMigration, t0: int | None = None) -> dict[str, Any]:
    """Copy every cell version before the watermark ``t0`` (now by default), region range
    by region range, with its timestamp."""
    t0 = int(time.time() * 1000) if t0 is None else t0
    cells = 0
    with recorded(migration, "snapshot") as step, clients(migration) as (source, target):
        for table in migration.tables:
            for region in source.regions(table.source):
                batch: list[Cell] = []
                for piece in source.scan(table.source, region.start_key, region.end_key,
                                         time_range=(0, t0)):
                    batch.extend(piece)
                    if len(batch) >= COPY_BATCH:
                        target.write_cells(table.target, batch)
                        cells, batch = cells + len(batch), []
                target.write_cells(table.target, batch)
                cells += len(batch)
        step.metrics.update(t0=t0, cells=cells, known_losses=dict(target.losses))
        return step.metrics


def replay(migration: BigtableMigration, since: int) -> dict[str, Any]:
    """Replay every WAL edit written at ``since`` or later (the watermark less a margin),
    file by file in order of creation, each file's entries in order; the delete markers met
    mask older puts for the whole run (:mod:`.masking`)."""
    mapping = [f"{s}={t}" for s, t in migration.table_mapping().items()]
    spec = ReplaySpec(ReplayFilter.build(mapping, start_time=since), in_flight=0)
    cells: dict[str, int] = {}
    files = 0
    with recorded(migration, "replay") as step, clients(migration) as (_, target):
        applier = ClientTarget(target, cluster=migration.target.where, owned=False)
        vanished = []
        for listed in _wal_paths(migration):
            try:
                result = replay_file(listed, spec, applier)
            except FileNotFoundError:  # moved since the listing: read it where it is now
                moved = _moved(migration, listed)
                if moved is None or moved == listed:
                    vanished.append(listed)
                    continue
                result = replay_file(moved, spec, applier)
            files += 1
            for kind, n in result.progress.cells.items():
                cells[kind] = cells.get(kind, 0) + n
        step.metrics.update(files=files, cells=cells, known_losses=dict(target.losses),
                            masked_puts=sum(target.memory.masked.values()),
                            vanished=vanished)
        if vanished:  # edits the target may lack: re-copy, as for any WAL gap
            step.fail(f"{len(vanished)} WAL files vanished before they were read (first: "
                      f"{vanished[0]}): run snapshot again for the tables they held")
        return step.metrics


def validate(migration: BigtableMigration) -> dict[str, Any]:
    """Rows, cells and the digest of every source region's range on both sides, Bigtable
    read as HBase would read it (its families' versions and age applied); Great
    Expectations judges the comparison table (:mod:`hbase_migrate.validate.verdict`), its
    result and Data Docs kept in the migration's artifacts."""
    pairs, planned = [], []
    with GxProcess() as gx, recorded(migration, "validate") as step, \
            clients(migration) as (source, target):
        for table in migration.tables:
            for region in source.regions(table.source):
                key_range = KeyRange(table.source, region.start_key, region.end_key)
                planned.append(key_range)
                pairs.append(RangePair(range_stats(source, key_range),
                                       range_stats(target, key_range, table.target)))
        label = f"bigtable-{int(time.time() * 1000)}"
        verdict = gx.judge(pairs, planned, migration.artifact_dir, label)
        differing = [str(p.range) for p in pairs if p.range.id in verdict.mismatched]
        differing += verdict.missing
        step.metrics.update(verdict="match" if verdict.success else "mismatch",
                            ranges=len(pairs), differing=differing, gx=verdict.to_json(),
                            details=[{"source": p.source.to_json(),
                                      "target": p.target.to_json()} for p in pairs])
        if not verdict.success:
            step.fail(f"{len(differing)} ranges differ: {', '.join(differing[:5])}")
        return step.metrics
