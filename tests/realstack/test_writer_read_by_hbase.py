"""The other direction of the real-WAL agreement: WALs written by the project's writer with
each value codec real HBase 2.6 can read here, printed by HBase's own WALPrettyPrinter (one
JVM for all files), must give back every cell that was written, value for value. Values
cover the empty value, one byte, compressible and random kilobytes, and values longer than
a codec block (several chunks and the trailing empty block of HBASE-28390)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hbase_migrate.bytesutil import to_bytes_binary, to_string_binary
from hbase_migrate.wal.model import Cell, Tag, WalKey
from hbase_migrate.wal.writer import WalOptions, WalWriter
from realstack.walprinter import parse, pretty_print

from .fixtures import skip_without_real_stack

pytestmark = [pytest.mark.realstack, pytest.mark.slow, pytest.mark.integration]

# BZIP2 (no native library: Hadoop's dummy codec) and LZMA (no module in 2.6) HBase cannot
# read here; LZO the writer refuses.
CODECS = ("GZ", "SNAPPY", "LZ4", "ZSTD", "BROTLI")
_RANDOM = random.Random(17)
VALUES = (b"", b"v", b"abc" * 1000, _RANDOM.randbytes(3000), b"q" * 300_000,
          _RANDOM.randbytes(250_000))


def _entries() -> list[tuple[WalKey, tuple[Cell, ...]]]:
    pairs = []
    for i, value in enumerate(VALUES):
        key = WalKey(b"%032x" % (i % 2), b"t%d" % (i % 2), 10 + i, 1_700_000_000_000 + i)
        cells = (Cell(b"r%d" % i, b"f", b"q", 1_700_000_000_000, 4, value),
                 Cell(b"r%d" % i, b"g", b"", 5, 4, value[:7], (Tag(8, b"\x00\x01"),)))
        pairs.append((key, cells))
    return pairs


def test_hbase_reads_every_value_the_writer_compressed(tmp_path: Path) -> None:
    skip_without_real_stack()
    pairs = _entries()
    files = []
    for codec in CODECS:
        path = tmp_path / f"written-{codec}"
        with path.open("wb") as out:
            writer = WalWriter(out, WalOptions(compression=True, value_compression=codec))
            for key, cells in pairs:
                writer.append(key, cells)
            writer.close()
        files.append(path)
    printed = pretty_print(files)
    for path in files:
        result = printed[path.name]
        assert "error" not in result, f"{path.name}: HBase failed: {result['error']}"
        entries = parse(result["output"])
        assert [e["sequence"] for e in entries] == [key.sequence for key, _ in pairs]
        for entry, (_, cells) in zip(entries, pairs, strict=True):
            got = [(to_bytes_binary(c["row"]), to_bytes_binary(c["family"]),
                    to_bytes_binary(c["qualifier"]), c["timestamp"], c["type"],
                    to_bytes_binary(c["value"]), c["vlen"], c["tags"]) for c in entry["cells"]]
            assert got == [(c.row, c.family, c.qualifier, c.timestamp, "Put", c.value,
                            len(c.value), [f"{t.type}:{to_string_binary(t.value)}"
                                           for t in c.tags]) for c in cells], path.name
