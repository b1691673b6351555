"""A read position in an encoded data block, shared by the DIFF and FAST_DIFF decoders:
bytes taken with a bound check, ``cint`` lengths (``prefix.py``) and the lengths that open
each of their cells (``[cint keyLen] [cint valueLen] cint common``, each length sent only
when its flag says it differs from the previous cell's)."""

from __future__ import annotations

from hbase_migrate.hfile.keyvalue import StoreCell, parse_key
from hbase_migrate.hfile.prefix import encoded_tail
from hbase_migrate.hfile.tagcompression import block_dictionary
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import ProtobufError, decode_varint32


class Cursor:
    """``data`` read from ``pos``; errors name ``what`` and the block byte (after the
    2-byte encoding id). ``compressed_tags``: the block's tags are dictionary-compressed
    (``tagcompression.py``), with one dictionary for the block."""

    def __init__(self, data: bytes, pos: int, what: str, *, compressed_tags: bool = False
                 ) -> None:
        self.data, self.pos, self.what = data, pos, what
        self.tag_dict = block_dictionary(compressed_tags)
        self.key_len = self.value_len = self.unencoded = 0

    def more(self) -> bool:
        return self.pos < len(self.data)

    def take(self, count: int) -> bytes:
        if count < 0 or self.pos + count > len(self.data):
            raise CellCorruptError(f"{self.what} cell runs past the block at byte {self.pos + 2}")
        self.pos += count
        return self.data[self.pos - count : self.pos]

    def cint(self) -> int:
        try:
            value, self.pos = decode_varint32(self.data, self.pos, len(self.data))
        except ProtobufError as exc:
            where = f"{self.what} cell length at byte {self.pos + 2}"
            raise CellCorruptError(f"{where}: {exc}") from exc
        return value

    def lengths(self, flag: int, same_key_length: int, same_value_length: int) -> int:
        """Read a cell's key and value lengths where ``flag`` sends them; the common prefix."""
        if not flag & same_key_length:
            self.key_len = self.cint()
        if not flag & same_value_length:
            self.value_len = self.cint()
        return self.cint()

    def cell(self, key: bytes, value: bytes, *, tags: bool, mvcc: bool) -> StoreCell:
        """The cell of a rebuilt ``key`` and ``value`` once its tags and mvcc are read; adds
        to ``unencoded`` the bytes its encoder counted for it (``internalEncode``)."""
        cell_tags, version, counted, self.pos = encoded_tail(self.data, self.pos, tags=tags,
                                                             mvcc=mvcc, tag_dict=self.tag_dict)
        if len(key) != self.key_len:
            raise CellCorruptError(f"{self.what} key of {len(key)} bytes, expected {self.key_len}")
        row, family, qualifier, timestamp, code = parse_key(key)
        stored = StoreCell(Cell(row, family, qualifier, timestamp, code, value, cell_tags), version)
        self.unencoded += 8 + self.key_len + len(value) + counted
        return stored

    def check_unencoded(self, size: int) -> None:
        """The block's unencoded size must be what its cells add up to."""
        if self.unencoded != size:
            raise CellCorruptError(f"{self.what} cells of {self.unencoded} bytes unencoded, "
                                   f"the block says {size}")
