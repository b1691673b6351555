"""Statistics of one key range on one side: rows, cells, and a digest of the visible cells.

The digest is SHA-256 over the cells in scan order (rows ascending; within a row family,
qualifier ascending, timestamp and type descending), each cell fed as length-prefixed
fields: row, family, qualifier, timestamp, type, value. Unlike HBase's HashTable, lengths
are part of the input, so ``("ab", "c")`` and ``("a", "bc")`` differ.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any

from hbase_migrate.cluster.client import Client
from hbase_migrate.compiled import Choice
from hbase_migrate.limits import Throttle, metered_batches
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.runstate import watched_batches
from hbase_migrate.wal.model import Cell, cell_order

_LEN = struct.Struct(">I")
_TS_TYPE = struct.Struct(">qB")
_TAIL = struct.Struct(">qBI")  # timestamp, type, the value's length
BATCH_BYTES = 1 << 18  # values joined before they are hashed
# what a side's rows pass through before they are digested: the source's, without the
# cells whose loss to a Bigtable target was accepted (``bigtable.accepted``)
Keep = Callable[[Iterable[list[Cell]]], Iterable[list[Cell]]]
# the compiled copy of ``digest_rows``'s loop (``_digest.pyx``, built by ``make setup``)
DIGEST = Choice("hbase_migrate.ranges._digest", "the compiled range digest is")


def feed(digest: Any, cell: Cell) -> None:
    """Add one cell's length-prefixed fields to ``digest`` (a hashlib object)."""
    for part in (cell.row, cell.family, cell.qualifier):
        digest.update(_LEN.pack(len(part)))
        digest.update(part)
    digest.update(_TS_TYPE.pack(cell.timestamp, cell.type))
    digest.update(_LEN.pack(len(cell.value)))
    digest.update(cell.value)


@dataclass(frozen=True)
class RangeStats:
    """One side's statistics of one range."""

    range: KeyRange
    rows: int
    cells: int
    digest: str  # SHA-256, hex

    def to_json(self) -> dict[str, Any]:
        return {**self.range.to_json(), "rows": self.rows, "cells": self.cells,
                "digest": self.digest}


def digest_rows(key_range: KeyRange, rows: Iterable[list[Cell]]) -> RangeStats:
    """The statistics of ``rows``: pieces of rows in key order, each the cells of one row
    in scan order; consecutive pieces of one row (a wide row split by the scan) count as
    one row, and the digest is the same whether or not a row was split.

    The bytes hashed are :func:`feed`'s, joined and handed to SHA-256 a batch at a time
    (a call per field costs more than the hashing). The compiled loop when it runs, else
    :func:`reference_digest_rows`: the same statistics."""
    compiled = DIGEST.compiled()
    if compiled is None:
        return reference_digest_rows(key_range, rows)
    n_rows, n_cells, digest = compiled.digest_rows(rows)
    return RangeStats(key_range, n_rows, n_cells, digest)


def reference_digest_rows(key_range: KeyRange, rows: Iterable[list[Cell]]) -> RangeStats:
    """:func:`digest_rows` in pure Python (the reference of ``_digest.pyx``)."""
    digest = hashlib.sha256()
    n_rows = n_cells = 0
    last_row: bytes | None = None
    pending: list[bytes] = []
    add = pending.extend
    size = 0
    for cells in rows:
        if not cells:
            continue
        if cells[0].row != last_row:
            n_rows += 1
            last_row = cells[0].row
        n_cells += len(cells)
        for row, family, qualifier, timestamp, kind, value, _ in (
                sorted(cells, key=cell_order) if len(cells) > 1 else cells):
            add((_LEN.pack(len(row)), row, _LEN.pack(len(family)), family,
                 _LEN.pack(len(qualifier)), qualifier, _TAIL.pack(timestamp, kind, len(value)),
                 value))
            size += len(value)
        if size >= BATCH_BYTES:
            digest.update(b"".join(pending))
            pending.clear()
            size = 0
    digest.update(b"".join(pending))
    return RangeStats(key_range, n_rows, n_cells, digest.hexdigest())


def range_stats(client: Client, key_range: KeyRange, table: str | None = None,
                time_range: tuple[int, int] | None = None, *,
                throttle: Throttle | None = None, keep: Keep | None = None) -> RangeStats:
    """Scan ``key_range`` of ``table`` (default: the range's own table) and digest it,
    paced by ``throttle``; the rows pass through ``keep`` first, when given."""
    batches = watched_batches(
        client.scan_batches(table or key_range.table, key_range.start, key_range.stop,
                            time_range=time_range), f"checksums of {key_range}")
    rows: Iterable[list[Cell]] = chain.from_iterable(metered_batches(batches, throttle))
    return digest_rows(key_range, rows if keep is None else keep(rows))
