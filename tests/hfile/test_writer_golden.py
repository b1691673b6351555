"""The writer given the cells of each golden HFile (``tests/data/real-hfile/``, written by
HBase 2.6.1's ``StoreFileWriter``) and the settings ``GoldenCells.java`` wrote it with makes
the same file, byte for byte: data blocks in every encoding, tags compressed or not, leaf,
intermediate and root index blocks, ROW Bloom chunks, the delete-family Bloom filter, file
info and trailer, with the compiled writer loop and with its pure-Python reference. Where
the codec's output is its own (HBase's pure-Java LZ4 and ZSTD against the native libraries
here), every block is the same once decompressed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from hbase_migrate.hfile.block import INTERMEDIATE_INDEX, LEAF_INDEX, ROOT_INDEX, BlockReader
from hbase_migrate.hfile.checksum import CHECKSUM_CRC32
from hbase_migrate.hfile.fileinfo import parse_non_root_index
from hbase_migrate.hfile.metadata import COMPACTION_EVENT_KEY, MAJOR_COMPACTION_KEY, MAX_SEQ_ID_KEY
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from tests.hfile.printout import GOLDEN

T0 = 1700000000000  # GoldenCells.T0, the files' creation time
ENCODINGS = {"prefix": "PREFIX", "diff": "DIFF", "fastdiff": "FAST_DIFF",
             "rowindex": "ROW_INDEX_V1", "tagcompression": "FAST_DIFF"}
CODECS = ("snappy", "lz4", "zstd")
SAME_BYTES = [
    "small", "small-prefix", "small-diff", "small-fastdiff", "small-rowindex",
    "small-tagcompression", "multiblock", "multiblock-gz", "multiblock-crc32",
    "multiblock-3level", "multiblock-prefix", "multiblock-diff", "multiblock-fastdiff",
    "multiblock-rowindex", "multiblock-snappy",
    *(f"tagged{size}{e}" for size in ("", "-multiblock")
      for e in ("", "-prefix", "-diff", "-fastdiff", "-rowindex")),
]
SAME_BLOCKS = ["multiblock-lz4", "multiblock-zstd",
               *(f"tagged-multiblock-fastdiff-{c}" for c in CODECS)]


def settings(name: str, *, historical: bool = True) -> HFileSettings:
    """The settings ``GoldenCells.writeAll`` gives the file (``hfile.index.block.max.size``
    256, CRC32C in chunks of 16 KiB, created at T0, unless said)."""
    parts = name.split("-")
    kw: dict[str, object] = {"block_size": 65536, "index_chunk_size": 256, "create_time": T0,
                             "historical": historical,
                             "compress_tags": parts[0] == "tagged" or "tagcompression" in parts}
    for part in parts[1:]:
        if part in ENCODINGS:
            kw["encoding"] = ENCODINGS[part]
        if part in CODECS:
            kw.update(compression=part.upper(), block_size=2048)
    if parts[0] == "multiblock" and "compression" not in kw:
        kw["block_size"] = 512
        if name in ("multiblock", "multiblock-gz"):
            kw["bloom"] = "ROW"
        if "gz" in parts or name == "multiblock-fastdiff":
            kw["compression"] = "GZ"
        if "crc32" in parts:
            kw.update(compression="GZ", block_size=4096, checksum=CHECKSUM_CRC32,
                      bytes_per_checksum=512)
        if "3level" in parts:
            kw.update(index_chunk_size=128, index_min_entries=2)
    if parts[0] == "tagged" and "multiblock" in parts and "compression" not in kw:
        kw.update(block_size=1024, compression="GZ")
    return HFileSettings(**kw)  # type: ignore[arg-type]


def rewrite(name: str, folder: Path = GOLDEN) -> bytes:
    """The golden file's cells, as the reader gives them, written again."""
    with HFileReader(folder / name) as reader:
        cells = list(reader.cells())
        flushed = {k: reader.file_info[k]
                   for k in (MAX_SEQ_ID_KEY, MAJOR_COMPACTION_KEY, COMPACTION_EVENT_KEY)}
    out = io.BytesIO()
    writer = HFileWriter(out, settings(name, historical=folder == GOLDEN))
    for stored in cells:
        writer.append(stored.cell, stored.mvcc)
    size = writer.close(flushed)
    assert size == len(out.getvalue())
    return out.getvalue()


GOLDEN_3 = GOLDEN.parent / "real-hfile-3.0"  # HBase 3.0.0-alpha-4's, no HISTORICAL key
BYTE_CASES = [(GOLDEN, n) for n in SAME_BYTES] + [
    (GOLDEN_3, n) for n in SAME_BYTES if (GOLDEN_3 / n).exists()]


@pytest.mark.parametrize(("folder", "name"), BYTE_CASES,
                         ids=[f"{f.name}/{n}" for f, n in BYTE_CASES])
@pytest.mark.usefixtures("both_writers")
def test_same_bytes_as_hbase(folder: Path, name: str) -> None:
    written = rewrite(name, folder)
    golden = (folder / name).read_bytes()
    first = next((i for i, (a, b) in enumerate(zip(written, golden, strict=False)) if a != b),
                 None)
    assert (len(written), first) == (len(golden), None)


def blocks(path: Path) -> list[tuple[bytes, object]]:
    """Every block of a file before its trailer, decompressed: the magic and the data, or
    an index block's keys (its offsets and sizes differ with the codec's output)."""
    data = path.read_bytes()
    end = len(data) - 4096
    with HFileReader(path) as reader:
        compression = reader.trailer.compression
        root_keys = [entry.key for entry in reader.root_index]
    blocks = BlockReader("file", io.BytesIO(data), 3, compression, len(data))
    found: list[tuple[bytes, object]] = []
    offset = 0
    while offset < end:
        block = blocks.read(offset, end)
        if block.magic in (LEAF_INDEX, INTERMEDIATE_INDEX):
            found.append((block.magic, [e.key for e in parse_non_root_index(block.data)]))
        elif block.magic == ROOT_INDEX and block.data:
            found.append((block.magic, root_keys))
        else:
            found.append((block.magic, block.data))
        offset += block.on_disk_size
    return found


@pytest.mark.parametrize("name", SAME_BLOCKS)
@pytest.mark.usefixtures("both_writers")
def test_same_blocks_as_hbase(name: str, tmp_path: Path) -> None:
    (tmp_path / name).write_bytes(rewrite(name))
    assert blocks(tmp_path / name) == blocks(GOLDEN / name)


def test_settings_cover_every_golden_file() -> None:
    """Every golden file HBase wrote in a codec the writer writes is compared above."""
    names = {p.name for p in Path(GOLDEN).iterdir() if "." not in p.name}
    assert names - set(SAME_BYTES) - set(SAME_BLOCKS) == {
        "multiblock-brotli", "tagged-multiblock-fastdiff-brotli"}
