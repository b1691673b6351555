"""Values of the embedded cluster: errors, durability, client mutations and read queries.

Client mutations carry what a client sent (timestamps may be ``LATEST_TIMESTAMP``); the
region layer (``minihbase.regions``) turns them into the concrete cells HBase would log.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from hbase_migrate.cluster.descriptors import LATEST_TIMESTAMP
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.model import CellType

__all__ = ["LATEST_TIMESTAMP"]


class MiniHBaseError(HBaseMigrateError):
    """A request HBase would refuse; gateways turn it into IOError / TIOError.
    ``retryable``: not one of HBase's DoNotRetryIOExceptions (Thrift2's ``canRetry``)."""

    retryable = False


class ServerDownError(MiniHBaseError):
    """The region's server is gone and no other took it over yet: HBase's client gives up
    with a RetriesExhaustedException, which may be retried."""

    retryable = True


class TableNotFoundError(MiniHBaseError):
    def __init__(self, table: str) -> None:
        super().__init__(f"org.apache.hadoop.hbase.TableNotFoundException: {table}")


class TableExistsError(MiniHBaseError):
    def __init__(self, table: str) -> None:
        super().__init__(f"org.apache.hadoop.hbase.TableExistsException: {table}")


class NamespaceNotFoundError(MiniHBaseError):
    def __init__(self, namespace: str) -> None:
        super().__init__(f"org.apache.hadoop.hbase.NamespaceNotFoundException: {namespace}")


class NamespaceExistError(MiniHBaseError):
    def __init__(self, namespace: str) -> None:
        super().__init__(f"org.apache.hadoop.hbase.NamespaceExistException: {namespace}")


class TableStateError(MiniHBaseError):
    """Table not enabled (for reads/writes) or not disabled (for delete)."""


class TableDisabledError(TableStateError):
    """A call on a disabled table, as real HBase's gateways answer it: Thrift1 gives the
    client's exception (a read: TableNotEnabledException; a batch write, once its retries
    are spent: NotServingRegionException in RetriesExhaustedWithDetailsException), Thrift2
    only its message (``thrift2_message``)."""

    def __init__(self, table: str, write: bool) -> None:
        self.thrift2_message = f"{table} is disabled."
        self.retryable = write  # RetriesExhausted...; TableNotEnabledException is not
        super().__init__(
            "org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException: Failed 1 "
            f"action: org.apache.hadoop.hbase.NotServingRegionException: 1 time ({table} is "
            "disabled)"
            if write else
            f"org.apache.hadoop.hbase.TableNotEnabledException: {table} is disabled.")


class NoSuchFamilyError(MiniHBaseError):
    def __init__(self, table: str, family: bytes) -> None:
        super().__init__(
            "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: column family "
            f"{family.decode('latin-1')} does not exist in table {table}"
        )


class IllegalArgumentError(MiniHBaseError):
    """A malformed request (Thrift1 IllegalArgument)."""


class IllegalSplitError(IllegalArgumentError):
    def __init__(self, table: str, start_key: bytes, split_key: bytes) -> None:
        super().__init__(f"table {table}: no region starts at {start_key!r} holding split "
                         f"key {split_key!r} strictly inside it")


class Durability(IntEnum):
    """org.apache.hadoop.hbase.client.Durability; values match Thrift2's TDurability."""

    USE_DEFAULT = 0
    SKIP_WAL = 1
    ASYNC_WAL = 2
    SYNC_WAL = 3
    FSYNC_WAL = 4


def parse_column(column: bytes) -> tuple[bytes, bytes | None]:
    """HBase's ``CellUtil.parseColumn``: split at the first ``:``.

    ``b"cf"`` -> family only (``None`` qualifier); ``b"cf:"`` -> empty qualifier.
    """
    family, sep, qualifier = column.partition(b":")
    if not family:
        raise IllegalArgumentError(f"invalid column {column!r}: empty family")
    return family, (qualifier if sep else None)


@dataclass(frozen=True)
class ClientCell:
    """One cell of a client Put or Delete; ``type`` is a CellType code."""

    family: bytes
    qualifier: bytes
    timestamp: int
    type: int
    value: bytes = b""


@dataclass(frozen=True)
class Mutation:
    """A client Put or Delete of one row.

    ``whole_row`` marks ``new Delete(row[, ts])`` without columns: the server expands it to
    one DeleteFamily per family at ``row_timestamp``.
    """

    row: bytes
    cells: tuple[ClientCell, ...] = ()
    durability: Durability = Durability.USE_DEFAULT
    whole_row: bool = False
    row_timestamp: int = LATEST_TIMESTAMP

    @property
    def is_put(self) -> bool:
        return not self.whole_row and all(c.type == CellType.PUT for c in self.cells)


@dataclass
class ColumnSelection:
    """Which families/columns a Get or Scan reads, built as ``Get.addFamily``/``addColumn``
    do: a later ``add_family`` widens the family again, a later ``add_column`` narrows it."""

    families: dict[bytes, set[bytes] | None] = field(default_factory=dict)

    def add_family(self, family: bytes) -> None:
        self.families[family] = None

    def add_column(self, family: bytes, qualifier: bytes) -> None:
        current = self.families.get(family)
        if current is None:
            current = set()
            self.families[family] = current
        current.add(qualifier)

    def wants(self, family: bytes, qualifier: bytes) -> bool:
        if not self.families:
            return True
        if family not in self.families:
            return False
        qualifiers = self.families[family]
        return qualifiers is None or qualifier in qualifiers


@dataclass
class Query:
    """A Get or Scan: row bounds ``[start, stop)`` (empty stop = to the end), an optional
    prefix, columns, time range ``[min_ts, max_ts)``, versions per column, cells per result
    (``batch``, 0 = whole rows), a row limit (0 = none) and whether it is raw."""

    start: bytes = b""
    stop: bytes = b""
    prefix: bytes | None = None
    columns: ColumnSelection = field(default_factory=ColumnSelection)
    min_ts: int = 0
    max_ts: int = LATEST_TIMESTAMP
    max_versions: int = 1
    batch: int = 0
    limit: int = 0
    reversed: bool = False
    raw: bool = False  # delete markers and the cells they mask too (``Scan.setRaw``)

    @classmethod
    def get(cls, row: bytes) -> Query:
        return cls(start=row, stop=row + b"\x00")
