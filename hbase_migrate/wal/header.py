"""The framing of a WAL file and its WALHeader and WALTrailer messages (``WAL.proto``).

File framing (``AbstractProtobufLogWriter``/``ProtobufLogWriter``)::

    "PWAL" | varint N | WALHeader (N bytes)
    per entry: varint K | WALKey (K bytes, following_kv_count = C) | C cells
    clean close: WALTrailer (T bytes, empty today) | int32 BE T | "LAWP"

WALHeader: 1 has_compression bool, 2 encryption_key bytes, 3 has_tag_compression bool,
4 writer_cls_name string, 5 cell_codec_cls_name string, 6 has_value_compression bool,
7 value_compression_algorithm uint32. WALTrailer has no fields.

Encoding and decoding them, and reading them from a file being read: ``read_header`` (the
magic and header, with the errors of an empty, legacy or corrupt start), ``check_header``
(what the reader refuses), ``find_trailer`` (where the edits end). The WALKey is in
``walkey.py``, the cells in ``cells.py``.
"""

from __future__ import annotations

import struct

from hbase_migrate.errors import WalCorruptError, WalEmptyError, WalUnsupportedError
from hbase_migrate.wal.codecs import ALGO_LZO, CODECS, LZO_REFUSAL, algorithm_label
from hbase_migrate.wal.model import (
    DEFAULT_CELL_CODEC,
    PHOENIX_CELL_CODEC,
    SECURE_CELL_CODEC,
    WalHeader,
)
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    decode_varint32,
    iter_fields,
    string_field,
    varint_cut_off,
    varint_field,
)
from hbase_migrate.wal.window import Window

MAGIC = b"PWAL"
TRAILER_MAGIC = b"LAWP"
LEGACY_MAGIC = b"SEQ"
EMPTY_TRAILER = b"\x00\x00\x00\x00" + TRAILER_MAGIC  # WALTrailer{} + int32 0 + "LAWP"
READABLE_CELL_CODECS = (DEFAULT_CELL_CODEC, PHOENIX_CELL_CODEC)
WRITER_CLS_NAMES = frozenset(
    {
        "ProtobufLogWriter",
        "AsyncProtobufLogWriter",
        "SecureProtobufLogWriter",
        "SecureAsyncProtobufLogWriter",
    }
)
MAX_HEADER_LENGTH = 1 << 20
_INT32 = struct.Struct(">i").unpack_from


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


# --- reading them from a file ------------------------------------------------------------


def read_header(window: Window, name: str) -> tuple[WalHeader, int]:
    """The magic and WALHeader at the start of ``window`` (at file offset 0): the header and
    the offset where the edits start. A file that ends before its header does is a
    WalEmptyError, a legacy SequenceFile a WalUnsupportedError, anything else that does not
    parse a WalCorruptError."""
    data = window.ensure(16)
    if not data:
        raise WalEmptyError(name, "zero-length WAL file (no magic, no header)")
    if data[:3] == LEGACY_MAGIC:
        raise WalUnsupportedError(
            name,
            "legacy 0.94 SequenceFile HLog (magic SEQ), unsupported: only protobuf "
            "(PWAL) WALs of HBase 0.96+ can be read",
        )
    if len(data) < 4 and MAGIC.startswith(data):
        raise WalEmptyError(
            name, f"header-less WAL: the file ends inside the magic ({len(data)} bytes)"
        )
    if data[:4] != MAGIC:
        raise WalCorruptError(name, 0, 0, f"bad magic {data[:4]!r}, expected b'PWAL'")
    if len(data) == 4:
        raise WalEmptyError(name, "header-less WAL: magic only, no WAL header")
    try:
        length, pos = decode_varint32(data, 4)
    except ProtobufError as exc:
        if varint_cut_off(data, 4):
            raise WalEmptyError(
                name, "header-less WAL: the file ends inside the header length"
            ) from exc
        raise WalCorruptError(name, 4, 0, f"bad WAL header length: {exc}") from exc
    if length > MAX_HEADER_LENGTH:
        raise WalCorruptError(name, 4, 0, f"WAL header length {length} is implausible")
    data = window.ensure(pos + length)
    if len(data) < pos + length:
        raise WalEmptyError(
            name, f"header-less WAL: the file ends inside the {length}-byte WAL header"
        )
    try:
        header = decode_header(data[pos : pos + length])
    except ProtobufError as exc:
        raise WalCorruptError(name, pos, 0, f"bad WALHeader: {exc}") from exc
    return header, pos + length


def check_header(header: WalHeader, name: str) -> None:
    """Refuse a file this reader cannot decode: encrypted, another cell codec, an unknown
    writer class, LZO or unknown value compression (WalUnsupportedError)."""
    codec = header.cell_codec_cls_name
    if header.encryption_key is not None or codec == SECURE_CELL_CODEC:
        raise WalUnsupportedError(
            name,
            f"encrypted WAL (encryption key in the header, cell codec {codec}), "
            "unsupported: decryption needs the cluster's key provider",
        )
    if codec is not None and codec not in READABLE_CELL_CODECS:
        raise WalUnsupportedError(
            name, f"custom cell codec {codec}, unsupported (only "
            f"{' and '.join(READABLE_CELL_CODECS)})"
        )
    writer = header.writer_cls_name
    if writer is not None and writer not in WRITER_CLS_NAMES:
        raise WalUnsupportedError(name, f"unknown writer class {writer!r}")
    value_algorithm(header, name)


def value_algorithm(header: WalHeader, name: str = "") -> int | None:
    """The value compression in effect (None: values raw); refuses LZO and unknown ordinals."""
    if not (header.has_compression and header.has_value_compression):
        return None
    algorithm = header.value_compression_algorithm
    if algorithm is None or algorithm in CODECS:
        return algorithm
    label = algorithm_label(algorithm)
    why = LZO_REFUSAL if algorithm == ALGO_LZO else "unknown to HBase"
    raise WalUnsupportedError(
        name, f"value compression {label} (Compression.Algorithm ordinal {algorithm}): {why}"
    )


def find_trailer(window: Window, size: int | None, edits_start: int) -> int | None:
    """The offset where the trailer starts, when the file of ``size`` bytes ends with one
    (HBase's ``setTrailerIfPresent``); the window is then limited to the edits. The file
    position is restored."""
    if size is None or size - 8 <= 0:
        return None
    fileobj = window.fileobj
    resume = window.base + len(window.data)
    moved = False

    def read_at(offset: int, length: int) -> bytes:
        nonlocal moved
        if window.base <= offset and offset + length <= resume:  # loaded already
            return window.data[offset - window.base : offset - window.base + length]
        moved = True
        fileobj.seek(offset)
        return fileobj.read(length)

    start: int | None = None
    try:
        tail = read_at(size - 8, 8)
        if len(tail) == 8 and tail[4:] == TRAILER_MAGIC:
            (trailer_len,) = _INT32(tail, 0)
            if 0 <= trailer_len <= size - 8 - edits_start:
                start = size - 8 - trailer_len
                for _ in iter_fields(read_at(start, trailer_len)):
                    pass
    except (OSError, ProtobufError):
        start = None  # as HBase: a trailer that cannot be read means no trailer
    if moved:
        fileobj.seek(resume)
    if start is not None:
        window.limit = start
        if window.base + len(window.data) > start:
            window.data = window.data[: start - window.base]
    return start
