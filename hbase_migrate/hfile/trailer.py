"""The fixed file trailer of an HFile (``FixedFileTrailer``, ``HFile.proto`` in branch-2.6).

The trailer closes the file; its size is fixed by the major version
(``computeTrailerSizeByVersion``): 212 bytes for v2, 4096 for v3. The last 4 bytes of the
file are the version, big-endian: major version in the low 3 bytes, minor in the high byte
(``materializeVersion``). The trailer starts with the magic ``TRABLK"$``; from v2 minor 2
(``HFileReaderImpl.PBUF_TRAILER_MINOR_VERSION``) and in v3 a varint-delimited
``FileTrailerProto`` follows, zero-padded to the fixed size::

    1 file_info_offset  2 load_on_open_data_offset  3 uncompressed_data_index_size
    4 total_uncompressed_bytes  5 data_index_count  6 meta_index_count  7 entry_count
    8 num_data_index_levels  9 first_data_block_offset  10 last_data_block_offset
    11 comparator_class_name  12 compression_codec (Compression.Algorithm ordinal)
    13 encryption_key

Older v2 files (``deserializeFromWritable``) hold fixed-width fields instead: refused here.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from hbase_migrate.errors import HFileCorruptError, HFileUnsupportedError
from hbase_migrate.wal.codecs import ALGO_NONE
from hbase_migrate.wal.protobuf import Message, ProtobufError, decode_varint

TRAILER_MAGIC = b'TRABLK"$'
TRAILER_SIZES = {2: 212, 3: 4096}
PBUF_TRAILER_MINOR_VERSION = 2


class Trailer(NamedTuple):
    major_version: int
    minor_version: int
    offset: int  # where the trailer starts in the file
    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    total_uncompressed_bytes: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    data_index_levels: int
    first_data_block_offset: int
    last_data_block_offset: int
    comparator: str
    compression: int  # Compression.Algorithm ordinal
    encrypted: bool


def read_trailer(name: str, tail: bytes, file_size: int) -> Trailer:
    """Parse the trailer from ``tail``, the last bytes of a file of ``file_size`` bytes."""
    if file_size < 4 or len(tail) < 4:
        raise HFileCorruptError(name, 0, f"{file_size} bytes is too short for an HFile")
    (version,) = struct.unpack_from(">I", tail, len(tail) - 4)
    major, minor = version & 0x00FFFFFF, version >> 24
    size = TRAILER_SIZES.get(major)
    if size is None:
        raise HFileCorruptError(
            name, file_size - 4, f"HFile version {version:#010x} (major {major}, minor {minor}) "
            "is not 2 or 3 (a truncated file, or not an HFile)")
    start = file_size - size
    if start < 0 or len(tail) < size:
        raise HFileCorruptError(name, 0, f"{file_size} bytes cannot hold a {size}-byte trailer")
    body = tail[len(tail) - size :]
    if body[:8] != TRAILER_MAGIC:
        raise HFileCorruptError(
            name, start, f"trailer magic {body[:8]!r}, expected {TRAILER_MAGIC!r}")
    if major == 2 and minor < PBUF_TRAILER_MINOR_VERSION:
        raise HFileUnsupportedError(name, start, f"HFile v2 minor {minor} (Writable trailer)")
    try:
        length, pos = decode_varint(body, 8, size - 4)
        if pos + length > size - 4:
            raise ProtobufError("trailer message runs past the trailer")
        msg = Message(body[pos : pos + length], "FileTrailerProto")
        trailer = _trailer(msg, major, minor, start)
    except ProtobufError as exc:
        raise HFileCorruptError(name, start, f"trailer: {exc}") from exc
    problem = _offsets_problem(trailer)
    if problem:
        raise HFileCorruptError(name, start, f"trailer: {problem}")
    if trailer.encrypted:
        raise HFileUnsupportedError(name, start, "an encrypted HFile (its trailer holds a key)")
    return trailer


def _offsets_problem(t: Trailer) -> str:
    """What is wrong with the trailer's offsets (sections in file order), or ''."""
    if not 0 <= t.load_on_open_offset <= t.file_info_offset < t.offset:
        return (f"load-on-open offset {t.load_on_open_offset} and file info offset "
                f"{t.file_info_offset} are not in order before the trailer at {t.offset}")
    if t.entry_count and not (
            0 <= t.first_data_block_offset <= t.last_data_block_offset < t.load_on_open_offset):
        return (f"data blocks from {t.first_data_block_offset} to {t.last_data_block_offset} "
                f"are not before the load-on-open section at {t.load_on_open_offset}")
    return ""


def _trailer(msg: Message, major: int, minor: int, start: int) -> Trailer:
    def num(field: int, default: int = 0) -> int:
        value = msg.opt_int(field)
        return default if value is None else value

    return Trailer(
        major_version=major, minor_version=minor, offset=start,
        file_info_offset=num(1), load_on_open_offset=num(2),
        uncompressed_data_index_size=num(3), total_uncompressed_bytes=num(4),
        data_index_count=num(5), meta_index_count=num(6), entry_count=num(7),
        data_index_levels=num(8), first_data_block_offset=num(9, -1),
        last_data_block_offset=num(10, -1), comparator=msg.opt_str(11) or "",
        compression=num(12, ALGO_NONE), encrypted=13 in msg,
    )


_KV = "org.apache.hadoop.hbase.KeyValue$"
_DEFAULT = "org.apache.hadoop.hbase.InnerStoreCellComparator"
_META = "org.apache.hadoop.hbase.MetaCellComparator"
# ``FixedFileTrailer.getComparatorClass``: the names HBase 1.x wrote (and 2.x still writes,
# ``getHBase1CompatibleName``) for the comparator class HBase 2.6 reads the file with
_COMPARATORS = {
    _KV + "KeyComparator": _DEFAULT, _KV + "KVComparator": _DEFAULT,
    "org.apache.hadoop.hbase.CellComparator": _DEFAULT,
    _KV + "MetaKeyComparator": _META, _KV + "MetaComparator": _META,
    "org.apache.hadoop.hbase.CellComparator$MetaCellComparator": _META,
    "org.apache.hadoop.hbase.CellComparatorImpl$MetaCellComparator": _META,
}


def comparator_class(name: str) -> str:
    """The comparator class HBase 2.6 uses for a trailer's ``comparator_class_name``."""
    return _COMPARATORS.get(name, name)
