"""The one client protocol of a cluster, whatever carries it: :class:`Client`.

Every step reads and writes a cluster through a :class:`Client`: the data calls (scans with
a time range, every version or a raw scan with delete markers; gets; cells of every type
written with their exact timestamps; the table's regions) and the table admin calls the
steps use (exists, descriptor, create with split keys, namespaces, enable, disable, drop).

Three implement it: HBase's own RPC straight to the master and the region servers
(``hbase_migrate.rpc.cluster.NativeCluster``), the Thrift2 gateway
(``hbase_migrate.thrift.thrift2.Thrift2Client``) and, for a Bigtable target,
``hbase_migrate.bigtable.client.BigtableClient``. The front door chooses among them by the
cluster's config (its ``client`` setting,
:class:`~hbase_migrate.cluster.endpoints.ClusterEndpoints`, or its Bigtable section): a step
asks :func:`~hbase_migrate.hbase.open_cluster`'s handle for its client
(:meth:`~hbase_migrate.hbase.Cluster.client`); this module imports none of them.
:class:`Thrift1Gateway` is what the steps use of a Thrift1 gateway
(``hbase_migrate.thrift.thrift1.Thrift1Client``), opened by the handle too
(:meth:`~hbase_migrate.hbase.Cluster.thrift1`, :meth:`~hbase_migrate.hbase.Cluster.replay_gateway`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import Protocol, Self

from hbase_migrate.cluster.descriptors import (
    ALL_VERSIONS,
    Columns,
    RegionDescriptor,
    TableDescriptor,
    TimeRange,
)
from hbase_migrate.cluster.waves import RowCells
from hbase_migrate.wal.model import Cell


class Client(Protocol):
    """A client of one cluster. ``endpoint`` names where it talks in messages (a gateway's
    ``host:port``, or the ZooKeeper quorum); ``max_put_bytes`` bounds one write call."""

    endpoint: str
    max_put_bytes: int

    def __enter__(self) -> Self: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def close(self) -> None: ...

    def probe(self, attempts: int = 1) -> None:
        """One round trip: raises a ``ServiceUnreachableError`` when nothing answers."""

    # --- data -------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Columns | None = None,
            time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS
            ) -> list[Cell]:
        """The row's visible cells, every retained version unless ``max_versions``."""

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        """Each of ``rows``' visible cells (every retained version), in their order, asked
        in as few calls as the transport allows (HBase's Multi of Gets per region server,
        Thrift2's ``getMultiple``)."""

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", *,
             columns: Columns | None = None, time_range: TimeRange | None = None,
             max_versions: int = ALL_VERSIONS, raw: bool = False) -> Iterator[list[Cell]]:
        """The cells of ``[start, stop)`` in HBase's order, as pieces: lists of cells of
        one row (a wide row may come as consecutive pieces). ``raw``: delete markers and
        the cells they hide too."""

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"", *,
                     columns: Columns | None = None, time_range: TimeRange | None = None,
                     max_versions: int = ALL_VERSIONS, raw: bool = False
                     ) -> Iterator[list[list[Cell]]]:
        """:meth:`scan`'s pieces, a reply's at a time (lists of pieces, never empty): for
        loops whose costs per row are better paid once per reply."""

    def put_cells(self, table: str, cells: Sequence[Cell]) -> None:
        """Write Put cells with their own timestamps."""

    def write_cells(self, table: str, cells: Sequence[Cell]) -> int:
        """Write cells of every type exactly, each row's in order; the calls made."""

    def write_rows(self, table: str, batch: Sequence[RowCells]) -> int:
        """Write a batch of row mutations (each one row's cells, all puts or all deletes)
        exactly, each row's in the order given, grouped once into the transport's requests
        (:func:`~hbase_migrate.cluster.waves.row_calls`); the calls made."""

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's regions by start key, with the server holding each."""

    def region_for(self, table: str, row: bytes) -> RegionDescriptor:
        """The region holding ``row`` (a row equal to a split key: the one it starts)."""

    # --- table admin ------------------------------------------------------------------

    def table_exists(self, table: str) -> bool: ...

    def table_descriptor(self, table: str) -> TableDescriptor: ...

    def create_table(self, desc: TableDescriptor, split_keys: Sequence[bytes] = ()) -> None:
        """Create ``desc`` with regions starting at ``split_keys``; returns once created."""

    def namespaces(self) -> list[str]: ...

    def create_namespace(self, namespace: str) -> None: ...

    def enable_table(self, table: str) -> None: ...

    def disable_table(self, table: str) -> None: ...

    def is_table_enabled(self, table: str) -> bool: ...

    def delete_table(self, table: str) -> None: ...


class Thrift1Gateway(Protocol):
    """A client of a cluster's Thrift1 gateway (happybase's IDL), for the calls only it
    has: one timestamp per write call, region listings and major compactions by region
    (so it is a ``Compactor``: ``cluster.admin``)."""

    endpoint: str
    waits: bool

    def __enter__(self) -> Self: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...

    def close(self) -> None: ...

    def probe(self, attempts: int = 1) -> None: ...

    def mutate_rows(self, table: str, timestamp: int,
                    rows: Mapping[bytes, Sequence[tuple[bytes, bytes | None]]], *,
                    delete: bool = False) -> None:
        """One call at ``timestamp``: put the (column, value) pairs of each row, or with
        ``delete`` delete those columns (DeleteColumn up to the timestamp)."""

    def tables(self) -> list[str]:
        """Every table name, ``ns:t`` with the default namespace omitted."""

    def table_descriptor(self, table: str) -> TableDescriptor: ...

    def regions(self, table: str) -> list[RegionDescriptor]: ...

    def compact(self, table: str, regions: Sequence[RegionDescriptor], asked: set[bytes]
                ) -> None: ...
