"""The CDC message: one per row mutation, i.e. per (WAL entry, row).

Every cell of one row in one WAL entry, in WAL order, makes one message (an entry can hold
several rows: a batch write). Its key is the source table's name, a NUL byte and the row's
raw bytes, so one row's messages land in one partition in order. Its value is JSON::

    {"table": "ns:orders", "row": "r\\x00001",
     "file": "rs1%2C16020%2C1.1700000000000", "offset": 1234,
     "entry": 7, "sequence": 42, "write_time": 1700000000123,
     "cells": [{"row", "family", "qualifier", "timestamp", "type", "value", "tags"?}],
     "row_image": [{"family", "qualifier", "timestamp", "value"}]}

Byte strings (row, family, qualifier, value, tag values) are written as HBase's
``Bytes.toStringBinary`` prints them, as ``hbase-migrate wal dump --json --values`` does:
printable ASCII as itself except the backslash, every other byte as ``\\xHH``; HBase's
``Bytes.toBytesBinary`` (here :func:`hbase_migrate.bytesutil.to_bytes_binary`) turns them
back into the exact bytes. ``type`` is ``Put``, ``Delete``, ``DeleteColumn``,
``DeleteFamily`` or ``DeleteFamilyVersion``; each cell carries its own timestamp.
``row_image`` (only when configured) is the row as the target returned it right after this
edit was applied: the newest visible version of each column.

``file`` is the WAL file's name (it holds its region server's name and its creation time),
not its path: HBase moves a WAL from ``WALs/<server>/`` to a dead server's ``-splitting``
folder and to ``oldWALs/`` under the same name, so a message sent again from the file's new
place is the same message. Delivery is at least once: a rerun after a crash sends again what
the broker had not acknowledged as a whole. ``(file, offset, row)`` identifies a message;
consumers that need exactly-once de-duplicate on it.
"""

from __future__ import annotations

import codecs
import json
import posixpath
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.replay.mutations import RowMutation, WalPosition
from hbase_migrate.wal.dump import cell_json
from hbase_migrate.wal.model import METAFAMILY, Cell, type_name


class RowEdit(NamedTuple):
    """The cells of one row in one WAL entry: one message."""

    table: str  # the source table
    row: bytes
    position: WalPosition
    cells: tuple[Cell, ...]


def row_edits(table: str, mutations: Sequence[RowMutation]) -> Iterator[RowEdit]:
    """Group ``mutations`` (in WAL order) into one edit per (entry, row), in the order each
    row first appears in its entry."""
    i, n = 0, len(mutations)
    while i < n:
        first = mutations[i]
        position = first.position
        if i + 1 == n or mutations[i + 1].position != position:  # the usual entry: one row
            yield RowEdit(table, first.row, position, first.cells)
            i += 1
            continue
        rows: dict[bytes, list[Cell]] = {}
        while i < len(mutations) and mutations[i].position == position:
            rows.setdefault(mutations[i].row, []).extend(mutations[i].cells)
            i += 1
        for row, cells in rows.items():
            yield RowEdit(table, row, position, tuple(cells))


def message_key(table: str, row: bytes) -> bytes:
    """Table name, NUL, row: one row's messages share a partition."""
    return table.encode("utf-8") + b"\x00" + row


# The value is written directly as the text ``json.dumps(..., separators=(",", ":"))`` makes
# of the message's dict (that is the format; tests hold the two equal), without building
# the dict: each byte string rendered once, by a table of each byte's toStringBinary form
# as it reads inside a JSON string.
_JSON_RENDER: tuple[str, ...] = tuple(json.dumps(to_string_binary(bytes([b])))[1:-1]
                                      for b in range(256))
_JSON_AS_IS = bytes(b for b in range(256) if _JSON_RENDER[b] == chr(b))
_SEPARATORS = (",", ":")


def _binary(data: bytes) -> str:
    """``json.dumps(to_string_binary(data))``."""
    if not data.translate(None, _JSON_AS_IS):  # printable throughout: the common case
        return f'"{data.decode("ascii")}"'
    # a charmap decode looks every byte up in C (typeshed's stub allows int values only)
    return f'"{codecs.charmap_decode(data, "strict", _JSON_RENDER)[0]}"'  # type: ignore[arg-type]


# Families and qualifiers repeat from cell to cell: rendered once each (a bounded number).
_name = lru_cache(maxsize=4096)(_binary)


@lru_cache(maxsize=64)
def _type(code: int) -> str:
    return f',"type":{json.dumps(type_name(code))}'


@lru_cache(maxsize=16)
def _table(table: str) -> str:
    return '{"table":' + json.dumps(table) + ',"row":'


@lru_cache(maxsize=16)
def _file(file: str) -> str:
    """The WAL's name, the same wherever the file lies (WALs/, -splitting, oldWALs/)."""
    return ',"file":' + json.dumps(posixpath.basename(file))


def _int(value: int | None) -> str:
    return "null" if value is None else repr(value)


def _position(p: WalPosition) -> str:
    """The fields after ``row``, up to the opening of ``cells``."""
    return (f'{_file(p.file)},"offset":{_int(p.offset)},"entry":{_int(p.entry)},'
            f'"sequence":{_int(p.sequence)},"write_time":{_int(p.write_time)},"cells":[')


def _general_cell(cell: Cell) -> str:
    """A cell with tags or a METAFAMILY marker, in the general form."""
    return json.dumps(cell_json(cell, True), separators=_SEPARATORS)


def _cell(cell: Cell, row: str) -> str:
    if cell.tags or cell.family == METAFAMILY:  # rare: the general form
        return _general_cell(cell)
    return (f'{{"row":{row},"family":{_name(cell.family)},'
            f'"qualifier":{_name(cell.qualifier)},"timestamp":{cell.timestamp!r}'
            f'{_type(cell.type)},"value":{_binary(cell.value)}}}')


def cells_text(edit: RowEdit) -> str:
    """The JSON array of ``edit``'s cells (as ``wal dump --json --values`` writes them)."""
    row = _binary(edit.row)
    return "[" + ",".join([_cell(c, row) if c.row == edit.row else _cell(c, _binary(c.row))
                           for c in edit.cells]) + "]"


def message_value(edit: RowEdit, image: Sequence[Cell] | None = None) -> bytes:
    """The JSON value of ``edit`` (with ``row_image`` when ``image`` is given)."""
    row = _binary(edit.row)
    cells = cells_text(edit)[1:-1]
    tail = "]}"
    if image is not None:
        rows = [{"family": to_string_binary(c.family),
                 "qualifier": to_string_binary(c.qualifier),
                 "timestamp": c.timestamp, "value": to_string_binary(c.value)} for c in image]
        tail = f'],"row_image":{json.dumps(rows, separators=_SEPARATORS)}}}'
    text = _table(edit.table) + row + _position(edit.position) + cells + tail
    return text.encode("ascii")
