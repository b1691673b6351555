"""The LRU dictionary mirror: slot numbers, LRU reuse, empty strings."""

from __future__ import annotations

import pytest

from hbase_migrate.wal.dictionary import LruDictionary, MissingEntryError, read_item, write_item


def test_slots_and_lru_reuse() -> None:
    d = LruDictionary(3)
    assert [d.add(x) for x in (b"a", b"b", b"c")] == [0, 1, 2]
    assert d.get(0) == b"a"  # a is now most recently used; b is the LRU
    assert d.add(b"d") == 1  # reuses b's slot
    assert d.add(b"e") == 2  # then c's
    assert [d.get(i) for i in range(3)] == [b"a", b"d", b"e"]
    assert d.get(3) is None and d.get(-1) is None


def test_empty_string_takes_no_slot() -> None:
    d = LruDictionary(2, writer=True)
    assert d.add(b"") == -1 and len(d) == 0
    assert d.find_or_add(b"") == -1 and len(d) == 0


def test_writer_and_reader_stay_in_step() -> None:
    writer, reader = LruDictionary(4, writer=True), LruDictionary(4)
    out = bytearray()
    words = [b"w%d" % (i * 7 % 9) for i in range(60)] + [b""] * 3
    for w in words:
        write_item(out, w, writer)
    pos, got = 0, []
    while pos < len(out):
        value, pos = read_item(bytes(out), pos, len(out), reader)
        got.append(value)
    assert got == words


def test_capacity_one() -> None:
    d = LruDictionary(1, writer=True)
    assert d.find_or_add(b"a") == -1 and d.find_or_add(b"a") == 0
    assert d.find_or_add(b"b") == -1 and d.get(0) == b"b"


def test_item_errors() -> None:
    d = LruDictionary(5)
    with pytest.raises(MissingEntryError, match="index 3"):
        read_item(b"\x00\x03", 0, 2, d)
    with pytest.raises(IndexError):
        read_item(b"\xff\x05ab", 0, 4, d)
    with pytest.raises(IndexError):
        read_item(b"\x00", 0, 1, d)
