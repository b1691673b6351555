"""The names an accepted loss goes by, as the guide documents them, written out by the
tests independently of the product, and two oversized keys alike in their first 5000
bytes."""

from __future__ import annotations

import hashlib
import struct

KEY1 = b"k" * 5000
KEY2 = b"k" * 9000 + b"-a-different-row"


def key_name(table: str, key: bytes) -> str:
    """The name the guide documents: kind, table, the key's first 24 and last 16 bytes,
    and the SHA-256 of its length (4 bytes, big-endian) and its bytes."""
    digest = hashlib.sha256(struct.pack(">I", len(key)) + key).hexdigest()
    return f"key_too_large {table} {key[:24].decode()}...{key[-16:].decode()} sha256:{digest}"
