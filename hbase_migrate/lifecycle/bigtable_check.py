"""The pre-flight check of a migration to Bigtable, run by ``prepare`` before any write:
a sample of each source table's rows (the first of each region) and every cell of the
source's WAL files, against Bigtable's limits (:mod:`hbase_migrate.bigtable.preflight`)."""

from __future__ import annotations

from collections.abc import Iterator

from hbase_migrate.cluster.client import Client
from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase.bigtable_target import MAX_MUTATIONS, Report, check_rows, check_wal_cells
from hbase_migrate.replay.discovery import open_wal_store
from hbase_migrate.wal.model import METAFAMILY, Cell
from hbase_migrate.wal.reader import WalReader

SAMPLE_ROWS = 1000  # rows read from the start of each source region


def preflight(spec: MigrationSpec, source: Client, sample_rows: int = SAMPLE_ROWS) -> Report:
    """What Bigtable cannot take among the sampled rows and the WAL files' cells; the
    findings ``[target] accept`` names are accepted."""
    assert spec.target.bigtable is not None
    report = Report(frozenset(spec.target.bigtable.accept))
    for table in spec.tables:
        for region in source.regions(table.source):
            rows = source.scan(table.source, region.start_key, region.end_key)
            # named by the target table, as the writes name what they meet
            check_rows(report, table.target, _first(rows, sample_rows))
    mapped = spec.table_mapping()
    store = open_wal_store(spec.source)
    for found in store.list_wal_files():
        try:
            with WalReader(store.to_path(found.relpath)) as reader:
                for entry in reader:
                    name = entry.key.table_name.decode("utf-8", "replace")
                    cells = [c for c in entry.cells if c.family != METAFAMILY]
                    if name in mapped and cells:
                        check_wal_cells(report, mapped[name], cells, MAX_MUTATIONS)
        except FileNotFoundError:  # moved since the listing (archived, or being split):
            continue  # the writes guard the same limits (BigtableClient)
    return report


def _first(rows: Iterator[list[Cell]], limit: int) -> Iterator[list[Cell]]:
    """The pieces of the first ``limit`` rows of a scan."""
    seen = 0
    last = None
    for piece in rows:
        if piece and piece[0].row != last:
            seen += 1
            last = piece[0].row
            if seen > limit:
                return
        yield piece
