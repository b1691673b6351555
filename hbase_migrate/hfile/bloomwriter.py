"""Compound Bloom filters as HBase 2.6 writes them (``CompoundBloomFilterWriter``,
``BloomFilterChunk``, ``BloomFilterUtil``, ``MurmurHash``, ``RowBloomHashKey``,
``RowColBloomHashKey`` in branch-2.6).

Keys (ROW: the row; ROWCOL: the key of ``createFirstOnRowCol(cell)``, which leaves the
family out: row length, row, a zero family length, qualifier, the latest timestamp and the
Maximum type; also each chunk's first key and the file's ``LAST_BLOOM_KEY``) go into chunks
of 128 KiB (``io.storefile.bloom.block.size``) sized for an error rate of 1 %
(``io.storefile.bloom.error.rate``, a float; ROWCOL's per-lookup rate is
``1 - sqrt(1 - err)``). Each key sets ``hash_count`` bits at ``|h1 + i * h2| mod bits``
(int arithmetic), ``h1`` the key's hash with seed 0 and ``h2`` with seed ``h1``, by
``hbase.hash.type`` (murmur, HBase's MurmurHash). A full chunk is written inline
(``BLMFBLK2``) after the next data block; the last one at close, first folded in halves
while it stays under half full (``compactBloom``). The meta block (``BLMFMET2``, or
``DFBLMET2`` for the delete-family filter) in the load-on-open section holds the totals and
a single-level index of the chunks, each by its first key.

A chunk sets its bits compiled (``_writer.bloom_add``) when the writer hands it the
compiled module, else with the pure-Python reference here (``murmur_hash``,
``BloomChunk.add_reference``).
"""

from __future__ import annotations

import math
import struct
from types import ModuleType

from hbase_migrate.hfile.blockwriter import BlockWriter
from hbase_migrate.hfile.encoders import vlong
from hbase_migrate.hfile.indexwriter import Chunk

BLOOM_CHUNK = b"BLMFBLK2"
GENERAL_BLOOM_META = b"BLMFMET2"
DELETE_FAMILY_BLOOM_META = b"DFBLMET2"
ROW, ROWCOL = "ROW", "ROWCOL"
MURMUR_HASH = 1
VERSION = 3
DEFAULT_CHUNK_SIZE = 128 * 1024
MAX_FOLD = 7
_ERROR_RATE = struct.unpack(">f", struct.pack(">f", 0.01))[0]  # the float setting
_LOG2_SQUARED = math.log(2) * math.log(2)
_M32 = 0xFFFFFFFF
_SIGNED = tuple(b - 256 if b > 127 else b for b in range(256))  # Java's byte
_LATEST_MAXIMUM = struct.pack(">qB", 0x7FFFFFFFFFFFFFFF, 255)
ROWCOL_COMPARATOR = b"org.apache.hadoop.hbase.CellComparatorImpl"


def murmur_hash(data: bytes, seed: int) -> int:
    """HBase's ``MurmurHash.hash`` (a signed int; the tail bytes sign-extended as Java's)."""
    m = 0x5BD1E995
    length = len(data)
    h = (seed ^ length) & _M32
    whole = length >> 2
    for (word,) in struct.iter_unpack("<I", data[: whole * 4]):
        k = (word * m) & _M32
        k = ((k ^ (k >> 24)) * m) & _M32
        h = ((h * m) & _M32) ^ k
    left = length & 3
    if left:
        at = whole * 4
        if left >= 3:
            h ^= _SIGNED[data[at + 2]] << 16 & _M32
        if left >= 2:
            h ^= _SIGNED[data[at + 1]] << 8 & _M32
        h ^= _SIGNED[data[at]] & _M32
        h = (h * m) & _M32
    h ^= h >> 13
    h = (h * m) & _M32
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def rowcol_key(row: bytes, qualifier: bytes) -> bytes:
    """The bytes a ROWCOL filter hashes for a cell (``RowColBloomHashKey``)."""
    return len(row).to_bytes(2, "big") + row + b"\x00" + qualifier + _LATEST_MAXIMUM


def foldable_byte_size(bit_size: int, fold: int) -> int:
    """``BloomFilterUtil.computeFoldableByteSize``."""
    size = (bit_size + 7) // 8
    if size & ((1 << fold) - 1):
        size = ((size >> fold) + 1) << fold
    return size


def _float(value: float) -> float:
    return float(struct.unpack(">f", struct.pack(">f", value))[0])


