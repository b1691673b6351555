"""The block index as HBase 2.6 writes it (``HFileBlockIndex.BlockIndexWriter``,
``BlockIndexChunkImpl``, ``NoOpIndexBlockEncoder`` in branch-2.6), the mirror of the index
reading in ``fileinfo.py``.

Data block entries gather in a leaf chunk, written as an inline leaf index block
(``IDXLEAF2``) between the data blocks once its non-root size reaches ``max_chunk_size``
(``hfile.index.block.max.size``, 128 KiB). At close, a file whose entries all fit one chunk
has a single-level index: the chunk is the root. Otherwise the root lists the leaf blocks;
while it is larger than ``max_chunk_size`` and has more than ``min_entries``
(``hfile.index.block.min.entries``, 16) entries, a level of intermediate blocks
(``IDXINTE2``) is written under it. A multi-level root ends with the mid-key metadata.
"""

from __future__ import annotations

import bisect
import struct
from typing import NamedTuple

from hbase_migrate.hfile.block import INTERMEDIATE_INDEX, LEAF_INDEX, ROOT_INDEX
from hbase_migrate.hfile.blockwriter import BlockWriter, Written
from hbase_migrate.hfile.encoders import vlong

DEFAULT_MAX_CHUNK_SIZE = 128 * 1024
DEFAULT_MIN_ENTRIES = 16
_ENTRY = struct.Struct(">qi")


class Entry(NamedTuple):
    key: bytes
    offset: int
    size: int  # the block's on-disk size with header


class Chunk:
    """``BlockIndexChunkImpl``: entries and their sizes in both formats."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.sub_entries: list[int] = []  # leaf entries up to each root entry (multi-level)
        self.non_root_entries_size = 0
        self.root_size = 0

    def add(self, key: bytes, offset: int, size: int, sub_entries: int = -1) -> None:
        self.entries.append(Entry(key, offset, size))
        self.non_root_entries_size += 12 + len(key)
        self.root_size += 12 + len(vlong(len(key))) + len(key)
        if sub_entries != -1:
            self.sub_entries.append(sub_entries)

    def __len__(self) -> int:
        return len(self.entries)

    def non_root_size(self) -> int:
        return 4 + 4 * (len(self.entries) + 1) + self.non_root_entries_size

    def non_root(self) -> bytes:
        """Leaf and intermediate format: count, secondary index, entries."""
        marks, pos = [], 0
        for entry in self.entries:
            marks.append(pos)
            pos += 12 + len(entry.key)
        out = [struct.pack(f">i{len(marks) + 1}i", len(self.entries), *marks, pos)]
        out += [_ENTRY.pack(e.offset, e.size) + e.key for e in self.entries]
        return b"".join(out)

    def root(self) -> bytes:
        """Root format: offset, size and the key with its vint length, per entry."""
        return b"".join(_ENTRY.pack(e.offset, e.size) + vlong(len(e.key)) + e.key
                        for e in self.entries)

    def mid_key_metadata(self) -> bytes:
        """The leaf block holding the file's middle data block entry, and its place there."""
        total = self.sub_entries[-1]
        middle = (total - 1) // 2
        at = bisect.bisect_left(self.sub_entries, middle)
        if at < len(self.sub_entries) and self.sub_entries[at] == middle:
            at += 1
        before = self.sub_entries[at - 1] if at > 0 else 0
        entry = self.entries[at]
        return _ENTRY.pack(entry.offset, entry.size) + struct.pack(">i", middle - before)


class DataIndexWriter:
    """The data block index: ``add`` each data block, ``inline`` after each, ``finish``
    at close (the root's offset)."""

    def __init__(self, max_chunk_size: int = DEFAULT_MAX_CHUNK_SIZE,
                 min_entries: int = DEFAULT_MIN_ENTRIES) -> None:
        self.max_chunk_size, self.min_entries = max_chunk_size, min_entries
        self.root = Chunk()
        self.leaf: Chunk | None = Chunk()
        self.levels = 1
        self.total_entries = 0
        self.uncompressed_size = 0  # every index block's data, no headers

    def add(self, key: bytes, offset: int, size: int) -> None:
        assert self.leaf is not None, "index closed"
        self.leaf.add(key, offset, size)
        self.total_entries += 1

    def inline(self, blocks: BlockWriter, *, closing: bool) -> None:
        """Write the leaf chunk as a leaf index block when it is due."""
        leaf = self.leaf
        if leaf is None or not leaf.entries:
            return
        if closing and not self.root.entries:  # everything fits one chunk: the root
            self.root, self.leaf = leaf, None
            return
        if not closing and leaf.non_root_size() < self.max_chunk_size:
            return
        first = leaf.entries[0].key
        written = blocks.write(LEAF_INDEX, leaf.non_root())
        self.uncompressed_size += written.uncompressed_size
        self.levels = max(self.levels, 2)
        self.root.add(first, written.offset, written.on_disk_size, self.total_entries)
        self.leaf = Chunk()

    def finish(self, blocks: BlockWriter) -> int:
        """Write the intermediate levels and the root block; the root's offset."""
        mid_key = self.root.mid_key_metadata() if self.levels > 1 else b""
        if self.leaf is not None:
            while (self.root.root_size > self.max_chunk_size
                   and len(self.root) > self.min_entries and self.levels < 16):
                self.root = self._intermediate_level(blocks, self.root)
                self.levels += 1
        written = blocks.write(ROOT_INDEX, self.root.root() + mid_key)
        self.uncompressed_size += written.uncompressed_size
        return written.offset

    def _intermediate_level(self, blocks: BlockWriter, level: Chunk) -> Chunk:
        parent, chunk = Chunk(), Chunk()
        for i, entry in enumerate(level.entries):
            chunk.add(*entry)
            if i >= self.min_entries and chunk.root_size >= self.max_chunk_size:
                self._intermediate_block(blocks, parent, chunk)
                chunk = Chunk()
        if chunk.entries:
            self._intermediate_block(blocks, parent, chunk)
        return parent

    def _intermediate_block(self, blocks: BlockWriter, parent: Chunk, chunk: Chunk) -> None:
        written: Written = blocks.write(INTERMEDIATE_INDEX, chunk.non_root())
        self.uncompressed_size += written.uncompressed_size
        parent.add(chunk.entries[0].key, written.offset, written.on_disk_size)
