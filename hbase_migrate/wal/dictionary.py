"""A mirror of HBase's ``LRUDictionary``, used by WAL dictionary compression.

Behaviour that reader and writer must share with HBase, slot for slot:

* slots are numbered 0..capacity-1; while not full a new entry takes the next free number;
  when full the least recently used entry's slot is reused;
* every access (added, found by the writer, read by index by the reader) makes the entry the
  most recently used;
* adding an empty byte string is a no-op: it takes no slot.

A dictionary item on the wire (``Dictionary.write``)::

    literal    FF, varint length, bytes    (the reader then adds the bytes)
    reference  2 bytes, big-endian signed short slot index (never starts with FF)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.protobuf import VARINT_CUT, VARINT_TOO_LONG, encode_varint, scan_varint

NOT_IN_DICTIONARY = 0xFF

REGION_CAPACITY = 32767  # Short.MAX_VALUE; 1 in recovered-edits files
TABLE_CAPACITY = 32767
FAMILY_CAPACITY = 127  # Byte.MAX_VALUE
QUALIFIER_CAPACITY = 127
ROW_CAPACITY = 32767
TAG_CAPACITY = 32767


class LruDictionary:
    """Slots of byte strings with HBase's LRU reuse rule.

    ``writer=True`` also keeps a content index so ``find_or_add`` is O(1); a reader only
    needs ``get`` and ``add``.
    """

    __slots__ = ("_entries", "_index", "_order", "capacity")

    def __init__(self, capacity: int, *, writer: bool = False) -> None:
        if not 0 < capacity <= 32767:
            raise ValueError(f"dictionary capacity must be 1..32767, got {capacity}")
        self.capacity = capacity
        self._entries: list[bytes] = []
        self._order: OrderedDict[int, None] = OrderedDict()  # least recently used first
        self._index: dict[bytes, int] | None = {} if writer else None

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, idx: int) -> bytes | None:
        """The entry in slot ``idx`` (made most recently used), or None if there is none."""
        if not 0 <= idx < len(self._entries):
            return None
        self._order.move_to_end(idx)
        return self._entries[idx]

    def fast_get(self) -> tuple[list[bytes], Callable[[int], None]]:
        """The slot list and the make-most-recently-used function, for a decoder that
        inlines ``get`` in its loop: ``if 0 <= idx < len(slots): touch(idx); slots[idx]``.
        Both stay valid for the dictionary's lifetime (``clear`` empties them in place)."""
        return self._entries, self._order.move_to_end

    def fast_add(self) -> tuple[list[bytes], OrderedDict[int, None]]:
        """The slot list and the recency order, for a reader-side decoder that inlines
        ``add``: while ``len(slots) < capacity`` a new entry is appended and its slot put
        last in ``order``; then ``order.popitem(last=False)`` gives the slot to reuse, which
        goes back in last. Empty data takes no slot."""
        assert self._index is None, "fast_add is for reader-side dictionaries"
        return self._entries, self._order

    def add(self, data: bytes) -> int:
        """Store ``data`` in the next slot (or the LRU slot when full); return the slot, or
        -1 for an empty string, which takes no slot."""
        if not data:
            return -1
        entries = self._entries
        if len(entries) < self.capacity:
            idx = len(entries)
            entries.append(data)
            self._order[idx] = None
        else:
            idx = self._order.popitem(last=False)[0]  # the least recently used slot
            self._order[idx] = None
            if self._index is not None:
                self._index.pop(entries[idx], None)
            entries[idx] = data
        if self._index is not None:
            self._index[data] = idx
        return idx

    def find_or_add(self, data: bytes) -> int:
        """Writer side (``findEntry``): the slot of ``data`` if present (made most recently
        used), else -1 after adding it."""
        assert self._index is not None, "find_or_add needs a writer-side dictionary"
        idx = self._index.get(data)
        if idx is not None:
            self._order.move_to_end(idx)
            return idx
        self.add(data)
        return -1

    def clear(self) -> None:
        """Forget every entry (a reader restarting from the file start)."""
        self._entries.clear()
        self._order.clear()
        if self._index is not None:
            self._index.clear()


class MissingEntryError(HBaseMigrateError, ValueError):
    """A dictionary reference to a slot that holds nothing."""


def read_item(buf: bytes, pos: int, end: int, dictionary: LruDictionary) -> tuple[bytes, int]:
    """Decode one dictionary item at ``pos``; a literal is added to ``dictionary``.

    Raises IndexError when the item runs past ``end``, MissingEntryError for a reference to
    an empty slot, ValueError for a malformed length.
    """
    status = buf[pos] if pos < end else _cut_off(pos)
    if status == NOT_IN_DICTIONARY:
        length = buf[pos + 1] if pos + 1 < end else 0x80
        if length < 0x80:
            pos += 2
        else:
            length, pos = _read_length(buf, pos + 1, end)
        stop = pos + length
        if stop > end:
            _cut_off(pos)
        data = buf[pos:stop]
        dictionary.add(data)
        return data, stop
    if pos + 2 > end:
        _cut_off(pos)
    if status < 0x80:
        idx = status << 8 | buf[pos + 1]
        entries = dictionary._entries
        if idx < len(entries):
            dictionary._order.move_to_end(idx)
            return entries[idx], pos + 2
    index = _short(status, buf[pos + 1])
    raise MissingEntryError(f"missing dictionary entry for index {index}")


def write_item(out: bytearray, data: bytes, dictionary: LruDictionary | None) -> None:
    """Encode ``data`` as a dictionary item (``Dictionary.write``): a reference when the
    writer-side dictionary has it, else a literal (which the dictionary then holds)."""
    idx = dictionary.find_or_add(data) if dictionary is not None else -1
    if idx < 0:
        out.append(NOT_IN_DICTIONARY)
        out += encode_varint(len(data))
        out += data
    else:
        out.append(idx >> 8)
        out.append(idx & 0xFF)


def _short(high: int, low: int) -> int:
    value = high << 8 | low
    return value - 0x10000 if value >= 0x8000 else value


def _cut_off(pos: int) -> int:
    raise IndexError(f"dictionary item cut off at {pos}")


def _read_length(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    value, new_pos = scan_varint(buf, pos, end, 5)
    if value == VARINT_CUT:
        _cut_off(end)
    if value == VARINT_TOO_LONG:
        raise ValueError("dictionary literal length is longer than 5 bytes")
    if value > 0x7FFFFFFF:
        raise ValueError(f"dictionary literal length {value} does not fit a 32-bit int")
    return value, new_pos
