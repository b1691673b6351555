"""Streaming HFile writer (v3, minor version 3), writing what HBase 2.6's ``StoreFileWriter``
over ``HFileWriterImpl`` writes for the same cells and settings (branch-2.6), so that HBase
2.x and 3.x read the file and bulk-load it: the mirror of ``reader.py``.

``HFileWriter(path, settings)``; ``append(cell, mvcc)`` for every cell in HBase's order
(row, family, qualifier ascending, timestamp and type descending; ``cell_order``), one family
a file; ``close(file_info)``. Memory holds one data block, the current leaf index and Bloom
chunks and the root index (one entry per leaf block), whatever the file's size.

The file, in order (``HFileWriterImpl.close``): data blocks (``encoders.py``) with leaf
index and Bloom chunks inline (``indexwriter.py``, ``bloomwriter.py``), each block
compressed and checksummed (``blockwriter.py``); then the intermediate index levels and the
root data index (the load-on-open section starts there), the (empty) meta index, the file
info, the Bloom filters' meta blocks; the fixed trailer (``trailer.py``). A data block ends
before the cell that finds it holding ``block_size`` bytes or more, encoded or not; its index
key is the shortest key between the previous block's last cell and its first
(``HFileWriterImpl.getMidpoint``). ``metadata.py`` gives the file info a flush and a bulk
load add.

The per-cell loop (``append``) runs compiled (``_writer.pyx``, built by ``make setup``) or
as the pure-Python reference here (``append_reference``; ``WRITER.use`` switches, for the
writers opened from then on): the same bytes.
"""

from __future__ import annotations

import os
import struct
import time
from dataclasses import dataclass
from typing import BinaryIO

from hbase_migrate.compiled import Choice
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hfile.block import DATA, ENCODED_DATA, FILE_INFO, ROOT_INDEX
from hbase_migrate.hfile.blockwriter import DEFAULT_BYTES_PER_CHECKSUM, BlockWriter
from hbase_migrate.hfile.bloomwriter import (
    DEFAULT_CHUNK_SIZE,
    DELETE_FAMILY_BLOOM_META,
    GENERAL_BLOOM_META,
    ROW,
    ROWCOL,
    BloomWriter,
    rowcol_key,
)
from hbase_migrate.hfile.checksum import CHECKSUM_CRC32C
from hbase_migrate.hfile.encoders import BY_NAME, ENCODERS, NONE, flat_key
from hbase_migrate.hfile.fileinfo import PB_MAGIC
from hbase_migrate.hfile.indexwriter import (
    DEFAULT_MAX_CHUNK_SIZE,
    DEFAULT_MIN_ENTRIES,
    DataIndexWriter,
)
from hbase_migrate.hfile.tagcompression import TAGS_COMPRESSED
from hbase_migrate.hfile.trailer import TRAILER_MAGIC, TRAILER_SIZES
from hbase_migrate.wal.cells import (
    MAX_FAMILY_LENGTH,
    MAX_ROW_LENGTH,
    MAX_TAGS_LENGTH,
    check_cell,
    tags_bytes,
)
from hbase_migrate.wal.codecs import BY_NAME as CODEC_BY_NAME
from hbase_migrate.wal.model import Cell, cell_order
from hbase_migrate.wal.protobuf import bytes_field, delimited, string_field, varint_field

MAJOR_VERSION, MINOR_VERSION = 3, 3
COMPARATOR = "org.apache.hadoop.hbase.KeyValue$KVComparator"  # HBase 1.x's name, as 2.x writes
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
MAXIMUM_TYPE = 255
PUT, DELETE_FAMILY_VERSION, DELETE_COLUMN, DELETE_FAMILY = 4, 10, 12, 14
WRITABLE_CODECS = ("NONE", "GZ", "SNAPPY", "LZ4", "ZSTD")
WRITER = Choice("hbase_migrate.hfile._writer", "the compiled HFile writer loop is")


class HFileWriteError(HBaseMigrateError, ValueError):
    """Cells or settings an HFile cannot be written with (out of order, another family)."""


