"""Reading a table without the product, to judge what the product wrote: the embedded
cluster's own store through its server-side read path, or a plain scan through happybase
(HBase's Thrift1 gateway, for any cluster that runs one)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import happybase

from minihbase.model import Query
from minihbase.server import MiniHBase

CellTuple = tuple[bytes, bytes, bytes, int, bytes]  # row, family, qualifier, timestamp, value
EVERY_VERSION = 2**31 - 1
EXAMPLES = 10


def stored_cells(cluster: MiniHBase, table: str) -> list[CellTuple]:
    """Every version a reader of ``table`` sees (delete markers applied, each family's
    versions and TTL kept), sorted, as the embedded server's store holds them."""
    assert cluster.cluster is not None, f"minicluster {cluster.name} is not running"
    rows = cluster.cluster.scan(table, Query(max_versions=EVERY_VERSION))
    return sorted((c.row, c.family, c.qualifier, c.timestamp, c.value)
                  for row in rows for c in row)


def plain_scan(thrift: str, table: str) -> dict[bytes, dict[bytes, bytes]]:
    """The newest version of every cell of ``table`` through happybase at the Thrift1
    gateway ``thrift`` (``host:port``): row -> ``family:qualifier`` -> value."""
    host, _, port = thrift.rpartition(":")
    connection = happybase.Connection(host, int(port), autoconnect=True)
    try:
        return {row: dict(columns) for row, columns in connection.table(table).scan()}
    finally:
        connection.close()


@dataclass
class Contents:
    """Two sides' cells of a table set against each other, cell by cell (a cell is a row,
    column and timestamp)."""

    source_cells: int = 0
    target_cells: int = 0
    only_in_source: int = 0
    only_in_target: int = 0
    different_values: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not (self.only_in_source or self.only_in_target or self.different_values)

    def to_json(self) -> dict[str, object]:
        return {"equal": self.equal, **asdict(self)}


def contents(source: list[CellTuple], target: list[CellTuple]) -> Contents:
    """``source`` against ``target``."""
    ours = {cell[:4]: cell[4] for cell in source}
    theirs = {cell[:4]: cell[4] for cell in target}
    found = Contents(len(source), len(target))
    for key in sorted(ours.keys() | theirs.keys()):
        if key not in theirs:
            found.only_in_source += 1
            kind = "only in source"
        elif key not in ours:
            found.only_in_target += 1
            kind = "only in target"
        elif ours[key] != theirs[key]:
            found.different_values += 1
            kind = "different value"
        else:
            continue
        if len(found.examples) < EXAMPLES:
            found.examples.append(f"{kind}: {key!r}")
    return found


def compare_stored(source: MiniHBase, target: MiniHBase, table: str,
                   target_table: str | None = None) -> Contents:
    """``table`` on the embedded ``source`` against ``target_table`` (default: the same
    name) on ``target``, every visible version, read from their stores."""
    return contents(stored_cells(source, table), stored_cells(target, target_table or table))
