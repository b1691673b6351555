"""``hbase:meta`` of the embedded cluster, laid out as HBase lays it out and read as HBase
reads it: one row per region (``table,startkey,regionid.encoded.``; ``info:regioninfo``,
``info:seqnumDuringOpen``, ``info:server``, ``info:serverstartcode``, ``info:sn``,
``info:state``) and one per table (``table:state``), in ``MetaCellComparator`` order. A split
parent keeps its row until the catalog janitor removes it, as on HBase: its
``info:regioninfo`` marked offline and split, ``info:splitA`` and ``info:splitB`` naming its
daughters, ``info:state`` SPLIT; clients skip it.

The rows are built from the store's regions and the region servers' assignment each time
they are read, so a create, split, move, kill or disable shows at once. The encoding is
``hbase_migrate.rpc.locate``'s (the reader's twin).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.zk.zkpayload import PB_MAGIC
from hbase_migrate.rpc.locate import (
    INFO,
    META_REGION,
    Region,
    meta_order,
    meta_row,
    region_info_message,
    table_state_row,
)
from hbase_migrate.wal.model import Cell, CellType
from minihbase.cluster import Cluster
from minihbase.model import ColumnSelection
from minihbase.regionserver import RegionServers

META_TABLE = "hbase:meta"
ENABLED, DISABLED = 0, 1


def meta_rows(cluster: Cluster, servers: RegionServers) -> list[tuple[bytes, list[Cell]]]:
    """Every row of ``hbase:meta`` now, in ``MetaCellComparator`` order. A disabled table's
    regions have no server columns (closed); a live server's regions name it."""
    rows: list[tuple[bytes, list[Cell]]] = []
    sequence_ids = servers.sequence_ids()
    for info in cluster.store.tables():
        stamp = min((r.region_id for r in info.regions), default=0)
        rows.append((info.name.encode(), table_state_row(
            info.name, ENABLED if info.enabled else DISABLED, stamp)))
        for r in info.regions:
            host, port, code = servers.server_of(r) if info.enabled else ("", 0, 0)
            region = Region(info.name, r.start_key, r.end_key, r.region_id, r.region_name,
                            host, port, code)
            rows.append((r.region_name, meta_row(region, r.region_id,
                                                 sequence_ids.get(r.encoded_name, 0) + 1)))
        # the parents of regions the table still has (or of parents it keeps)
        present = {r.encoded_name for r in info.regions} | set(servers.split_parents)
        for parent, daughters in list(servers.split_parents.values()):
            if parent.table == info.name and any(d.encoded_name in present for d in daughters):
                rows.append((parent.region_name, split_parent_row(parent, daughters)))
    rows.sort(key=lambda row: meta_order(row[0]))
    return rows


def _region_info(region: RegionDescriptor, **flags: bool) -> bytes:
    return PB_MAGIC + region_info_message(region.table, region.start_key, region.end_key,
                                          region.region_id, **flags)


def split_parent_row(parent: RegionDescriptor, daughters: Sequence[RegionDescriptor]
                     ) -> list[Cell]:
    """A split parent's ``hbase:meta`` row (MetaTableAccessor.splitRegion's put, and the
    SPLIT state the split procedure leaves), stamped with the daughters' region id."""
    stamp = daughters[0].region_id
    columns = [(b"regioninfo", _region_info(parent, offline=True, split=True)),
               *((q, _region_info(d)) for q, d in zip((b"splitA", b"splitB"), daughters,
                                                       strict=True)),
               (b"state", b"SPLIT")]
    return [Cell(parent.region_name, INFO, q, stamp, CellType.PUT, v) for q, v in columns]


def select(cells: Sequence[Cell], columns: ColumnSelection) -> list[Cell]:
    return [c for c in cells if columns.wants(c.family, c.qualifier)]


def meta_scan(rows: list[tuple[bytes, list[Cell]]], start: bytes, stop: bytes,
              include_start: bool, reversed_: bool, columns: ColumnSelection,
              include_stop: bool = False) -> list[list[Cell]]:
    """The rows of a scan of ``hbase:meta`` (bounds compared as HBase compares meta rows;
    reversed: from ``start`` down to ``stop``)."""
    def after_start(key: bytes) -> bool:
        if not start:
            return True
        here, bound = meta_order(key), meta_order(start)
        if reversed_:
            return here < bound or (include_start and here == bound)
        return here > bound or (include_start and here == bound)

    def before_stop(key: bytes) -> bool:
        if not stop:
            return True
        here, bound = meta_order(key), meta_order(stop)
        if include_stop and here == bound:
            return True
        return here > bound if reversed_ else here < bound

    ordered = reversed(rows) if reversed_ else iter(rows)
    out = []
    for key, cells in ordered:
        if after_start(key) and before_stop(key):
            chosen = select(cells, columns)
            if chosen:
                out.append(chosen)
    return out


def is_meta(region_name: bytes) -> bool:
    return region_name == META_REGION


MetaRows = Callable[[], list[tuple[bytes, list[Cell]]]]
