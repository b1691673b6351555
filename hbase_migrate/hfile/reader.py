"""Streaming reader of HFiles (v3, and v2 from minor 2), cell by cell, one block at a time;
v3 as HBase 1.x (minor 0), 2.x and 3.x write it.

How HBase opens a file (``HFileReaderImpl``, ``HFileInfo.initMetaAndIndex`` in branch-2.6):
the trailer (``trailer.py``), then the load-on-open section (root data index, meta index,
file info: ``fileinfo.py``). Cells are read by walking the blocks from the trailer's first
data block offset to the load-on-open section: data blocks with the leaf index and bloom
chunks written inline between them; after the last one, the last leaf, the upper index
levels and meta blocks. Each block is checked against its checksums (``block.py``), and the
walk against the index: with one index level every data block must be the next root entry;
with more, each leaf index block must list the data blocks walked since the one before. The
cell count must equal the trailer's ``entry_count``. Memory holds one block at a time (and
the root index, as HBase does).

A read from a row (``cells(start)``: a key range's) seeks through the data block index
(``HFileBlockIndex.BlockIndexReader``): at each level the entry taken is the last whose
key's row sorts before ``start`` (else the first), down from the root through the
intermediate and leaf index blocks to a data block, where the walk begins. No block before
it holds ``start``'s row: an entry's key sorts at or before its block's first cell and after
the previous block's last (``HFileWriterImpl.getMidpoint``: the first cell's key, or a
shorter one between the two). The walk from there is checked against the index entries
from the one taken on; the cell count is not checked (the cells before it are not read).

Read: encodings NONE, PREFIX (``prefix.py``), DIFF (``diff.py``), FAST_DIFF (``fastdiff.py``)
and ROW_INDEX_V1 (``rowindex.py``), compiled or not (``decoders.py``); compression NONE, GZ,
SNAPPY, LZ4, ZSTD and BROTLI; checksums NULL, CRC32 and CRC32C; tags, compressed or not
(``TAGS_COMPRESSED``: ``tagcompression.py``), mvcc.
Refused in one line naming the file, the block offset and what was found
(``HFileUnsupportedError``): other data block encodings, LZO, BZIP2, LZMA, encryption, HFile
v1 and v2 before minor 2. Bad bytes raise ``HFileCorruptError``.
"""

from __future__ import annotations

import bisect
import itertools
import os
from collections import deque
from collections.abc import Callable, Generator, Iterator, Sized
from typing import Any, BinaryIO, NamedTuple

from hbase_migrate.errors import HFileCorruptError, HFileUnsupportedError
from hbase_migrate.hfile.block import (
    DATA,
    ENCODED_DATA,
    FILE_INFO,
    INTERMEDIATE_INDEX,
    LEAF_INDEX,
    MINOR_VERSION_WITH_CHECKSUM,
    ROOT_INDEX,
    Block,
    BlockReader,
)
from hbase_migrate.hfile.decoders import NONE, REFERENCES, whole_block
from hbase_migrate.hfile.fileinfo import (
    IndexEntry,
    parse_file_info,
    parse_non_root_index,
    parse_root_index,
)
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.tagcompression import TAGS_COMPRESSED
from hbase_migrate.hfile.trailer import Trailer, read_trailer
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.protobuf import ProtobufError
from hbase_migrate.wal.source import open_source

# after the data blocks, before load-on-open: the last leaf, the upper index levels, meta
INLINE_BLOCKS = frozenset({b"BLMFBLK2", b"IDXINTE2", b"METABLKc"})
# DataBlockEncoding ids (``DataBlockEncoding``), as an encoded block's first two bytes
READABLE_ENCODINGS = frozenset({b"NONE", b"ROW_INDEX_V1", b"PREFIX", b"DIFF", b"FAST_DIFF"})
DATA_BLOCKS = frozenset({DATA, ENCODED_DATA})
# what ``data_blocks`` hands each data block to: its encoding, data, tags and mvcc flags
BlockIndexer = Callable[[int, bytes, bool, bool], Sized | None]
ENCODINGS = {0: "NONE", 2: "PREFIX", 3: "DIFF", 4: "FAST_DIFF", 6: "PREFIX_TREE", 7: "ROW_INDEX_V1"}