@dataclass(frozen=True)
class HFileSettings:
    """What a column family and HBase's settings make of a file: the family's BLOCKSIZE,
    DATA_BLOCK_ENCODING, COMPRESSION, BLOOMFILTER (NONE, ROW, ROWCOL) and COMPRESS_TAGS;
    the store's checksums; ``hfile.index.block.max.size`` and ``.min.entries``."""

    block_size: int = 64 * 1024
    encoding: str = "NONE"
    compression: str = "NONE"
    bloom: str = "NONE"
    compress_tags: bool = True
    include_tags: bool = True
    include_mvcc: bool = True
    checksum: int = CHECKSUM_CRC32C
    bytes_per_checksum: int = DEFAULT_BYTES_PER_CHECKSUM
    index_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE
    index_min_entries: int = DEFAULT_MIN_ENTRIES
    bloom_chunk_size: int = DEFAULT_CHUNK_SIZE  # io.storefile.bloom.block.size
    delete_family_bloom: bool = True  # io.storefile.delete.family.bloom.enabled
    historical: bool = True  # file info HISTORICAL false, as 2.6 writes (3.0.0-alpha-4 not)
    create_time: int | None = None  # hfile.CREATE_TIME_TS, ms; None: now


def _long(value: int) -> bytes:
    return struct.pack(">q", value)


def _int(value: int) -> bytes:
    return struct.pack(">i", value)


def _first_on(row: bytes, family: bytes = b"", qualifier: bytes = b"") -> bytes:
    """The key of ``createFirstOnRow``/``FirstOnRowFamily``/``FirstOnRowCol``."""
    return flat_key(Cell(row, family, qualifier, LATEST_TIMESTAMP, MAXIMUM_TYPE))


def _mid_part(left: bytes, right: bytes) -> bytes | None:
    """``getMinimumMidpointArray``: the shortest array between the two, None if equal."""
    limit = min(len(left), len(right))
    i = 0
    while i < limit and left[i] == right[i]:
        i += 1
    if i == limit:
        if len(left) > len(right):
            raise HFileWriteError(f"left {left!r} sorts after right {right!r}")
        return right[:limit] + b"\x00" if len(left) < len(right) else None
    if left[i] > right[i]:
        raise HFileWriteError(f"left {left!r} sorts after right {right!r}")
    return left[:i] + bytes((left[i] + 1,))


def midpoint_key(left: Cell | None, right: Cell) -> bytes:
    """The index key of a data block (``HFileWriterImpl.getMidpoint``)."""
    if left is None:
        return flat_key(right)
    mid = _mid_part(left.row, right.row)
    if mid is not None:
        return _first_on(mid)
    mid = _mid_part(left.family, right.family)
    if mid is not None:
        return _first_on(right.row, mid)
    mid = _mid_part(left.qualifier, right.qualifier)
    if mid is not None:
        return _first_on(right.row, right.family, mid)
    return flat_key(right)


