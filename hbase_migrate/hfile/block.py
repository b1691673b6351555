"""HFile blocks (``HFileBlock``, ``BlockType``, ``HFileBlockDefaultDecodingContext`` in
branch-2.6): header, checksums, decompression.

Header (``HFileBlock.Header``), big-endian, 33 bytes from minor version 1
(``HFileReaderImpl.MINOR_VERSION_WITH_CHECKSUM``), else the first 24::

    0  8 bytes  block magic (BlockType: DATABLK*, DATABLKE, IDXLEAF2, IDXINTE2, IDXROOT2,
                FILEINF2, METABLKc, BLMFMET2, DFBLMET2, BLMFBLK2)
    8  int32    onDiskSizeWithoutHeader (data on disk and the checksums after it)
    12 int32    uncompressedSizeWithoutHeader (data after decompression, no checksums)
    16 int64    prevBlockOffset (of the previous block of the same type)
    24 int8     checksum type (``ChecksumType`` code)
    25 int32    bytesPerChecksum
    29 int32    onDiskDataSizeWithHeader (header and on-disk data, no checksums)

The data after the header is compressed with the file's algorithm (the header is not;
``prepareDecoding``) by the codec's own stream (``Compression.createPlainCompressionStream``
is ``codec.createOutputStream``), finished once per block (``FinishOnFlushCompressionStream``):
the same unit as one value of WAL value compression, so ``wal/codecs.py`` decodes it. GZ is
one gzip member (``ReusableStreamGzipCodec``, no Hadoop block framing); SNAPPY, LZ4, ZSTD and
BROTLI (HBase's aircompressor and brotli codecs) Hadoop's ``BlockCompressorStream`` framing.
An encrypted block starts with an IV length byte: encryption is refused at the trailer.
Checksums: ``checksum.py``.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from hbase_migrate.errors import HFileCorruptError, HFileUnsupportedError
from hbase_migrate.hfile.checksum import (
    CHECKSUM_NAMES,
    CHECKSUM_NULL,
    CHECKSUM_SIZE,
    first_bad_chunk,
    num_chunks,
)
from hbase_migrate.wal.codecs import (
    ALGO_NONE,
    BY_NAME,
    CODECS,
    DecompressionErrors,
    algorithm_label,
)

HEADER_SIZE = 33
HEADER_SIZE_NO_CHECKSUM = 24
MINOR_VERSION_WITH_CHECKSUM = 1
_HEADER = struct.Struct(">8siiqbii")
_HEADER_V0 = struct.Struct(">8siiq")

DATA = b"DATABLK*"
ENCODED_DATA = b"DATABLKE"
LEAF_INDEX = b"IDXLEAF2"
INTERMEDIATE_INDEX = b"IDXINTE2"
ROOT_INDEX = b"IDXROOT2"
FILE_INFO = b"FILEINF2"
BLOCK_MAGICS = frozenset({
    DATA, ENCODED_DATA, LEAF_INDEX, INTERMEDIATE_INDEX, ROOT_INDEX, FILE_INFO, b"METABLKc",
    b"BLMFMET2", b"DFBLMET2", b"BLMFBLK2",
})
# read with the WAL's value codecs; each checked on files real HBase 2.6.1 wrote
READABLE_COMPRESSION = frozenset(BY_NAME[name].ordinal
                                 for name in ("GZ", "SNAPPY", "LZ4", "ZSTD", "BROTLI"))


class Block(NamedTuple):
    magic: bytes
    offset: int
    on_disk_size: int  # header, data and checksums: where the next block starts
    data: bytes  # uncompressed, without header and checksums


class BlockReader:
    """Reads and checks blocks of one HFile from a binary file object."""

    def __init__(self, name: str, file: object, minor_version: int, compression: int,
                 file_size: int) -> None:
        self.name = name
        self.file = file
        self.checksums = minor_version >= MINOR_VERSION_WITH_CHECKSUM
        self.header_size = HEADER_SIZE if self.checksums else HEADER_SIZE_NO_CHECKSUM
        self.compression = compression
        self.file_size = file_size

    def _corrupt(self, offset: int, reason: str) -> HFileCorruptError:
        return HFileCorruptError(self.name, offset, reason)

    def _read(self, offset: int, size: int) -> bytes:
        self.file.seek(offset)  # type: ignore[attr-defined]
        data: bytes = self.file.read(size)  # type: ignore[attr-defined]
        if len(data) != size:
            raise self._corrupt(offset, f"block cut off: {len(data)} of {size} bytes")
        return data

    def read(self, offset: int, end: int) -> Block:
        """The block at ``offset``, which must end by ``end``."""
        if offset < 0 or offset + self.header_size > end:
            raise self._corrupt(offset, f"no room for a block header before byte {end}")
        header = self._read(offset, self.header_size)
        if self.checksums:
            fields = _HEADER.unpack(header)
            magic, on_disk, raw_size, _prev, kind, per_chunk, data_with_header = fields
        else:
            magic, on_disk, raw_size, _prev = _HEADER_V0.unpack(header)
            kind, per_chunk, data_with_header = CHECKSUM_NULL, 0, self.header_size + on_disk
        if magic not in BLOCK_MAGICS:
            raise self._corrupt(offset, f"block magic {magic!r} is no HBase block type")
        total = self.header_size + on_disk
        if on_disk < 0 or raw_size < 0 or offset + total > end:
            raise self._corrupt(
                offset, f"{magic.decode()} block of {total} bytes runs past byte {end}")
        body = header + self._read(offset + self.header_size, on_disk)
        data = self._checked(offset, magic, body, kind, per_chunk, data_with_header)
        return Block(magic, offset, total, self._decompress(offset, magic, data, raw_size))

    def _checked(self, offset: int, magic: bytes, body: bytes, kind: int, per_chunk: int,
                 data_with_header: int) -> bytes:
        if kind == CHECKSUM_NULL:
            if data_with_header != len(body):
                raise self._corrupt(offset, "block without checksums has a size mismatch")
            return body[self.header_size :]
        if kind not in CHECKSUM_NAMES:
            raise self._corrupt(offset, f"checksum type {kind} is not NULL, CRC32 or CRC32C")
        if per_chunk <= 0 or not self.header_size <= data_with_header <= len(body):
            raise self._corrupt(
                offset, f"bytesPerChecksum {per_chunk}, data size {data_with_header}")
        expected = num_chunks(data_with_header, per_chunk) * CHECKSUM_SIZE
        if len(body) - data_with_header != expected:
            found = len(body) - data_with_header
            raise self._corrupt(offset, f"{found} checksum bytes, expected {expected}")
        bad = first_bad_chunk(body[:data_with_header], body[data_with_header:], kind, per_chunk)
        if bad is not None:
            raise self._corrupt(offset, f"{magic.decode()} block fails its {CHECKSUM_NAMES[kind]} "
                                f"checksum in chunk {bad} (bytes {bad * per_chunk}+)")
        return body[self.header_size : data_with_header]

    def _decompress(self, offset: int, magic: bytes, data: bytes, raw_size: int) -> bytes:
        if self.compression == ALGO_NONE:
            if len(data) != raw_size:
                raise self._corrupt(offset, f"{len(data)} data bytes, header says {raw_size}")
            return data
        if self.compression not in READABLE_COMPRESSION:
            raise HFileUnsupportedError(
                self.name, offset, f"{algorithm_label(self.compression)} compression "
                f"({magic.decode()} block); reads NONE, GZ, SNAPPY, LZ4, ZSTD and BROTLI")
        try:
            out = CODECS[self.compression].decompress(data, raw_size)
        except DecompressionErrors as exc:
            raise self._corrupt(offset, f"{magic.decode()} block: {exc}") from exc
        if len(out) != raw_size:
            raise self._corrupt(offset, f"{len(out)} bytes decompressed, header says {raw_size}")
        return out
