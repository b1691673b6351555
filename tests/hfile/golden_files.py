"""The golden HFiles the HFile tests read, shared by them: which files each HBase release
wrote (``real-hfile``, ``real-hfile-3.0``, ``real-hfile-1.4``), the reader's cells of one
rendered as the printout's fields, and the golden ``small`` with its trailer edited by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.wal.model import type_name
from tests.hfile.printout import GOLDEN

# cells with tags in every encoding, COMPRESS_TAGS on (the family default): compressed in
# PREFIX, DIFF and FAST_DIFF; plain in NONE and ROW_INDEX_V1 (tagcompression.py)
ENCODED = ["-prefix", "-diff", "-fastdiff", "-rowindex"]
TAGGED = [f"tagged{size}{e}" for size in ("", "-multiblock") for e in ["", *ENCODED]]
# files of a codec that HBase 3.0.0-alpha-4 and 1.4.13 cannot load here
CODECS = ["multiblock-snappy", "multiblock-lz4", "multiblock-zstd", "multiblock-brotli",
          *(f"tagged-multiblock-fastdiff-{c}" for c in ("snappy", "lz4", "zstd", "brotli"))]
READABLE = ["small", "multiblock", "multiblock-gz", "multiblock-crc32", "multiblock-3level",
            "small-rowindex", "multiblock-rowindex", "small-prefix", "multiblock-prefix",
            "small-fastdiff", "multiblock-fastdiff", "small-diff", "multiblock-diff",
            "small-tagcompression", *TAGGED, *CODECS]

# HBase 3.0.0-alpha-4 on Maven Central has no codec module: no SNAPPY, LZ4, ZSTD or BROTLI
# file; HBase 1.4.13 has SNAPPY and LZ4 through Hadoop's native library only, none here
GOLDEN_3 = GOLDEN.parent / "real-hfile-3.0"
GOLDEN_1 = GOLDEN.parent / "real-hfile-1.4"
FOLDERS = [GOLDEN, GOLDEN_3, GOLDEN_1]
# (folder, name) of every golden file there is, and its test id
CASES = [(f, n) for f in FOLDERS for n in READABLE if (f / n).exists()]
IDS = [f"{folder.name}/{name}" for folder, name in CASES]

TRAILER_SIZE = 4096  # v3


def read_cells(name: str, folder: Path = GOLDEN) -> list[dict[str, Any]]:
    """The reader's cells of a file, rendered as the printout's fields."""
    with HFileReader(folder / name) as reader:
        return [{
            "row": to_string_binary(s.cell.row), "family": to_string_binary(s.cell.family),
            "qualifier": to_string_binary(s.cell.qualifier), "timestamp": s.cell.timestamp,
            "type": type_name(s.cell.type), "value": to_string_binary(s.cell.value),
            "vlen": len(s.cell.value), "mvcc": s.mvcc,
            "tags": [{"type": t.type, "value": to_string_binary(t.value)} for t in s.cell.tags],
        } for s in reader.cells()]


def edited(tmp_path: Path, length_delta: int, old: bytes, new: bytes) -> Path:
    """A copy of the golden ``small`` in ``tmp_path`` whose trailer message ends in ``new``
    where it ended in ``old`` (written over the zero padding after it), its length varint
    changed by ``length_delta``."""
    data = bytearray((GOLDEN / "small").read_bytes())
    start = len(data) - TRAILER_SIZE
    length = data[start + 8]  # one varint byte: the message is under 128 bytes
    message_end = start + 9 + length
    assert bytes(data[message_end - len(old) : message_end]) == old
    at = message_end - len(old)
    data[at : at + len(new)] = new  # over the zero padding that follows the message
    data[start + 8] = length + length_delta
    path = tmp_path / "small"
    path.write_bytes(bytes(data))
    return path
