"""HBase's block checksums (``ChecksumUtil``, ``ChecksumType`` in branch-2.6).

``ChecksumType`` codes: 0 NULL (none), 1 CRC32, 2 CRC32C (the default,
``hbase.hstore.checksum.algorithm``). ``ChecksumUtil.validateChecksum``: the checksums cover
the block's header and on-disk data (``onDiskDataSizeWithHeader`` bytes) in chunks of
``bytesPerChecksum`` bytes (the last one shorter); each chunk's checksum is a 4-byte
big-endian int, stored one after the other after the data (``numChunks`` = ceil(size /
bytesPerChecksum)), as Hadoop's ``DataChecksum`` writes them.

CRC32C (Castagnoli, reflected polynomial 0x82F63B78): the compiled copy (``_crc32c.pyx``,
built by ``make setup``) or the pure-Python reference here (``CRC32C.use`` switches).
"""

from __future__ import annotations

import struct
import zlib

from hbase_migrate.compiled import Choice

CHECKSUM_NULL = 0
CHECKSUM_CRC32 = 1
CHECKSUM_CRC32C = 2
CHECKSUM_NAMES = {CHECKSUM_NULL: "NULL", CHECKSUM_CRC32: "CRC32", CHECKSUM_CRC32C: "CRC32C"}
CHECKSUM_SIZE = 4


def _table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return tuple(table)


_CRC32C_TABLE = _table()


CRC32C = Choice("hbase_migrate.hfile._crc32c", "the compiled CRC32C is")


def crc32c(data: bytes | memoryview) -> int:
    """CRC32C of ``data`` (initial value and final xor 0xFFFFFFFF)."""
    compiled = CRC32C.compiled()
    if compiled is not None:
        result: int = compiled.crc32c(data)
        return result
    return crc32c_python(data)


def crc32c_python(data: bytes | memoryview) -> int:
    """The pure-Python reference of ``crc32c``."""
    crc = 0xFFFFFFFF
    table = _CRC32C_TABLE
    for byte in bytes(data):
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def num_chunks(size: int, bytes_per_checksum: int) -> int:
    """``ChecksumUtil.numChunks``: checksum chunks covering ``size`` bytes."""
    return -(-size // bytes_per_checksum)


def first_bad_chunk(data: bytes, sums: bytes, kind: int, bytes_per_checksum: int) -> int | None:
    """The index of the first chunk of ``data`` whose checksum in ``sums`` differs, or None."""
    compute = crc32c if kind == CHECKSUM_CRC32C else zlib.crc32
    view = memoryview(data)
    for index in range(num_chunks(len(data), bytes_per_checksum)):
        chunk = view[index * bytes_per_checksum : (index + 1) * bytes_per_checksum]
        (stored,) = struct.unpack_from(">I", sums, index * CHECKSUM_SIZE)
        if compute(chunk) != stored:
            return index
    return None
