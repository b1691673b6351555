"""The framing of a WAL file and its WALHeader and WALTrailer messages (``WAL.proto``).

File framing (``AbstractProtobufLogWriter``/``ProtobufLogWriter``)::

    "PWAL" | varint N | WALHeader (N bytes)
    per entry: varint K | WALKey (K bytes, following_kv_count = C) | C cells
    clean close: WALTrailer (T bytes, empty today) | int32 BE T | "LAWP"

WALHeader: 1 has_compression bool, 2 encryption_key bytes, 3 has_tag_compression bool,
4 writer_cls_name string, 5 cell_codec_cls_name string, 6 has_value_compression bool,
7 value_compression_algorithm uint32. WALTrailer has no fields.

The WALKey is in ``walkey.py``, the cells in ``cells.py``.
"""

from __future__ import annotations

from hbase_migrate.wal.model import WalHeader
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, varint_field

MAGIC = b"PWAL"
TRAILER_MAGIC = b"LAWP"
LEGACY_MAGIC = b"SEQ"
EMPTY_TRAILER = b"\x00\x00\x00\x00" + TRAILER_MAGIC  # WALTrailer{} + int32 0 + "LAWP"
WRITER_CLS_NAMES = frozenset(
    {
        "ProtobufLogWriter",
        "AsyncProtobufLogWriter",
        "SecureProtobufLogWriter",
        "SecureAsyncProtobufLogWriter",
    }
)


def encode_header(header: WalHeader, *, explicit_flags: bool = True) -> bytes:
    """Serialise a WALHeader in field order, as protobuf-java does.

    HBase 2.5+ always sets fields 1, 3 and 6 (false when off); ``explicit_flags=False``
    writes them only when true.
    """
    out = bytearray()
    if explicit_flags or header.has_compression:
        out += varint_field(1, header.has_compression)
    if header.encryption_key is not None:
        out += bytes_field(2, header.encryption_key)
    if explicit_flags or header.has_tag_compression:
        out += varint_field(3, header.has_tag_compression)
    if header.writer_cls_name is not None:
        out += string_field(4, header.writer_cls_name)
    if header.cell_codec_cls_name is not None:
        out += string_field(5, header.cell_codec_cls_name)
    if explicit_flags or header.has_value_compression:
        out += varint_field(6, header.has_value_compression)
    if header.value_compression_algorithm is not None:
        out += varint_field(7, header.value_compression_algorithm)
    return bytes(out)


def decode_header(data: bytes) -> WalHeader:
    """Parse a WALHeader; absent string fields are None, absent flags False."""
    m = Message(data, "WALHeader")
    algorithm = m.opt_int(7, "value_compression_algorithm")
    return WalHeader(
        has_compression=bool(m.opt_int(1, "has_compression")),
        encryption_key=m.opt_bytes(2, "encryption_key"),
        has_tag_compression=bool(m.opt_int(3, "has_tag_compression")),
        writer_cls_name=m.opt_str(4, "writer_cls_name"),
        cell_codec_cls_name=m.opt_str(5, "cell_codec_cls_name"),
        has_value_compression=bool(m.opt_int(6, "has_value_compression")),
        value_compression_algorithm=None if algorithm is None else algorithm & 0xFFFFFFFF,
    )