class HFileReader:
    """One HFile opened for reading: ``trailer``, ``file_info``, ``root_index``, ``cells()``.
    ``path``: a local path or a ``webhdfs://host:port/path`` URL."""

    def __init__(self, path: str | os.PathLike[str], name: str | None = None,
                 file: BinaryIO | None = None) -> None:
        self.name = name if name is not None else os.fspath(path)
        # a local path or a ``webhdfs://`` URL (the WAL reader's opener), or ``file`` opened
        # by the caller; closed by close()
        self._file: BinaryIO = open_source(os.fspath(path)) if file is None else file
        try:
            self._open()
        except BaseException:
            self._file.close()
            raise

    def _open(self) -> None:
        size = self._file.seek(0, os.SEEK_END)
        self._file.seek(max(0, size - 4096))
        self.trailer: Trailer = read_trailer(self.name, self._file.read(), size)
        t = self.trailer
        # v3 blocks always carry checksums, whatever the minor version (HBase 1.x writes
        # v3 minor 0; ``HFileReaderV3``/``HFileInfo`` build their context withHBaseCheckSum)
        minor = t.minor_version if t.major_version < 3 else max(t.minor_version,
                                                                MINOR_VERSION_WITH_CHECKSUM)
        self.blocks = BlockReader(self.name, self._file, minor, t.compression, size)
        root = self._load_block(t.load_on_open_offset, ROOT_INDEX)
        info = self._load_block(t.file_info_offset, FILE_INFO)
        try:
            self.file_info: dict[bytes, bytes] = parse_file_info(info.data)
            self.root_index: list[IndexEntry] = parse_root_index(root.data, t.data_index_count)
        except (ProtobufError, CellCorruptError) as exc:
            raise HFileCorruptError(self.name, info.offset, f"load-on-open section: {exc}") from exc
        self._info_offset = info.offset
        self.block_offset = t.first_data_block_offset  # of the block cells() reads now
        self.tags = b"hfile.MAX_TAGS_LEN" in self.file_info
        # ``Bytes.toBoolean`` of the value, read only where tags are (``HFileInfo``)
        compressed = self.file_info.get(TAGS_COMPRESSED, b"\x00") if self.tags else b"\x00"
        if len(compressed) != 1:
            raise HFileCorruptError(self.name, info.offset, f"file info {TAGS_COMPRESSED!r} "
                                    f"of {len(compressed)} bytes, expected a boolean")
        self.compressed_tags = compressed != b"\x00"
        version = self.file_info.get(b"KEY_VALUE_VERSION")
        self.mvcc = version is not None and int.from_bytes(version, "big") == 1

    def _load_block(self, offset: int, magic: bytes) -> Block:
        block = self.blocks.read(offset, self.trailer.offset)
        if block.magic != magic:
            raise HFileCorruptError(self.name, offset, f"{block.magic!r} block, expected {magic!r}")
        return block

    def __enter__(self) -> HFileReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def cells(self, start: bytes = b"") -> Iterator[StoreCell]:
        """Every cell of the file in file order, with its mvcc (0 when the file keeps none);
        with ``start``, those of rows at or after it: the walk begins at the data block the
        index leads ``start`` to, whose cells of earlier rows are dropped here."""
        for block in self.cells_by_block(start):
            yield from block

    def cells_by_block(self, start: bytes = b"") -> Iterator[list[StoreCell]]:
        """``cells(start)`` a data block at a time, each block's cells in a list (a block the
        compiled decoders leave to the reference: a list per cell, each handed out as it is
        decoded), read when the one before is taken; ``block_offset`` is the block's."""
        blocks: Iterator[list[StoreCell]] = self._blocks(start, None)
        return blocks

    def data_blocks(self, start: bytes, index: BlockIndexer) -> Iterator[Sized | None]:
        """``cells_by_block(start)``'s walk, each data block handed to ``index`` (its
        encoding, its data after the encoding id, the file's tags and mvcc flags) instead
        of decoded: what it gives, a block at a time; None where it declines, and the walk
        goes no further. The cells of rows before ``start`` are the caller's to drop; the
        cell count is checked against the trailer's, ``index``'s results counted by their
        length."""
        blocks: Iterator[Sized | None] = self._blocks(start, index)
        return blocks

    def _blocks(self, start: bytes, index: BlockIndexer | None) -> Iterator[Any]:
        self._check_readable()
        t = self.trailer
        if not t.entry_count:
            return
        if start:
            seek = self._seek(start)
            checker = _IndexCheck(self.name, t.data_index_levels, self.root_index, seek)
            yield from self._walk(seek.entry.offset, checker, start, index)
            return
        checker = _IndexCheck(self.name, t.data_index_levels, self.root_index)
        count = yield from self._walk(t.first_data_block_offset, checker, b"", index)
        if count is not None and count != t.entry_count:
            raise HFileCorruptError(self.name, t.offset,
                                    f"{count} cells read, the trailer counts {t.entry_count}")

    def block_rows(self) -> list[bytes]:
        """The row of each data block's index key, in file order, from the block index alone
        (its levels below the root read, no data block decoded): where a plan may cut the
        file's rows without reading them. HBase's writer shortens the key, so the row is
        at or before the block's first row and not before the previous block's last."""
        t = self.trailer
        entries = self.root_index if t.entry_count else []
        for level in range(2, t.data_index_levels + 1):
            magic = LEAF_INDEX if level == t.data_index_levels else INTERMEDIATE_INDEX
            below: list[IndexEntry] = []
            for child in entries:
                block = self.blocks.read(child.offset, t.load_on_open_offset)
                if block.magic != magic:
                    raise HFileCorruptError(self.name, child.offset, f"{block.magic!r} block, "
                                            f"the index leads to {magic!r}")
                below += _index_entries(self.name, block)
            entries = below
        try:
            return [_key_row(e.key) for e in entries]
        except CellCorruptError as exc:
            raise HFileCorruptError(self.name, t.load_on_open_offset,
                                    f"index key: {exc}") from exc

    def _walk(self, offset: int, checker: _IndexCheck, start: bytes,
              index: BlockIndexer | None = None) -> Generator[Any, None, int | None]:
        """The cells of the data blocks from ``offset`` on, those of rows before ``start``
        dropped from the first; returns the cells decoded. With ``index``, what it gives
        of each data block (``data_blocks``); None returned once it declines one."""
        t = self.trailer
        count = 0
        while offset < t.load_on_open_offset:
            block = self.blocks.read(offset, t.load_on_open_offset)
            self.block_offset = offset
            if block.magic in DATA_BLOCKS and offset <= t.last_data_block_offset:
                encoding, data = self._encoding(block)
                checker.data_block(offset)
                if index is not None:
                    indexed = index(encoding, data, self.tags, self.mvcc)
                    yield indexed
                    if indexed is None:
                        return None  # declined: the caller reads the file otherwise
                    count += len(indexed)
                    offset += block.on_disk_size
                    continue
                whole = whole_block(encoding, data, tags=self.tags, mvcc=self.mvcc,
                                    compressed_tags=self.compressed_tags)
                if whole is None:
                    count += yield from self._block_cells(block.offset, encoding, data, start)
                else:
                    count += len(whole)
                    yield _from_row(whole, start) if start else whole
                start = b""  # the blocks after a seek's first hold rows >= start only
            elif block.magic == LEAF_INDEX:
                checker.leaf_block(block)
            elif block.magic not in INLINE_BLOCKS:
                raise HFileCorruptError(
                    self.name, offset, f"{block.magic!r} block among the data blocks")
            offset += block.on_disk_size
        checker.finish(t.offset)
        return count

    def _seek(self, start: bytes) -> _Seek:
        """The data block a read from row ``start`` begins at, found down the index."""
        t = self.trailer
        entries, at, leaf = self.root_index, t.load_on_open_offset, None
        for level in range(2, t.data_index_levels + 1):  # the levels below the root
            child = entries[self._before(entries, start, at)]
            magic = LEAF_INDEX if level == t.data_index_levels else INTERMEDIATE_INDEX
            block = self.blocks.read(child.offset, t.load_on_open_offset)
            if block.magic != magic:
                raise HFileCorruptError(self.name, child.offset, f"{block.magic!r} block, the "
                                        f"index leads to {magic!r}")
            entries, at, leaf = _index_entries(self.name, block), child.offset, child.offset
        position = self._before(entries, start, at)
        entry = entries[position]
        if not t.first_data_block_offset <= entry.offset <= t.last_data_block_offset:
            raise HFileCorruptError(self.name, at, f"index entry of data block {entry.offset}, "
                                    "outside the data blocks")
        return _Seek(entry, position, leaf)

    def _before(self, entries: list[IndexEntry], start: bytes, at: int) -> int:
        """The position of the last of ``entries`` (the index block's at ``at``) whose key's
        row sorts before ``start``, else 0."""
        if not entries:
            raise HFileCorruptError(self.name, at, "index block without entries")
        try:
            found = bisect.bisect_left(entries, start, key=lambda e: _key_row(e.key))
        except CellCorruptError as exc:
            raise HFileCorruptError(self.name, at, f"index key: {exc}") from exc
        return max(found - 1, 0)

    def _check_readable(self) -> None:
        """Refuse, before any cell, cells stored in a form not read here (the trailer and
        file info of such a file are still read)."""
        encoding = self.file_info.get(b"DATA_BLOCK_ENCODING", b"NONE")
        if encoding not in READABLE_ENCODINGS:
            raise HFileUnsupportedError(self.name, self._info_offset,
                                        f"data block encoding {encoding.decode(errors='replace')}")

    def _encoding(self, block: Block) -> tuple[int, bytes]:
        """A data block's encoding and its data after the encoding id."""
        if block.magic == DATA:
            return NONE, block.data
        code = int.from_bytes(block.data[:2], "big")
        if code == NONE or code not in REFERENCES:
            raise HFileUnsupportedError(self.name, block.offset, "data block encoding "
                                        f"{ENCODINGS.get(code, f'#{code}')}")
        return code, block.data[2:]

    def _block_cells(self, offset: int, encoding: int, data: bytes, start: bytes
                     ) -> Generator[list[StoreCell], None, int]:
        """The reference's cells of a block, those of rows before ``start`` decoded but not
        handed out; its errors name the file and block."""
        count = 0
        try:
            for cell in REFERENCES[encoding](data, tags=self.tags, mvcc=self.mvcc,
                                             compressed_tags=self.compressed_tags):
                count += 1
                if cell.cell.row >= start:
                    yield [cell]
        except CellCorruptError as exc:
            raise HFileCorruptError(self.name, offset, f"data block: {exc}") from exc
        return count


