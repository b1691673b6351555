"""Blocks as HBase 2.6 writes them (``HFileBlock.Writer`` in branch-2.6), the mirror of
``block.py``: the data compressed with the file's algorithm (every block type, the header
never), the 33-byte header, then the checksums of header and on-disk data in chunks of
``bytes_per_checksum`` (``ChecksumUtil.generateChecksums``). The header's previous-block
offset is that of the last block of the same type written, -1 for the first.
"""

from __future__ import annotations

import struct
import zlib
from typing import BinaryIO, NamedTuple

from hbase_migrate.hfile.block import HEADER_SIZE
from hbase_migrate.hfile.checksum import (
    CHECKSUM_CRC32,
    CHECKSUM_CRC32C,
    CHECKSUM_SIZE,
    crc32c,
    num_chunks,
)
from hbase_migrate.wal.codecs import ALGO_NONE, CODECS

_HEADER = struct.Struct(">8siiqbii")
DEFAULT_BYTES_PER_CHECKSUM = 16 * 1024  # hbase.hstore.bytes.per.checksum


class Written(NamedTuple):
    offset: int
    on_disk_size: int  # header, data and checksums
    uncompressed_size: int  # the data without header, before compression


def checksums(data: bytes, kind: int, per_chunk: int) -> bytes:
    """The CRC32 or CRC32C checksums of ``data`` (header and on-disk data), one 4-byte int
    a chunk."""
    compute = crc32c if kind == CHECKSUM_CRC32C else zlib.crc32
    view = memoryview(data)
    return b"".join(
        (compute(view[i * per_chunk : (i + 1) * per_chunk]) & 0xFFFFFFFF).to_bytes(4, "big")
        for i in range(num_chunks(len(data), per_chunk)))


class BlockWriter:
    """Writes blocks one after the other to ``out`` from ``offset``."""

    def __init__(self, out: BinaryIO, *, compression: int = ALGO_NONE,
                 checksum: int = CHECKSUM_CRC32C,
                 bytes_per_checksum: int = DEFAULT_BYTES_PER_CHECKSUM) -> None:
        if checksum not in (CHECKSUM_CRC32, CHECKSUM_CRC32C):  # NULL: HBase leaves zeros
            raise ValueError(f"checksum type {checksum} is not CRC32 or CRC32C")
        if bytes_per_checksum < HEADER_SIZE:
            raise ValueError(f"bytes per checksum {bytes_per_checksum} is below {HEADER_SIZE}")
        self.out = out
        self.offset = 0
        self.compress = CODECS[compression].compress
        self.compression = compression
        self.checksum, self.per_chunk = checksum, bytes_per_checksum
        self._previous: dict[bytes, int] = {}
        self.uncompressed_total = 0  # every block's uncompressed size with its header

    def write(self, magic: bytes, data: bytes) -> Written:
        """Write one block of ``data`` (uncompressed, without header)."""
        on_disk = data if self.compression == ALGO_NONE else self.compress(data)
        data_with_header = HEADER_SIZE + len(on_disk)
        sums = num_chunks(data_with_header, self.per_chunk) * CHECKSUM_SIZE
        header = _HEADER.pack(magic, len(on_disk) + sums, len(data),
                              self._previous.get(magic, -1), self.checksum, self.per_chunk,
                              data_with_header)
        body = header + on_disk
        block = body + checksums(body, self.checksum, self.per_chunk)
        self.out.write(block)
        written = Written(self.offset, len(block), len(data))
        self._previous[magic] = self.offset
        self.offset += len(block)
        self.uncompressed_total += HEADER_SIZE + len(data)
        return written
