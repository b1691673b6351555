"""The data block decoders: the compiled copies (``_cells``, built by ``make setup``) when
they are there, else the pure-Python references (``keyvalue.py``, ``rowindex.py``,
``prefix.py``, ``diff.py``, ``fastdiff.py``). A compiled decoder reads a whole block or
answers None at anything not plainly well formed; the reference then reads that block, so
both hand out the same cells and raise the same errors. ``HBASE_MIGRATE_PURE_PYTHON=1`` runs
the references; ``CELLS.use`` switches (the tests run the golden files through both).
``compressed_tags`` (the file info's ``TAGS_COMPRESSED``) is read by the PREFIX, DIFF and
FAST_DIFF decoders only (``tagcompression.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from hbase_migrate.compiled import Choice
from hbase_migrate.hfile.diff import DIFF, diff_cells
from hbase_migrate.hfile.fastdiff import FAST_DIFF, fast_diff_cells
from hbase_migrate.hfile.keyvalue import StoreCell, block_cells
from hbase_migrate.hfile.prefix import PREFIX, prefix_cells
from hbase_migrate.hfile.rowindex import ROW_INDEX_V1, row_index_cells

NONE = 0  # an unencoded block (DATABLK*), which has no encoding id
Decoder = Callable[..., Iterator[StoreCell]]


def plain_cells(data: bytes, *, tags: bool, mvcc: bool,
                compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of an unencoded block (``block_cells`` without their positions); its tags
    are never compressed."""
    return (stored for _pos, stored in block_cells(data, tags=tags, mvcc=mvcc))


REFERENCES: dict[int, Decoder] = {NONE: plain_cells, ROW_INDEX_V1: row_index_cells,
                                  PREFIX: prefix_cells, DIFF: diff_cells,
                                  FAST_DIFF: fast_diff_cells}
COMPILED_NAMES = {NONE: "plain_cells", ROW_INDEX_V1: "row_index_cells",
                  PREFIX: "prefix_cells", DIFF: "diff_cells", FAST_DIFF: "fast_diff_cells"}
CELLS = Choice("hbase_migrate.hfile._cells", "the compiled cell decoders are")


def whole_block(encoding: int, data: bytes, *, tags: bool, mvcc: bool,
                compressed_tags: bool = False) -> list[StoreCell] | None:
    """The compiled decoder's cells of a data block's ``data`` (after its encoding id) in
    ``encoding`` (``NONE`` for an unencoded block, else one of ``REFERENCES``); None when
    it is not the one that runs or hands the block to the reference."""
    compiled = CELLS.compiled()
    if compiled is None:
        return None
    cells: list[StoreCell] | None = getattr(compiled, COMPILED_NAMES[encoding])(
        data, tags, mvcc, compressed_tags)
    return cells


def decode(encoding: int, data: bytes, *, tags: bool, mvcc: bool,
           compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of a data block's ``data`` as ``whole_block`` reads them, else as the
    reference does (which raises ``CellCorruptError`` after the cells before the fault)."""
    cells = whole_block(encoding, data, tags=tags, mvcc=mvcc, compressed_tags=compressed_tags)
    if cells is not None:
        return iter(cells)
    return REFERENCES[encoding](data, tags=tags, mvcc=mvcc, compressed_tags=compressed_tags)
