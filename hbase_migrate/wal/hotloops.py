"""The reader's hot loops (the WALKey, the cells): the compiled copies (``_hotloops``, built
by ``make setup``) when they are there, else the pure-Python reference in ``walkey.py`` and
``cells.py``; both give the same entries and raise the same errors.
``HBASE_MIGRATE_PURE_PYTHON=1`` runs the reference; ``use`` switches (the tests run the
format suites through both)."""

from __future__ import annotations

import os
from collections.abc import Callable
from types import ModuleType
from typing import Literal

from hbase_migrate.wal import cells, walkey
from hbase_migrate.wal.cells import CellsDecoder, CompressionState
from hbase_migrate.wal.model import WalKey

Implementation = Literal["compiled", "python"]
KeyDecoder = Callable[[bytes, int, int, "walkey.KeyDictionaries | None"], tuple[WalKey, int]]


def _compiled() -> ModuleType | None:
    try:
        from hbase_migrate.wal import _hotloops  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _hotloops  # type: ignore[no-any-return]


COMPILED = _compiled()
_active: list[Implementation] = [
    "compiled" if COMPILED is not None and os.environ.get("HBASE_MIGRATE_PURE_PYTHON") != "1"
    else "python"]


def implementation() -> Implementation:
    """Which loops readers opened from now on run."""
    return _active[0]


def use(name: Implementation) -> None:
    """Make readers opened from now on run ``name``'s loops."""
    if name == "compiled" and COMPILED is None:
        raise RuntimeError("the compiled hot loops are not built (make setup builds them)")
    _active[0] = name


def key_decoder() -> KeyDecoder:
    """``decode_key``: the WALKey and its cell count."""
    if _active[0] == "compiled":
        assert COMPILED is not None
        return COMPILED.decode_key  # type: ignore[no-any-return]
    return walkey.decode_key


def plain_decoder() -> CellsDecoder:
    """The loop for uncompressed KeyValues."""
    if _active[0] == "compiled":
        assert COMPILED is not None
        return COMPILED.decode_plain_cells  # type: ignore[no-any-return]
    return cells.decode_plain_cells


def compressed_decoder(state: CompressionState) -> CellsDecoder:
    """The loop for one file's dictionary-compressed cells."""
    if _active[0] == "compiled":
        assert COMPILED is not None
        return COMPILED.CompressedCells(state)  # type: ignore[no-any-return]
    return cells.compressed_cells_decoder(state)
