"""HBase WAL files: the model, a streaming reader, a byte-exact writer, METAFAMILY markers.

Submodules import lazily-heavy pieces (the ``hdfs`` client) only when used.
"""

from hbase_migrate.wal.model import (
    DEFAULT_CELL_CODEC,
    METAFAMILY,
    Cell,
    CellType,
    Entry,
    ScopeType,
    Tag,
    WalHeader,
    WalKey,
)
from hbase_migrate.wal.reader import WalReader, read_entries
from hbase_migrate.wal.source import open_source, source_size
from hbase_migrate.wal.writer import WalOptions, WalWriter, write_wal

__all__ = [
    "DEFAULT_CELL_CODEC",
    "METAFAMILY",
    "Cell",
    "CellType",
    "Entry",
    "ScopeType",
    "Tag",
    "WalHeader",
    "WalKey",
    "WalOptions",
    "WalReader",
    "WalWriter",
    "open_source",
    "read_entries",
    "source_size",
    "write_wal",
]
