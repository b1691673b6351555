"""HBase's Bytes.toStringBinary / toBytesBinary, against hand-written expectations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hbase_migrate.bytesutil import short_binary, to_bytes_binary, to_string_binary

# (bytes, what HBase 2.x prints), written out by hand from the rule in Bytes.toStringBinary
RENDERED = [
    (b"", ""),
    (b"row1", "row1"),
    (b" ~", " ~"),  # 0x20 and 0x7E are the printable bounds
    (b"\x1f\x7f", "\\x1F\\x7F"),  # just outside them
    (b"r\x00\xff", "r\\x00\\xFF"),
    (b"a\\b", "a\\x5Cb"),  # the backslash is always escaped
    (b"\xab\xcd\xef", "\\xAB\\xCD\\xEF"),  # uppercase hex
    (b"\n\t\r", "\\x0A\\x09\\x0D"),
    (b"\x80", "\\x80"),
    ("é".encode(), "\\xC3\\xA9"),
    (b"\"quote'", "\"quote'"),
]


@pytest.mark.parametrize(("raw", "text"), RENDERED)
def test_to_string_binary(raw: bytes, text: str) -> None:
    assert to_string_binary(raw) == text


@pytest.mark.parametrize(("raw", "text"), RENDERED)
def test_to_bytes_binary_inverts(raw: bytes, text: str) -> None:
    assert to_bytes_binary(text) == raw
    assert to_bytes_binary(text, strict=True) == raw


def test_accepts_bytearray_and_memoryview() -> None:
    assert to_string_binary(bytearray(b"\x01a")) == "\\x01a"
    assert to_string_binary(memoryview(b"\x01a")) == "\\x01a"


# HBase's parser quirks, each worked out from Bytes.toBytesBinary by hand.
@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("\\xff", b"xff"),  # lowercase hex is a bogus escape: the backslash is dropped
        ("\\xZZ9", b"xZZ9"),
        ("a\\x4", b"a\\x4"),  # fewer than 3 characters after the backslash: literal
        ("a\\", b"a\\"),
        ("\\n", b"\\n"),  # a backslash not followed by x is itself
        ("\\x41\\x42C", b"ABC"),
        ("\u00e9", b"\xe9"),  # a character is the byte of its code point (Latin-1)
    ],
)
def test_to_bytes_binary_hbase_quirks(text: str, raw: bytes) -> None:
    assert to_bytes_binary(text) == raw


@pytest.mark.parametrize("text", ["\\xff", "\\xZZ9", "a\\x4"])
def test_strict_rejects_bogus_escapes(text: str) -> None:
    with pytest.raises(ValueError, match="position"):
        to_bytes_binary(text, strict=True)


def test_characters_beyond_a_byte_are_refused() -> None:
    with pytest.raises(ValueError, match="not a byte"):
        to_bytes_binary("row\u20ac")


@given(st.binary(max_size=64))
def test_round_trip(raw: bytes) -> None:
    text = to_string_binary(raw)
    assert text.isascii()
    assert all(0x20 <= ord(c) <= 0x7E for c in text)
    assert to_bytes_binary(text, strict=True) == raw


@given(st.binary(max_size=64))
def test_rendering_length(raw: bytes) -> None:
    # every byte is either 1 character or 4 (\xHH)
    text = to_string_binary(raw)
    escaped = sum(1 for b in raw if not (0x20 <= b <= 0x7E) or b == 0x5C)
    assert len(text) == len(raw) + 3 * escaped


def test_a_short_key_is_shown_whole_and_a_long_one_by_head_and_length() -> None:
    assert short_binary(b"row-\x00\xff") == "row-\\x00\\xFF"
    assert short_binary(b"a" * 64) == "a" * 64
    assert short_binary(b"a" * 65) == "a" * 32 + "...(65 bytes)"
    # an escape is never cut in half: eight \xHH (32 characters) fit in the head
    assert short_binary(b"\x01" * 100) == "\\x01" * 8 + "...(100 bytes)"
    assert short_binary(b"ab\x01" * 30) == ("ab\\x01" * 5) + "ab...(90 bytes)"
