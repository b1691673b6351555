"""A Bigtable instance behind the project's client protocol
(:class:`hbase_migrate.cluster.client.Client`): the steps' calls on HBase table names
(mapped by :func:`.schema.table_id`), cells in HBase's terms (timestamps in ms).

Reads return what HBase would: each family's versions and age limits applied to what
Bigtable returns (its garbage collection runs when it likes, so cells past the limits may
still be stored), every cell a ``Put``. Writes go through :mod:`.writer`. Bigtable has no
regions: :meth:`regions` gives one covering the table; the split points of a created table
are the source's.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from hbase_migrate.bigtable.errors import (
    BigtableError,
    BigtablePreflightError,
    BigtableUnreachableError,
)
from hbase_migrate.bigtable.losses import shared
from hbase_migrate.bigtable.preflight import TAG_DETAILS, cell_findings
from hbase_migrate.bigtable.schema import Retention, family_id, table_id
from hbase_migrate.bigtable.writer import MS, MutationBatcher
from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.descriptors import (
    ALL_VERSIONS,
    Columns,
    RegionDescriptor,
    TableDescriptor,
    TimeRange,
)
from hbase_migrate.cluster.scanning import grouped
from hbase_migrate.cluster.waves import RowCells
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.wal.model import Cell, CellType, cell_order

# Google's clients warn on each connection to an emulator (made lazily, call by call):
# emulator_host says so already.
warnings.filterwarnings("ignore", "Connecting to Bigtable emulator", RuntimeWarning)
EMULATOR_VARIABLE = "BIGTABLE_EMULATOR_HOST"
_CREATING = threading.Lock()


@contextmanager
def _emulator_seen(host: str | None) -> Iterator[None]:
    """Google's clients take the emulator from ``BIGTABLE_EMULATOR_HOST`` when they are
    created, and keep it: the variable is ``host`` (or absent) for their creation only, under
    a lock, so that neither another client of this process (a real instance beside an
    emulator) nor a child process sees it. The classic client makes the data client of its
    tables on first use: it is made within too."""
    with _CREATING:
        before = os.environ.pop(EMULATOR_VARIABLE, None)
        if host:
            os.environ[EMULATOR_VARIABLE] = host
        try:
            yield
        finally:
            os.environ.pop(EMULATOR_VARIABLE, None)
            if before is not None:
                os.environ[EMULATOR_VARIABLE] = before


class BigtableClient(AbstractContextManager["BigtableClient"]):
    """A client of one Bigtable instance (not shared across threads). ``memory`` holds
    the delete markers the writes of this process met (:mod:`.masking`), ``losses`` the
    accepted findings they met, by name; both shared by the instance's clients (:mod:`.losses`)."""

    max_put_bytes = 64 << 20

    def __init__(self, settings: BigtableSettings) -> None:
        from google.cloud import bigtable
        from google.cloud.bigtable.data import BigtableDataClient

        self.settings = settings
        self.endpoint = settings.where
        self.memory, self.losses = shared(settings)
        self.accepted = frozenset(settings.accept)
        with _emulator_seen(settings.emulator_host):
            self._admin = bigtable.Client(project=settings.project, admin=True)
            self._admin._veneer_data_client  # noqa: B018 (its tables' data client, made now)
            self._data = BigtableDataClient(project=settings.project)
        self._instance = self._admin.instance(settings.instance)
        self._tables: dict[str, Any] = {}
        self._retention: dict[str, dict[bytes, Retention]] = {}

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        for table in self._tables.values():
            table.close()
        self._data.close()
        self._admin._veneer_data_client.close()

    def _call(self, what: str, func: Any, *args: Any, **kwargs: Any) -> Any:
        from google.api_core import exceptions as gexc

        try:
            return func(*args, **kwargs)
        except (gexc.ServiceUnavailable, gexc.DeadlineExceeded, gexc.RetryError) as exc:
            raise BigtableUnreachableError(f"{self.endpoint}: {what}: unreachable: {exc}",
                                           endpoint=self.endpoint) from exc
        except gexc.GoogleAPICallError as exc:
            raise BigtableError(f"{self.endpoint}: {what}: {exc.message}",
                                endpoint=self.endpoint) from exc

    def probe(self, attempts: int = 1) -> None:
        self._call("listing tables", self._instance.list_tables)

    def _table(self, table: str) -> Any:
        found = self._tables.get(table)
        if found is None:
            found = self._tables[table] = self._data.get_table(
                self.settings.instance, table_id(table), app_profile_id=self.settings.app_profile)
        return found

    # --- data -------------------------------------------------------------------------

    def retention(self, table: str) -> dict[bytes, Retention]:
        """Each family's limits, from its GC rule."""
        found = self._retention.get(table)
        if found is None:
            families = self._call(f"table {table}: reading its families",
                                  self._instance.table(table_id(table)).list_column_families)
            found = self._retention[table] = {
                name.encode(): Retention.from_gc_rule(f.gc_rule) for name, f in families.items()}
        return found

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", *,
             columns: Columns | None = None, time_range: TimeRange | None = None,
             max_versions: int = ALL_VERSIONS, raw: bool = False) -> Iterator[list[Cell]]:
        from google.cloud.bigtable.data import ReadRowsQuery, RowRange

        query = ReadRowsQuery(row_ranges=[RowRange(start_key=start or None,
                                                   end_key=stop or None)])
        rows = self._call(f"table {table}: reading [{short_binary(start)}, "
                          f"{short_binary(stop)})", self._table(table).read_rows, query)
        retention, now = self.retention(table), int(time.time() * 1000)
        for row in rows:
            cells = visible(row, retention, now, time_range, max_versions)
            if columns is not None:
                cells = [c for c in cells if _wanted(c, columns)]
            if cells:
                yield cells

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"", *,
                     columns: Columns | None = None, time_range: TimeRange | None = None,
                     max_versions: int = ALL_VERSIONS, raw: bool = False
                     ) -> Iterator[list[list[Cell]]]:
        return grouped(self.scan(table, start, stop, columns=columns, time_range=time_range,
                                 max_versions=max_versions, raw=raw))

    def get(self, table: str, row: bytes, columns: Columns | None = None,
            time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS
            ) -> list[Cell]:
        for cells in self.scan(table, row, row + b"\x00", columns=columns,
                               time_range=time_range, max_versions=max_versions):
            return cells
        return []

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        return [self.get(table, row) for row in rows]

    def put_cells(self, table: str, cells: Sequence[Cell]) -> None:
        self.write_cells(table, [c for c in cells if c.type == CellType.PUT])

    def write_cells(self, table: str, cells: Sequence[Cell]) -> int:
        """Write cells of every type in order (:mod:`.writer`); the requests made."""
        return self._batcher(table).add(c for c in cells if self._takes(table, c))

    def write_rows(self, table: str, batch: Sequence[RowCells]) -> int:
        """Write a batch of row mutations in order (:mod:`.writer`: its requests hold each
        row once); the requests made."""
        return self._batcher(table).add(
            c for mutation in batch for c in mutation.cells if self._takes(table, c))

    def _batcher(self, table: str) -> MutationBatcher:
        return MutationBatcher(table, lambda entries: self._send(table, entries),
                               lambda row, family: self._family(table, row, family),
                               self.memory)

    def _takes(self, table: str, cell: Cell) -> bool:
        """Whether ``cell`` is written: a limit it breaks must be accepted by name (then
        the loss is counted; a cell with tags is written without them)."""
        family_id(table, cell.family)
        write = True
        for finding in cell_findings(table, cell):
            if finding.name not in self.accepted:
                raise BigtablePreflightError(finding.refusal(
                    self.accepted, "the write holding it was stopped"))
            self.losses[finding.name] += 1
            write = write and finding.kind in TAG_DETAILS
        return write

    def _send(self, table: str, entries: list[tuple[bytes, list[Any]]]) -> None:
        from google.cloud.bigtable.data import RowMutationEntry
        from google.cloud.bigtable.data.exceptions import MutationsExceptionGroup

        batch = [RowMutationEntry(row, mutations) for row, mutations in entries]
        try:
            self._call(f"table {table}: writing {len(batch)} rows",
                       self._table(table).bulk_mutate_rows, batch)
        except MutationsExceptionGroup as exc:
            failed = exc.exceptions[0]
            row = getattr(getattr(failed, "entry", None), "row_key", b"?")
            raise BigtableError(f"{self.endpoint}: table {table}: row "
                                f"{short_binary(row)}: write refused: {failed}",
                                endpoint=self.endpoint) from exc

    def _family(self, table: str, row: bytes, family: bytes) -> dict[bytes, list[int]]:
        """Every qualifier of ``row``'s ``family`` with its stored timestamps (ms)."""
        from google.cloud.bigtable.data import row_filters as rf

        found = self._call(f"table {table}: reading row {short_binary(row)}",
                           self._table(table).read_row, row,
                           row_filter=rf.FamilyNameRegexFilter(_literal(family_id(table, family))))
        stamps: dict[bytes, list[int]] = {}
        for cell in found.cells if found is not None else ():
            stamps.setdefault(cell.qualifier, []).append(cell.timestamp_micros // MS)
        return stamps

    def regions(self, table: str) -> list[RegionDescriptor]:
        return [RegionDescriptor(table, b"", b"", 0)]

    def region_for(self, table: str, row: bytes) -> RegionDescriptor:
        return self.regions(table)[0]

    # --- table admin ------------------------------------------------------------------

    def table_exists(self, table: str) -> bool:
        return bool(self._call(f"table {table}: exists",
                               self._instance.table(table_id(table)).exists))

    def table_descriptor(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, tuple(r.family(name) for name, r in
                                            sorted(self.retention(table).items())))

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        from google.cloud.bigtable import column_family as cf

        families = {family_id(desc.name, f.name): Retention.of(f).gc_rule() or
                    cf.MaxVersionsGCRule(ALL_VERSIONS) for f in desc.families}
        self._call(f"table {desc.name}: creating it as {table_id(desc.name)}",
                   self._instance.table(table_id(desc.name)).create,
                   initial_split_keys=list(split_keys), column_families=families)
        self._retention.pop(desc.name, None)

    def namespaces(self) -> list[str]:
        return ["default"]

    def create_namespace(self, namespace: str) -> None:
        """Namespaces are part of the table ids (:func:`.schema.table_id`)."""

    def enable_table(self, table: str) -> None:
        """Bigtable tables are always enabled."""

    def disable_table(self, table: str) -> None:
        """Bigtable tables are always enabled."""

    def is_table_enabled(self, table: str) -> bool:
        return True

    def delete_table(self, table: str) -> None:
        self._call(f"table {table}: deleting it", self._instance.table(table_id(table)).delete)
        self._retention.pop(table, None)


def visible(row: Any, retention: dict[bytes, Retention], now: int,
            time_range: TimeRange | None, max_versions: int) -> list[Cell]:
    """The cells of one Bigtable row HBase would return: per column, newest first, the
    family's limits applied, then the read's time range and versions."""
    columns: dict[tuple[bytes, bytes], list[tuple[int, bytes]]] = {}
    for cell in row.cells:
        columns.setdefault((cell.family.encode(), cell.qualifier), []).append(
            (cell.timestamp_micros // MS, cell.value))
    cells: list[Cell] = []
    for (family, qualifier), stored in columns.items():
        stored.sort(key=lambda v: -v[0])
        keep = retention.get(family, Retention(None, None))
        kept = stored[:keep.kept([ts for ts, _ in stored], now)]
        if time_range is not None:
            kept = [v for v in kept if time_range[0] <= v[0] < time_range[1]]
        for ts, value in kept[:max_versions]:
            cells.append(Cell(row.row_key, family, qualifier, ts, CellType.PUT, value))
    cells.sort(key=cell_order)
    return cells


def _literal(name: str) -> str:
    """A family id as an RE2 pattern matching only itself (``.`` and ``-`` escaped)."""
    return "".join(c if c.isalnum() or c == "_" else "\\" + c for c in name)


def _wanted(cell: Cell, columns: Columns) -> bool:
    return any(cell.family == f and (q is None or cell.qualifier == q) for f, q in columns)
