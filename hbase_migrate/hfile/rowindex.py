"""Data blocks encoded ROW_INDEX_V1 (``RowIndexCodecV1``, ``RowIndexEncoderV1``,
``RowIndexSeekerV1`` in branch-2.6).

After the block's 2-byte encoding id (7, ``DataBlockEncoding.ROW_INDEX_V1``), big-endian::

    cells           as in an unencoded block (``NoneEncoder``: ``keyvalue.py``)
    int32 numRows
    int32[numRows]  offset of each row's first cell, from the first cell
    int32 onDiskDataSize  the cells' byte count

The row offsets are checked against the cells read: each must be where a new row starts.
Tags are never compressed here, even in a file whose file info says ``TAGS_COMPRESSED``
(``RowIndexCodecV1`` is no ``BufferedDataBlockEncoder``: ``tagcompression.py``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from hbase_migrate.hfile.keyvalue import StoreCell, block_cells
from hbase_migrate.wal.cells import CellCorruptError

ROW_INDEX_V1 = 7


def row_index_cells(data: bytes, *, tags: bool, mvcc: bool,
                    compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of a ROW_INDEX_V1 block's data after the encoding id (``compressed_tags``
    has no effect: see above)."""
    if len(data) < 8:
        raise CellCorruptError(f"ROW_INDEX_V1 block of {len(data)} bytes has no row index")
    (cells_size,) = struct.unpack_from(">i", data, len(data) - 4)
    if not 0 <= cells_size <= len(data) - 8:
        raise CellCorruptError(f"ROW_INDEX_V1 cells size {cells_size} does not fit the block")
    (rows,) = struct.unpack_from(">i", data, cells_size)
    if rows < 0 or cells_size + 4 + 4 * rows + 4 != len(data):
        raise CellCorruptError(f"ROW_INDEX_V1 row index of {rows} rows does not fit the block")
    offsets = iter(struct.unpack_from(f">{rows}i", data, cells_size + 4))
    last_row: bytes | None = None
    for pos, stored in block_cells(data[:cells_size], tags=tags, mvcc=mvcc):
        if stored.cell.row != last_row:
            indexed = next(offsets, None)
            if indexed != pos:
                raise CellCorruptError(f"row index gives {indexed} for the row at cell byte {pos}")
            last_row = stored.cell.row
        yield stored
    if next(offsets, None) is not None:
        raise CellCorruptError("row index lists more rows than the block holds")
