"""Data blocks encoded PREFIX (``PrefixKeyDeltaEncoder``, ``BufferedDataBlockEncoder`` in
branch-2.6).

After the block's 2-byte encoding id (2, ``DataBlockEncoding.PREFIX``): int32 big-endian, the
cells' unencoded size (``startBlockEncoding``, filled in by ``endBlockEncoding``), then per
cell::

    cint keyLen - common | cint valueLen | cint common
    | the key's last keyLen - common bytes (the first ``common`` are the previous key's)
    | value
    | [cint tagsLen | tags]    when the file holds tags (``afterEncodingKeyValue``)
    | [vlong mvcc]             when it holds mvcc

``cint`` is ``ByteBufferUtils.putCompressedInt``: 7 bits a byte, least significant first, the
high bit set when more follow (a protobuf varint). The key is a KeyValue key
(``keyvalue.py``). With compressed tags (``TAGS_COMPRESSED``) the tags after their cint length
are dictionary items (``tagcompression.py``), the dictionary emptied at each block.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from hbase_migrate.hfile.keyvalue import StoreCell, parse_key, read_vlong
from hbase_migrate.hfile.tagcompression import block_dictionary, read_compressed_tags
from hbase_migrate.wal.cells import CellCorruptError, parse_tags
from hbase_migrate.wal.dictionary import LruDictionary
from hbase_migrate.wal.model import Cell, Tag
from hbase_migrate.wal.protobuf import ProtobufError, decode_varint32

PREFIX = 2


def encoded_tail(data: bytes, pos: int, *, tags: bool, mvcc: bool,
                 tag_dict: LruDictionary | None = None) -> tuple[tuple[Tag, ...], int, int, int]:
    """A cell's end in the encodings of ``BufferedDataBlockEncoder`` (``afterEncodingKeyValue``):
    its tags (compressed with ``tag_dict``, the block's dictionary, when there is one), mvcc,
    the bytes the encoder counts for them (the tags length as 2 bytes, the tags
    uncompressed) and the position after them."""
    end = len(data)
    cell_tags: tuple[Tag, ...] = ()
    counted = 0
    if tags:
        try:
            tags_len, pos = decode_varint32(data, pos, end)
        except ProtobufError as exc:
            raise CellCorruptError(f"tags length at block byte {pos + 2}: {exc}") from exc
        if tag_dict is not None:
            if tags_len:
                cell_tags, pos = read_compressed_tags(data, pos, tags_len, tag_dict)
        elif pos + tags_len > end:
            raise CellCorruptError(f"tags at block byte {pos + 2} run past the block")
        else:
            cell_tags = parse_tags(data, pos, pos + tags_len)
            pos += tags_len
        counted = 2 + tags_len
    version = 0
    if mvcc:
        version, after = read_vlong(data, pos, end)
        counted += after - pos
        pos = after
    return cell_tags, version, counted, pos


def prefix_cells(data: bytes, *, tags: bool, mvcc: bool,
                 compressed_tags: bool = False) -> Iterator[StoreCell]:
    """The cells of a PREFIX block's data after the encoding id."""
    if len(data) < 4:
        raise CellCorruptError("PREFIX block has no unencoded size")
    (unencoded,) = struct.unpack_from(">i", data, 0)
    pos, end, key, total = 4, len(data), b"", 0
    tag_dict = block_dictionary(tags and compressed_tags)
    try:
        while pos < end:
            start = pos
            suffix, pos = decode_varint32(data, pos, end)
            value_len, pos = decode_varint32(data, pos, end)
            common, pos = decode_varint32(data, pos, end)
            if common > len(key) or pos + suffix + value_len > end:
                raise CellCorruptError(f"cell at block byte {start + 2}: prefix {common}, "
                                       f"suffix {suffix}, value {value_len} do not fit")
            key = key[:common] + data[pos : pos + suffix]
            pos += suffix
            value = data[pos : pos + value_len]
            pos += value_len
            cell_tags, version, counted, pos = encoded_tail(data, pos, tags=tags, mvcc=mvcc,
                                                           tag_dict=tag_dict)
            row, family, qualifier, timestamp, kind = parse_key(key)
            # what the encoder counts (``internalEncode``): lengths, key, value, tags, mvcc
            total += 8 + len(key) + value_len + counted
            cell = Cell(row, family, qualifier, timestamp, kind, value, cell_tags)
            yield StoreCell(cell, version)
    except ProtobufError as exc:
        raise CellCorruptError(f"PREFIX cell lengths: {exc}") from exc
    if total != unencoded:
        raise CellCorruptError(f"PREFIX cells of {total} bytes unencoded, the block says "
                               f"{unencoded}")