class BloomChunk:
    """``BloomFilterChunk``: a bit array sized for its ``max_keys``."""

    def __init__(self, byte_size: int, hash_count: int, max_keys: int,
                 compiled: ModuleType | None = None) -> None:
        self.byte_size, self.hash_count, self.max_keys = byte_size, hash_count, max_keys
        self.bits = bytearray(byte_size)
        self.keys = 0
        self.compiled = compiled  # the writer's compiled loop (``_writer.pyx``) or None

    @classmethod
    def by_size(cls, byte_size_hint: int, error_rate: float,
                compiled: ModuleType | None = None) -> BloomChunk:
        """``BloomFilterUtil.createBySize``."""
        byte_size = foldable_byte_size(byte_size_hint * 8, MAX_FOLD)
        bit_size = byte_size * 8
        ideal = int(bit_size * (_LOG2_SQUARED / -math.log(error_rate)))
        hash_count = math.ceil(math.log(2) * (bit_size // ideal))
        max_keys = int(-bit_size * 1.0 / hash_count
                       * math.log(1 - math.exp(math.log(error_rate) / hash_count)))
        return cls(byte_size, hash_count, max_keys, compiled)

    def add(self, key: bytes) -> None:
        if self.compiled is not None:
            self.compiled.bloom_add(self.bits, self.byte_size * 8, self.hash_count, key)
            self.keys += 1
        else:
            self.add_reference(key)

    def add_reference(self, key: bytes) -> None:
        """The pure-Python reference of ``add``."""
        h1 = murmur_hash(key, 0)
        h2 = murmur_hash(key, h1)
        bits, size = self.bits, self.byte_size * 8
        v = h1 & _M32
        for _ in range(self.hash_count):  # |h1 + i * h2| in int arithmetic, mod the bits
            at = ((1 << 32) - v if v & 0x80000000 else v) % size
            bits[at >> 3] |= 1 << (at & 7)
            v = (v + h2) & _M32
        self.keys += 1

    def compact(self) -> None:
        """Fold in halves while the chunk stays under half full (``compactBloom``)."""
        if not self.keys:
            return
        pieces, size, max_keys = 1, self.byte_size, self.max_keys
        while size & 1 == 0 and max_keys > self.keys << 1:
            pieces <<= 1
            size >>= 1
            max_keys >>= 1
        if pieces > 1:
            folded = bytearray(self.bits[:size])
            for p in range(1, pieces):
                piece = self.bits[p * size : (p + 1) * size]
                for i in range(size):
                    folded[i] |= piece[i]
            self.bits, self.byte_size, self.max_keys = folded, size, max_keys


class BloomWriter:
    """One compound Bloom filter of a file: ``add`` keys in order, ``inline`` after each
    data block and at close, ``meta()`` for the load-on-open section."""

    def __init__(self, kind: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE,
                 meta_magic: bytes = GENERAL_BLOOM_META,
                 compiled: ModuleType | None = None) -> None:
        self.kind, self.meta_magic = kind, meta_magic
        self.compiled = compiled  # the writer's compiled loop, which sets a chunk's bits
        error = _ERROR_RATE if kind == ROW else _float(1 - math.sqrt(1 - _ERROR_RATE))
        self.error_rate = error
        self.chunk_size = foldable_byte_size(chunk_size * 8, MAX_FOLD)
        self.chunk: BloomChunk | None = None
        self.previous: BloomChunk | None = None
        self.first_key = b""
        self.ready: list[tuple[bytes, BloomChunk]] = []
        self.index = Chunk()
        self.chunks = self.keys = self.max_keys = self.byte_size = 0

    def add(self, hashed: bytes, first_key: bytes) -> None:
        """Add a key: ``hashed`` the bytes hashed, ``first_key`` what the chunk index holds
        when it opens a chunk."""
        self._enqueue(closing=False)
        if self.chunk is None:
            self.first_key = first_key
            prev = self.previous
            self.chunk = (BloomChunk.by_size(self.chunk_size, self.error_rate, self.compiled)
                          if prev is None else BloomChunk(prev.byte_size, prev.hash_count,
                                                          prev.max_keys, self.compiled))
            self.chunks += 1
        self.chunk.add(hashed)
        self.keys += 1

    def _enqueue(self, *, closing: bool) -> None:
        chunk = self.chunk
        if chunk is None or (chunk.keys < chunk.max_keys and not closing):
            return
        self.ready.append((self.first_key, chunk))
        chunk.compact()
        self.max_keys += chunk.max_keys
        self.byte_size += chunk.byte_size
        self.previous, self.chunk = chunk, None

    def inline(self, blocks: BlockWriter, *, closing: bool) -> None:
        self._enqueue(closing=closing)
        while self.ready:
            first, chunk = self.ready.pop(0)
            written = blocks.write(BLOOM_CHUNK, bytes(chunk.bits))
            self.index.add(first, written.offset, written.on_disk_size)

    def meta(self) -> bytes:
        """The meta block's data (``CompoundBloomFilterWriter.MetaWriter``)."""
        assert self.previous is not None, "a Bloom filter without keys has no meta block"
        comparator = ROWCOL_COMPARATOR if self.kind == ROWCOL else b""
        return (struct.pack(">iqiiqqi", VERSION, self.byte_size, self.previous.hash_count,
                            MURMUR_HASH, self.keys, self.max_keys, self.chunks)
                + vlong(len(comparator)) + comparator + self.index.root())
