"""HBase's printable rendering of byte strings (``Bytes.toStringBinary`` and its inverse).

``to_string_binary`` is what HBase 2.x prints for rows, families, qualifiers and values:
printable ASCII (0x20-0x7E) stays itself, except the backslash; every other byte becomes
``\\xHH`` with uppercase hex digits. ``to_bytes_binary`` parses that form back, the way
``Bytes.toBytesBinary`` does, so command-line arguments such as ``--row 'r\\x00\\xFF'`` mean
what HBase tools would make of them. ``short_binary`` is the same rendering cut short for a
line of text: a key of thousands of bytes shows its head and its length, never whole.
"""

from __future__ import annotations

_HEX_UPPER = "0123456789ABCDEF"
_HEX_DIGITS = frozenset("0123456789ABCDEF")

# One precomputed rendering per byte value: rendering is then a join over a lookup.
_RENDER: tuple[str, ...] = tuple(
    chr(b) if 0x20 <= b <= 0x7E and b != 0x5C else f"\\x{_HEX_UPPER[b >> 4]}{_HEX_UPPER[b & 15]}"
    for b in range(256)
)


_AS_IS = bytes(b for b in range(256) if len(_RENDER[b]) == 1)


def to_string_binary(data: bytes | bytearray | memoryview) -> str:
    """Render bytes as HBase 2.x ``Bytes.toStringBinary`` does (e.g. ``b"r\\x00\\\\"`` ->
    ``r\\x00\\x5C``)."""
    raw = bytes(data)
    if not raw.translate(None, _AS_IS):  # printable throughout: the common case
        return raw.decode("ascii")
    render = _RENDER
    return "".join([render[b] for b in raw])


SHOWN = 64  # characters of a rendering shown whole in a line; a longer one is cut short
HEAD = 32  # characters of a cut-short rendering's head


def short_binary(data: bytes | bytearray | memoryview, limit: int = SHOWN,
                 head: int = HEAD) -> str:
    """``to_string_binary(data)`` when it is at most ``limit`` characters, else its first
    ``head`` characters (never half an escape), ``...`` and the length in bytes:
    ``kkkkkkkk...(9016 bytes)``. Only the head is rendered, however long ``data`` is."""
    raw = bytes(data[:limit + 1])
    shown = to_string_binary(raw)
    if len(data) <= limit and len(shown) <= limit:
        return shown
    render, taken, size = _RENDER, [], 0
    for b in raw:
        piece = render[b]
        if size + len(piece) > head:
            break
        taken.append(piece)
        size += len(piece)
    return f"{''.join(taken)}...({len(data)} bytes)"


def to_bytes_binary(text: str, *, strict: bool = False) -> bytes:
    """Parse the ``toStringBinary`` form back into bytes, as ``Bytes.toBytesBinary`` does.

    ``\\xHH`` with two *uppercase* hex digits is one byte; any other character is the byte of
    its code point. HBase's quirks are kept unless ``strict``: a ``\\x`` followed by
    non-hex (or lowercase hex) digits drops the backslash, and a backslash with fewer than
    three characters after it stays literal. With ``strict=True`` both raise ``ValueError``
    naming the position, which is what a command line wants. Characters above U+00FF raise
    ``ValueError`` in both modes (HBase would silently keep only their low byte).
    """
    out = bytearray()
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 3 < n and text[i + 1] == "x":
            hi, lo = text[i + 2], text[i + 3]
            if hi in _HEX_DIGITS and lo in _HEX_DIGITS:
                out.append(int(hi + lo, 16))
                i += 4
                continue
            if strict:
                raise ValueError(
                    f"bad escape {text[i : i + 4]!r} at position {i} in {text!r}: "
                    "expected \\x and two uppercase hex digits"
                )
            i += 1  # HBase drops the backslash of a bogus escape and keeps the rest
            continue
        if strict and ch == "\\" and i + 1 < n and text[i + 1] == "x":
            raise ValueError(
                f"incomplete escape {text[i:]!r} at position {i} in {text!r}: "
                "expected \\x and two uppercase hex digits"
            )
        code = ord(ch)
        if code > 0xFF:
            raise ValueError(
                f"character {ch!r} at position {i} in {text!r} is not a byte; "
                "write non-ASCII bytes as \\xHH"
            )
        out.append(code)
        i += 1
    return bytes(out)
