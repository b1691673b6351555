"""Reference (half) files a split leaves in its daughters, and HFileLink names.

A split writes in each daughter's store, for each file of the parent, a reference file
``<hfile>.<parent encoded region>`` (``HRegionFileSystem.splitStoreFile``): the top half
(rows at or after the split row) or the bottom half (rows before it) of the parent's file.
Its content (``Reference.toByteArray``/``read`` in branch-2.6) is ``PBUF`` and an
``FSProtos.Reference`` (splitkey 1: the key of ``KeyValueUtil.createFirstOnRow(splitRow)``,
range 2: TOP 0 or BOTTOM 1); files from before protobuf hold a Writable: a boolean (true:
top) and the key as a vint length and bytes. A snapshot's manifest carries the same message
as the store file's ``reference`` field. ``HalfStoreFileReader`` then returns the cells at
or after that first-on-row key (top) or before it (bottom): rows compared alone decide.
A top half's sequence id is the file's plus one (``HStoreFile.open``).

An HFileLink (``[<ns>=]<table>=<region>-<hfile>``, ``HFileLink.LINK_NAME_PATTERN``) names
another table's file; ``snapshot/manifest.py`` locates it (live, then under ``archive/``).
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.errors import HFileCorruptError
from hbase_migrate.hfile.keyvalue import read_vlong
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.protobuf import Message, ProtobufError

PB_MAGIC = b"PBUF"
TOP, BOTTOM = 0, 1  # FSProtos.Reference.Range


class Half(NamedTuple):
    """Which half of a parent's file a daughter reads: rows at or after ``split_row``
    (``top``) or before it."""

    split_row: bytes
    top: bool

    def holds(self, row: bytes) -> bool:
        return (row >= self.split_row) if self.top else (row < self.split_row)


def parse_reference_message(data: bytes, where: str) -> Half:
    """An ``FSProtos.Reference`` message (a manifest's or a reference file's)."""
    try:
        message = Message(data, f"{where} (Reference)")
        key = message.req_bytes(1, "splitkey")
        side = message.req_int(2, "range")
    except ProtobufError as exc:
        raise HFileCorruptError(where, 0, f"not a reference: {exc}") from None
    if side not in (TOP, BOTTOM):
        raise HFileCorruptError(where, 0, f"reference range {side}, expected TOP 0 or BOTTOM 1")
    return Half(_split_row(key, where), side == TOP)


def parse_reference_file(data: bytes, where: str) -> Half:
    """A reference file's content, protobuf or the Writable of older releases."""
    if data.startswith(PB_MAGIC):
        return parse_reference_message(data[len(PB_MAGIC):], where)
    if not data or data[0] > 1:
        raise HFileCorruptError(where, 0, "neither PBUF nor a Writable reference (first byte "
                                f"{data[:1].hex() or 'none'})")
    try:
        length, at = read_vlong(data, 1, len(data))
    except CellCorruptError as exc:
        raise HFileCorruptError(where, 1, f"reference split key length: {exc}") from None
    if length < 0 or at + length != len(data):
        raise HFileCorruptError(where, 1, f"reference split key of {length} bytes in a file "
                                f"of {len(data)}")
    return Half(_split_row(data[at:], where), data[0] == 1)


def _split_row(key: bytes, where: str) -> bytes:
    """The row of a first-on-row KeyValue key (int16 row length, row, ...)."""
    if len(key) < 2 or 2 + int.from_bytes(key[:2], "big") > len(key):
        raise HFileCorruptError(where, 0, f"reference split key of {len(key)} bytes holds no "
                                "row")
    return key[2 : 2 + int.from_bytes(key[:2], "big")]
