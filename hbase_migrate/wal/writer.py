"""Writer of protobuf WAL files, byte for byte what HBase's ``ProtobufLogWriter`` writes.

Layout (see ``header.py``, ``walkey.py`` and ``cells.py``): ``PWAL``, the delimited
WALHeader, then per entry the delimited WALKey (``following_kv_count`` always set) and its
cells, and on a clean close the empty WALTrailer, ``int32 0`` and ``LAWP``. The header is
the HBase 2.5+ one: the compression flags (fields 1, 3, 6) are always present, field 7 only
with value compression.
With compression the dictionaries are updated in HBase's order: region, table, scope
families, extended attribute values, then row, family, qualifier (and tags) of each cell.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO

from hbase_migrate.wal.cells import (
    CompressionState,
    check_cell,
    encode_compressed_cell,
    encode_plain_cell,
)
from hbase_migrate.wal.codecs import BY_NAME, LZO_REFUSAL
from hbase_migrate.wal.dictionary import (
    FAMILY_CAPACITY,
    REGION_CAPACITY,
    TABLE_CAPACITY,
    LruDictionary,
)
from hbase_migrate.wal.header import EMPTY_TRAILER, MAGIC, encode_header
from hbase_migrate.wal.model import DEFAULT_CELL_CODEC, Cell, WalHeader, WalKey
from hbase_migrate.wal.protobuf import delimited
from hbase_migrate.wal.walkey import KeyDictionaries, encode_key

VALUE_COMPRESSIONS = tuple(BY_NAME)  # every algorithm but LZO


@dataclass(frozen=True)
class WalOptions:
    """What the file's writer was configured with.

    ``tag_compression`` and ``value_compression`` only apply with ``compression``, as in
    HBase. ``value_compression="NONE"`` writes a header announcing value compression with
    algorithm NONE (each value then carries its own length); every other name of
    ``VALUE_COMPRESSIONS`` compresses values as HBase's default codec for it does.
    ``encryption_key`` produces the header of an encrypted WAL (for tests of refusal); such a
    writer cannot write cells.
    """

    compression: bool = False
    tag_compression: bool = True
    value_compression: str | None = None
    recovered_edits: bool = False
    writer_cls_name: str | None = "ProtobufLogWriter"
    cell_codec_cls_name: str | None = DEFAULT_CELL_CODEC
    encryption_key: bytes | None = None

    def header(self) -> WalHeader:
        """The WALHeader these options give."""
        algorithm = None
        if self.compression and self.value_compression is not None:
            if self.value_compression == "LZO":
                raise ValueError(LZO_REFUSAL)
            if self.value_compression not in BY_NAME:
                raise ValueError(
                    f"value_compression must be one of {', '.join(VALUE_COMPRESSIONS)} or None, "
                    f"got {self.value_compression!r}"
                )
            algorithm = BY_NAME[self.value_compression].ordinal
        return WalHeader(
            has_compression=self.compression,
            encryption_key=self.encryption_key,
            has_tag_compression=self.compression and self.tag_compression,
            writer_cls_name=self.writer_cls_name,
            cell_codec_cls_name=self.cell_codec_cls_name,
            has_value_compression=algorithm is not None,
            value_compression_algorithm=algorithm,
        )


class WalWriter:
    """Append entries to a WAL file object; magic and header are written at once."""

    def __init__(self, fileobj: BinaryIO, options: WalOptions = WalOptions()) -> None:
        self._out = fileobj
        self._owned = False
        self.options = options
        self.header = options.header()
        self._key_dicts: KeyDictionaries | None = None
        self._cells: CompressionState | None = None
        if options.compression:
            capacity = 1 if options.recovered_edits else REGION_CAPACITY
            family = LruDictionary(FAMILY_CAPACITY, writer=True)
            self._key_dicts = KeyDictionaries(
                LruDictionary(capacity, writer=True),
                LruDictionary(1 if options.recovered_edits else TABLE_CAPACITY, writer=True),
                family,
            )
            self._cells = CompressionState.create(
                tags=self.header.has_tag_compression,
                value_algorithm=self.header.value_compression_algorithm,
                writer=True,
            )._replace(family=family)
        header = encode_header(self.header)
        self._pos = 0
        self._write(MAGIC + delimited(header))
        self.closed = False

    def _write(self, data: bytes) -> None:
        self._out.write(data)
        self._pos += len(data)

    def tell(self) -> int:
        """Bytes written so far (the offset of the next entry)."""
        return self._pos

    def append(self, key: WalKey, cells: Sequence[Cell]) -> tuple[int, int]:
        """Write one entry; return its (offset, size)."""
        if self.closed:
            raise ValueError("WAL writer is closed")
        if self.options.encryption_key is not None:
            raise ValueError("encrypted WALs cannot be written: cells need the cluster's key")
        for cell in cells:  # refuse before any dictionary changes
            check_cell(cell)
        out = bytearray(delimited(encode_key(key, len(cells), self._key_dicts)))
        state = self._cells
        if state is None:
            for cell in cells:
                encode_plain_cell(out, cell)
        else:
            for cell in cells:
                encode_compressed_cell(out, cell, state)
        offset = self._pos
        self._write(bytes(out))
        return offset, len(out)

    def flush(self) -> None:
        """Flush the underlying file object."""
        self._out.flush()

    def close(self, trailer: bool = True) -> None:
        """Finish the file: the trailer (``00000000 LAWP``) when asked, then flush; the file
        object is closed only if this writer opened it."""
        if self.closed:
            return
        self.closed = True
        if trailer:
            self._write(EMPTY_TRAILER)
        self._out.flush()
        if self._owned:
            self._out.close()

    def __enter__(self) -> WalWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close(trailer=exc_type is None)

    @classmethod
    def create(cls, path: str | os.PathLike[str], options: WalOptions = WalOptions()) -> WalWriter:
        """Open ``path`` for writing (truncating it) and return a writer that owns it."""
        fileobj = open(path, "wb")  # noqa: SIM115 (closed by close())
        try:
            writer = cls(fileobj, options)
        except BaseException:
            fileobj.close()
            raise
        writer._owned = True
        return writer


def write_wal(
    path: str | os.PathLike[str],
    entries: Iterable[tuple[WalKey, Sequence[Cell]]],
    options: WalOptions = WalOptions(),
    *,
    trailer: bool = True,
) -> None:
    """Write a whole WAL file."""
    writer = WalWriter.create(path, options)
    try:
        for key, cells in entries:
            writer.append(key, cells)
    except BaseException:
        writer.close(trailer=False)
        raise
    writer.close(trailer=trailer)
