"""The reader's hot loops (the WALKey, the cells): the compiled copies (``_hotloops``, built
by ``make setup``) when they are there, else the pure-Python reference in ``walkey.py`` and
``cells.py``; both give the same entries and raise the same errors. The same module holds
the RPC client's write loops (cell blocks, a Multi's actions, its stages by row, the cells'
weights; their references are in ``rpc/`` and ``cluster/sizing.py``).
``HBASE_MIGRATE_PURE_PYTHON=1`` runs the reference; ``use`` switches (the tests run the
format suites through both)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from types import ModuleType

from hbase_migrate.compiled import Choice
from hbase_migrate.wal import cells, walkey
from hbase_migrate.wal.cells import CellsDecoder, CompressionState
from hbase_migrate.wal.model import Cell, Entry, WalKey

KeyDecoder = Callable[[bytes, int, int, "walkey.KeyDictionaries | None"], tuple[WalKey, int]]

_choice = Choice("hbase_migrate.wal._hotloops", "the compiled hot loops are")
COMPILED = _choice.module
implementation = _choice.implementation  # which runs (for readers opened from now on)
use = _choice.use


def entries_loop() -> Callable[..., Iterator[Entry]] | None:
    """The compiled loop over an uncompressed file's entries (``WalReader`` runs its own,
    the reference, when this is None)."""
    compiled = _choice.compiled()
    return None if compiled is None else compiled.entries


def key_decoder() -> KeyDecoder:
    """``decode_key``: the WALKey and its cell count."""
    compiled = _choice.compiled()
    return walkey.decode_key if compiled is None else compiled.decode_key


def plain_decoder() -> CellsDecoder:
    """The loop for uncompressed KeyValues."""
    compiled = _choice.compiled()
    if compiled is None:
        return cells.decode_plain_cells
    return compiled.decode_plain_cells  # type: ignore[no-any-return]


def plain_encoder() -> Callable[[Iterable[Cell], bool], bytes]:
    """``encode_plain_block``: cells as an RPC cell block."""
    compiled = _choice.compiled()
    if compiled is None:
        return cells.encode_plain_block
    return compiled.encode_plain_block  # type: ignore[no-any-return]


def compiled_module() -> ModuleType | None:
    """The compiled module when it runs, else None: the RPC client's loops call its
    ``encode_row_actions`` and ``cells_weight`` directly (each answers None
    for input only their reference handles)."""
    return _choice.compiled()


def block_decoder() -> CellsDecoder:
    """The loop for uncompressed KeyValues whose usual entries come as one ``CellBlock``
    each (compiled only: the reference's are always Cells)."""
    compiled = _choice.compiled()
    if compiled is None:
        return cells.decode_plain_cells
    return compiled.decode_plain_block  # type: ignore[no-any-return]


def marker_decoder() -> CellsDecoder:
    """The loop for uncompressed KeyValues of a reader that looks only for markers: an
    entry's cells may be left out (an empty tuple) when none is a METAFAMILY marker
    (compiled only: the reference's are always all there)."""
    compiled = _choice.compiled()
    if compiled is None:
        return cells.decode_plain_cells
    return compiled.decode_marker_cells  # type: ignore[no-any-return]


def compressed_decoder(state: CompressionState) -> CellsDecoder:
    """The loop for one file's dictionary-compressed cells."""
    compiled = _choice.compiled()
    if compiled is None:
        return cells.compressed_cells_decoder(state)
    return compiled.CompressedCells(state)  # type: ignore[no-any-return]