def _from_row(cells: list[StoreCell], start: bytes) -> list[StoreCell]:
    """A block's cells from the first of row ``start`` or after."""
    at = 0
    while at < len(cells) and cells[at].cell.row < start:
        at += 1
    return cells[at:]


def _key_row(key: bytes) -> bytes:
    """The row of an index entry's key (a KeyValue key: int16 row length, row, ...)."""
    end = 2 + int.from_bytes(key[:2], "big")
    if len(key) < end:
        raise CellCorruptError(f"key of {len(key)} bytes holds no row of {end - 2}")
    return key[2:end]


def _index_entries(name: str, block: Block) -> list[IndexEntry]:
    """The entries of a leaf or intermediate index block."""
    try:
        return parse_non_root_index(block.data)
    except CellCorruptError as exc:
        kind = "leaf" if block.magic == LEAF_INDEX else "intermediate"
        raise HFileCorruptError(name, block.offset, f"{kind} index: {exc}") from exc


class _Seek(NamedTuple):
    """Where a read from a row begins: the data block's index entry, its position among
    its index block's entries, and that block's offset when a leaf (None: the root)."""

    entry: IndexEntry
    position: int
    leaf: int | None


class _IndexCheck:
    """The data blocks walked, matched with the index as the walk goes (after a seek, with
    its entries from the seek's on)."""

    def __init__(self, name: str, levels: int, root: list[IndexEntry],
                 seek: _Seek | None = None) -> None:
        self.name, self.levels = name, levels
        first = 0 if seek is None else seek.position
        self.expected = itertools.islice(root, first, None) if levels == 1 else None
        self.seek = seek if levels > 1 else None  # the leaf block to come first
        self.pending: deque[int] = deque()

    def data_block(self, offset: int) -> None:
        if self.expected is None:
            self.pending.append(offset)
            return
        entry = next(self.expected, None)
        if entry is None or entry.offset != offset:
            raise HFileCorruptError(self.name, offset, f"data block not in the root index (next "
                                    f"entry: {None if entry is None else entry.offset})")

    def leaf_block(self, block: Block) -> None:
        entries = _index_entries(self.name, block)
        if self.seek is not None:  # the leaf the seek went through: from its entry on
            if block.offset != self.seek.leaf:
                raise HFileCorruptError(self.name, block.offset, "leaf index block, where the "
                                        f"index led to the one at {self.seek.leaf}")
            entries, self.seek = entries[self.seek.position:], None
        for entry in entries:
            walked = self.pending.popleft() if self.pending else None
            if walked != entry.offset:
                raise HFileCorruptError(self.name, block.offset,
                                        f"leaf index lists block {entry.offset}, walked {walked}")

    def finish(self, trailer_offset: int) -> None:
        if self.expected is not None and next(self.expected, None) is not None:
            raise HFileCorruptError(self.name, trailer_offset, "root index lists more data blocks")
        if self.pending:
            raise HFileCorruptError(self.name, self.pending[0],
                                    "data block in no leaf index block before the trailer")
