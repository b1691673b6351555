"""Compressed tags of the encoded data blocks (``TagCompressionContext``,
``BufferedDataBlockEncoder.afterEncodingKeyValue`` and its seeker's ``decodeTags``, in
branch-2.6 and branch-1.4).

A family with a ``DATA_BLOCK_ENCODING`` has ``COMPRESS_TAGS`` on by default; its files then
say ``hfile.TAGS_COMPRESSED`` true in their file info. Only the encoders built on
``BufferedDataBlockEncoder`` compress tags: PREFIX, DIFF and FAST_DIFF. ROW_INDEX_V1 writes its
cells as an unencoded block does (``NoneEncoder``), tags plain, whatever the file info says;
a file without encoding says false (``HFileWriterImpl.finishFileInfo``).

In PREFIX, DIFF and FAST_DIFF a cell's tags follow its value as ``cint tagsLength`` (the
length the tags have uncompressed, each tag's uint16 length included), then, when it is not
0, one dictionary item per tag (``Dictionary.write``, as in a compressed WAL:
``wal/dictionary.py``) holding the tag's type byte and value; the reader puts the uint16
length back. The dictionary is an ``LRUDictionary`` of 127 slots (``Byte.MAX_VALUE``),
emptied at the start of every data block, on the writer's side (``startBlockEncoding``) as
on the reader's (``setCurrentBuffer``, ``decodeKeyValues``).
"""

from __future__ import annotations

from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.dictionary import LruDictionary, read_item
from hbase_migrate.wal.model import Tag

TAG_DICTIONARY_CAPACITY = 127  # Byte.MAX_VALUE
TAGS_COMPRESSED = b"hfile.TAGS_COMPRESSED"


def block_dictionary(compressed_tags: bool) -> LruDictionary | None:
    """A data block's tag dictionary: an empty one when its tags are compressed."""
    return LruDictionary(TAG_DICTIONARY_CAPACITY) if compressed_tags else None


def read_compressed_tags(data: bytes, pos: int, tags_len: int, dictionary: LruDictionary
                         ) -> tuple[tuple[Tag, ...], int]:
    """The tags of ``tags_len`` bytes (uncompressed) held compressed at ``pos`` of a block's
    data (after its encoding id): the tags and the position after them. Errors name the
    block byte (counting the encoding id, as the decoders' do)."""
    tags = []
    produced = 0
    end = len(data)
    while produced < tags_len:
        at = pos
        try:
            entry, pos = read_item(data, pos, end, dictionary)
        except (IndexError, ValueError) as exc:  # cut off, a missing slot, a bad length
            raise CellCorruptError(f"compressed tag at block byte {at + 2}: {exc}") from exc
        if not entry:
            raise CellCorruptError(f"compressed tag at block byte {at + 2} is empty")
        tags.append(Tag(entry[0], entry[1:]))
        produced += 2 + len(entry)
    if produced != tags_len:
        raise CellCorruptError(f"compressed tags before block byte {pos + 2} make {produced} "
                               f"bytes, the cell says {tags_len}")
    return tuple(tags), pos