class HFileWriter:
    """One HFile written as cells come (see the module's docstring)."""

    def __init__(self, path: str | os.PathLike[str] | BinaryIO,
                 settings: HFileSettings | None = None) -> None:
        self.settings = s = settings or HFileSettings()
        if s.encoding not in BY_NAME:
            raise HFileWriteError(f"data block encoding {s.encoding}: writes {', '.join(BY_NAME)}")
        if s.compression not in WRITABLE_CODECS:
            raise HFileWriteError(f"compression {s.compression}: writes "
                                  f"{', '.join(WRITABLE_CODECS)}")
        if s.bloom not in ("NONE", ROW, ROWCOL):
            raise HFileWriteError(f"Bloom filter {s.bloom}: writes NONE, ROW and ROWCOL")
        if isinstance(path, (str, os.PathLike)):
            self.name = os.fspath(path)
            self._out: BinaryIO = open(path, "wb")  # noqa: SIM115  # closed by close()
            self._owned = True
        else:
            self.name, self._out, self._owned = repr(path), path, False
        self.compression = CODEC_BY_NAME[s.compression].ordinal
        self.blocks = BlockWriter(self._out, compression=self.compression, checksum=s.checksum,
                                  bytes_per_checksum=s.bytes_per_checksum)
        self.encoder = ENCODERS[BY_NAME[s.encoding]](
            tags=s.include_tags, mvcc=s.include_mvcc, compress_tags=s.compress_tags)
        self.encoder.start()
        self.index = DataIndexWriter(s.index_chunk_size, s.index_min_entries)
        self._compiled = compiled = WRITER.compiled()
        self.bloom = (BloomWriter(s.bloom, chunk_size=s.bloom_chunk_size, compiled=compiled)
                      if s.bloom != "NONE" else None)
        self.delete_bloom = (BloomWriter(ROW, chunk_size=s.bloom_chunk_size,
                                         meta_magic=DELETE_FAMILY_BLOOM_META, compiled=compiled)
                             if s.bloom != ROWCOL and s.delete_family_bloom else None)
        self.last: Cell | None = None
        self.last_order: tuple[bytes, bytes, bytes, int, int] = (b"", b"", b"", 0, 0)
        self._block_size = s.block_size
        self.last_of_previous_block: Cell | None = None
        self.first_in_block: Cell | None = None
        self.last_bloom: Cell | None = None
        self.last_delete_bloom: Cell | None = None
        self.first_data_block = self.last_data_block = -1
        self.entries = self.key_bytes = self.value_bytes = 0
        self.max_mvcc = self.max_tags = self.delete_family_count = 0
        self.biggest = -1
        self.biggest_key = b""
        self.min_ts, self.max_ts = LATEST_TIMESTAMP, -1
        self.earliest_put = LATEST_TIMESTAMP
        self.closed = False

    # --- cells -------------------------------------------------------------------------

    def append(self, cell: Cell, mvcc: int = 0) -> None:
        """Add the next cell (``mvcc``: its sequence id, kept when the file keeps them)."""
        compiled = self._compiled
        if compiled is not None:
            compiled.append(self, cell, mvcc)
        else:
            self.append_reference(cell, mvcc)

    def append_reference(self, cell: Cell, mvcc: int = 0) -> None:
        """The pure-Python reference of ``append`` (the compiled loop hands it the cells it
        does not take)."""
        raw_tags = self._tags_of(cell)
        order = cell_order(cell)
        duplicate = self._in_order(cell, order)
        if self.bloom is not None or cell.type in (DELETE_FAMILY, DELETE_FAMILY_VERSION):
            self._blooms(cell)
        encoder = self.encoder
        if not duplicate and (encoder.encoded >= self._block_size
                              or encoder.unencoded >= self._block_size):
            self._finish_block()
            self._inline(closing=False)
            self._new_block()
        key = flat_key(cell)
        encoder.add(cell, key, mvcc, raw_tags)
        if self.first_in_block is None:
            self.first_in_block = cell
        self.last, self.last_order = cell, order
        self._track(cell, key, len(raw_tags), mvcc)

    def _tags_of(self, cell: Cell) -> bytes:
        """The cell's serialised tags; refuses a cell HBase could not hold."""
        raw_tags = tags_bytes(cell.tags) if cell.tags else b""
        if (len(cell.row) > MAX_ROW_LENGTH or len(cell.family) > MAX_FAMILY_LENGTH
                or len(raw_tags) > MAX_TAGS_LENGTH or not 0 <= cell.type <= MAXIMUM_TYPE):
            try:
                check_cell(cell)  # says which
            except ValueError as exc:
                raise HFileWriteError(f"{self.name}: {exc}") from exc
        return raw_tags

    def _in_order(self, cell: Cell, order: tuple[bytes, bytes, bytes, int, int]) -> bool:
        """Whether the cell has the previous cell's key; refuses one out of order."""
        last = self.last
        if last is None:
            return False
        if cell.family != last.family:
            raise HFileWriteError(f"{self.name}: family {cell.family!r} after "
                                  f"{last.family!r}: one family a file")
        if order < self.last_order:
            raise HFileWriteError(f"{self.name}: cell {order!r} sorts before the previous "
                                  f"{self.last_order!r}")
        return order == self.last_order

    def _track(self, cell: Cell, key: bytes, tags_len: int, mvcc: int) -> None:
        """The file info's counts: sizes, the biggest cell, sequence ids, tags, times."""
        self.key_bytes += len(key)
        self.value_bytes += len(cell.value)
        size = 8 + len(key) + len(cell.value) + (2 + tags_len if tags_len else 0) + 4
        if size > self.biggest:
            self.biggest, self.biggest_key = size, key
        self.entries += 1
        self.max_mvcc = max(self.max_mvcc, mvcc)
        self.max_tags = max(self.max_tags, tags_len)
        ts = cell.timestamp
        if cell.type == PUT:
            self.earliest_put = min(self.earliest_put, ts)
        self.min_ts = min(self.min_ts, ts)
        self.max_ts = max(self.max_ts, ts)
        if cell.type in (DELETE_COLUMN, DELETE_FAMILY):
            self._time(0)

    def _time(self, timestamp: int) -> None:
        self.min_ts = min(self.min_ts, timestamp)
        self.max_ts = max(self.max_ts, timestamp)

    def _blooms(self, cell: Cell) -> None:
        """The Bloom filters' keys, before the cell (``StoreFileWriter.append``)."""
        last = self.last_bloom
        if self.bloom is not None:
            if self.bloom.kind == ROW:
                if last is None or last.row != cell.row:
                    self.bloom.add(cell.row, cell.row)
                    self.last_bloom = cell
            elif last is None or (last.row, last.qualifier) != (cell.row, cell.qualifier):
                key = rowcol_key(cell.row, cell.qualifier)  # a chunk's first key as well
                self.bloom.add(key, key)
                self.last_bloom = cell
        if cell.type in (DELETE_FAMILY, DELETE_FAMILY_VERSION):
            self.delete_family_count += 1
            prev = self.last_delete_bloom
            if self.delete_bloom is not None and (prev is None or prev.row != cell.row):
                self.delete_bloom.add(cell.row, cell.row)
                self.last_delete_bloom = cell

    # --- blocks ------------------------------------------------------------------------

    def _finish_block(self) -> None:
        encoder = self.encoder
        if encoder.unencoded == 0 or self.first_in_block is None:
            return
        magic = DATA if encoder.encoding == NONE else ENCODED_DATA
        written = self.blocks.write(magic, encoder.finish())
        if self.first_data_block < 0:
            self.first_data_block = written.offset
        self.last_data_block = written.offset
        key = midpoint_key(self.last_of_previous_block, self.first_in_block)
        self.index.add(key, written.offset, written.on_disk_size)

    def _inline(self, *, closing: bool) -> None:
        self.index.inline(self.blocks, closing=closing)
        for bloom in (self.bloom, self.delete_bloom):
            if bloom is not None:
                bloom.inline(self.blocks, closing=closing)

    def _new_block(self) -> None:
        self.encoder.start()
        self.first_in_block = None
        if self.last is not None:
            self.last_of_previous_block = self.last

    # --- close -------------------------------------------------------------------------

    def close(self, file_info: dict[bytes, bytes] | None = None) -> int:
        """Write the rest of the file with ``file_info`` added (``metadata.py``); the
        file's size."""
        if self.closed:
            return self.blocks.offset
        self.closed = True
        try:
            return self._close(dict(file_info or {}))
        finally:
            if self._owned:
                self._out.close()

    def _close(self, info: dict[bytes, bytes]) -> int:
        self._finish_block()
        self._inline(closing=True)
        blocks = self.blocks
        counted = blocks.uncompressed_total  # HBase does not count the data index's blocks
        root_offset = self.index.finish(blocks)
        blocks.uncompressed_total = counted
        blocks.write(ROOT_INDEX, b"")  # the meta block index: no meta blocks
        info.update(self._file_info())
        file_info_offset = blocks.offset
        body = b"".join(bytes_field(1, bytes_field(1, k) + bytes_field(2, v))
                        for k, v in sorted(info.items()))
        blocks.write(FILE_INFO, PB_MAGIC + delimited(body))
        for bloom, magic in ((self.bloom, GENERAL_BLOOM_META),
                             (self.delete_bloom, DELETE_FAMILY_BLOOM_META)):
            if bloom is not None and bloom.keys:
                blocks.write(magic, bloom.meta())
        trailer_size = TRAILER_SIZES[MAJOR_VERSION]
        proto = (varint_field(1, file_info_offset) + varint_field(2, root_offset)
                 + varint_field(3, self.index.uncompressed_size)
                 + varint_field(4, blocks.uncompressed_total + trailer_size)
                 + varint_field(5, len(self.index.root)) + varint_field(6, 0)
                 + varint_field(7, self.entries) + varint_field(8, self.index.levels)
                 + varint_field(9, self.first_data_block) + varint_field(10, self.last_data_block)
                 + string_field(11, COMPARATOR) + varint_field(12, self.compression))
        message = TRAILER_MAGIC + delimited(proto)
        padding = trailer_size - 4 - len(message)
        if padding < 0:
            raise HFileWriteError(f"{self.name}: trailer of {len(message)} bytes")
        version = (MINOR_VERSION << 24) | MAJOR_VERSION
        self._out.write(message + bytes(padding) + _int(version))
        self._out.flush()
        return blocks.offset + trailer_size

    def _file_info(self) -> dict[bytes, bytes]:
        """What ``HFileWriterImpl`` and ``StoreFileWriter`` add at close."""
        s = self.settings
        info: dict[bytes, bytes] = {b"DELETE_FAMILY_COUNT": _long(self.delete_family_count),
                                    b"TIMERANGE": _long(self.min_ts) + _long(self.max_ts),
                                    b"EARLIEST_PUT_TS": _long(self.earliest_put)}
        if s.historical:
            info[b"HISTORICAL"] = b"\x00"
        if self.bloom is not None and self.bloom.keys and self.last_bloom is not None:
            info[b"BLOOM_FILTER_TYPE"] = self.bloom.kind.encode()
            lb = self.last_bloom
            info[b"LAST_BLOOM_KEY"] = (lb.row if self.bloom.kind == ROW
                                       else rowcol_key(lb.row, lb.qualifier))
        if s.encoding != "NONE":
            info[b"DATA_BLOCK_ENCODING"] = s.encoding.encode()
        if s.include_mvcc:
            info[b"MAX_MEMSTORE_TS_KEY"] = _long(self.max_mvcc)
            info[b"KEY_VALUE_VERSION"] = _int(1)
        if self.last is not None:
            info[b"hfile.LASTKEY"] = flat_key(self.last)
        entries = self.entries
        info[b"hfile.AVG_KEY_LEN"] = _int(self.key_bytes // entries if entries else 0)
        created = s.create_time if s.create_time is not None else int(time.time() * 1000)
        info[b"hfile.CREATE_TIME_TS"] = _long(created)
        info[b"hfile.AVG_VALUE_LEN"] = _int(self.value_bytes // entries if entries else 0)
        if self.biggest >= 0:
            info[b"hfile.KEY_OF_BIGGEST_CELL"] = self.biggest_key
            info[b"hfile.LEN_OF_BIGGEST_CELL"] = _long(self.biggest)
        if s.include_tags:
            info[b"hfile.MAX_TAGS_LEN"] = _int(self.max_tags)
            compressed = s.encoding != "NONE" and s.compress_tags
            info[TAGS_COMPRESSED] = b"\xff" if compressed else b"\x00"  # Bytes.toBytes(true)
        return info

    def __enter__(self) -> HFileWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.closed and exc[0] is None:
            self.close()
        elif not self.closed and self._owned:
            self.closed = True
            self._out.close()
