"""Real HBase reads what the project's HFile writer makes.

* HBase 2.6.1's and 3.0.0-alpha-4's ``HFilePrettyPrinter -p -v -m -k`` (one JVM each, no
  cluster) print the cells written, with their tags and sequence ids, for every data block
  encoding x compression (3.0.0-alpha-4 on Maven Central has no codec module: NONE and GZ),
  with tags and without, ROW, ROWCOL or no Bloom filter (of one chunk, or of several), a
  block index of three levels or more: no key out of order, the Bloom filters holding one
  key per row (ROW) or per column (ROWCOL), the delete-family filter one per row with a
  family delete.
* The session's real HBase 2.6.1 bulk-loads files written for a table's families (its own
  ``BulkLoadHFilesTool``; a file a region, and one file spanning the table's two regions,
  which the tool splits): HBase's Java client's raw scan returns every cell written,
  delete markers and tags included, and gets of single columns, which pass through the
  ROWCOL Bloom filter of the files as written, find every version of every column.

The expectations are the cells as written (``tests/support/hfilecells.py``), rendered as
HBase prints them; neither the project's reader nor its client takes part.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.wal.model import Cell, CellType, type_name
from realstack.hbase import RealHBase
from tests.hfile.printout import printed_cells, printed_section
from tests.support.hfilecells import writer_cells

from .fixtures import native_cluster_json, skip_without_real_stack
from .hfile_bulk import load_and_scan, rowcol_gets_missing, table_of
from .hfile_judge import print_hfiles

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
ENCODINGS = ["NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"]
BLOOMS = ["ROW", "ROWCOL", "NONE"]
VERSIONS = {"2.6.1": ["NONE", "GZ", "SNAPPY", "LZ4", "ZSTD"], "3.0.0-alpha-4": ["NONE", "GZ"]}
WITH_TAGS = writer_cells()
BIG = WITH_TAGS  # values of 300 KiB: more than one codec chunk
NO_BIG = writer_cells(big_values=False)
NO_TAGS = [(cell._replace(tags=()), mvcc) for cell, mvcc in NO_BIG]


def rendered(cells: list[tuple[Cell, int]]) -> list[dict[str, Any]]:
    """The cells as ``HFilePrettyPrinter -p`` prints them (``printout.printed_cells``)."""
    return [{"row": to_string_binary(c.row), "family": to_string_binary(c.family),
             "qualifier": to_string_binary(c.qualifier), "timestamp": c.timestamp,
             "type": type_name(c.type), "value": to_string_binary(c.value),
             "vlen": len(c.value), "mvcc": mvcc,
             "tags": [{"type": t.type, "value": to_string_binary(t.value)} for t in c.tags]}
            for c, mvcc in cells]


def bloom_keys(text: str, section: str) -> int | None:
    """``No of Keys in bloom`` of a printed Bloom filter section, None when not present."""
    part = text.split(f"\n{section}:\n", 1)[1]
    found = re.match(r"\s+(?:Not present|BloomSize: \d+\n\s+No of Keys in bloom: (\d+))", part)
    assert found is not None, part[:200]
    return int(found[1]) if found[1] else None


def expected_bloom_keys(cells: list[tuple[Cell, int]], bloom: str) -> int | None:
    if bloom == "NONE":
        return None
    if bloom == "ROW":
        return len({c.row for c, _ in cells})
    return len({(c.row, c.qualifier) for c, _ in cells})


def family_deletes(cells: list[tuple[Cell, int]], bloom: str) -> int | None:
    """Rows with a family delete: the delete-family filter's keys (none beside ROWCOL)."""
    rows = {c.row for c, _ in cells
            if c.type in (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION)}
    return len(rows) if rows and bloom != "ROWCOL" else None


@pytest.mark.parametrize("version", list(VERSIONS))
def test_hfile_pretty_printer_reads_every_written_file(version: str, tmp_path: Path) -> None:
    skip_without_real_stack()
    written: dict[str, tuple[list[tuple[Cell, int]], str]] = {}
    cases = itertools.product(ENCODINGS, VERSIONS[version], [True, False])
    for n, (encoding, compression, tags) in enumerate(cases):
        cells = (BIG if encoding == "NONE" else NO_BIG) if tags else NO_TAGS
        bloom = BLOOMS[n % len(BLOOMS)]
        name = f"{encoding}-{compression}-{'tags' if tags else 'plain'}-{bloom}"
        with HFileWriter(tmp_path / name, HFileSettings(
                block_size=1024, encoding=encoding, compression=compression,
                include_tags=tags, bloom=bloom, index_chunk_size=128, index_min_entries=2,
                bloom_chunk_size=64 if tags else 128 * 1024)) as writer:
            for cell, mvcc in cells:
                writer.append(cell, mvcc)
            writer.close()
        written[name] = (cells, bloom)
    out = tmp_path / "printed"
    codes = print_hfiles(version, [tmp_path / name for name in written], out)
    assert codes == dict.fromkeys(written, 0)
    for name, (cells, bloom) in written.items():
        text = (out / f"{name}.hbase.txt").read_text(encoding="utf-8")
        assert "WARNING" not in text, name  # -k: a key out of order
        # index chunks of 128 bytes: leaf, intermediate and root levels
        assert int(printed_section(name, "Trailer", out)["numDataIndexLevels"]) >= 3, name
        assert f"Scanned kv count -> {len(cells)}\n" in text, name
        assert printed_cells(name, out) == rendered(cells), name
        assert bloom_keys(text, "Bloom filter") == expected_bloom_keys(cells, bloom), name
        if bloom != "NONE":  # chunks of 128 bytes hold about a hundred keys
            chunks = re.search(r"Bloom filter:\n(?:.*\n)*?\s+Number of chunks: (\d+)", text)
            assert chunks is not None and (int(chunks[1]) > 1) == ("-tags-" in name), name
        assert (bloom_keys(text, "Delete Family Bloom filter")
                == family_deletes(cells, bloom)), name


TABLE = "hfile_writer_bulk"
# family -> (its descriptor, the writer's settings for it)
FAMILIES = {
    b"f": (FamilyDescriptor(b"f", max_versions=1000, compression="GZ", bloom_filter="ROW",
                            data_block_encoding="FAST_DIFF", block_size=4096),
           HFileSettings(block_size=4096, encoding="FAST_DIFF", compression="GZ", bloom="ROW")),
    b"r": (FamilyDescriptor(b"r", max_versions=1000, compression="SNAPPY",
                            bloom_filter="ROWCOL", data_block_encoding="ROW_INDEX_V1",
                            block_size=2048),
           HFileSettings(block_size=2048, encoding="ROW_INDEX_V1", compression="SNAPPY",
                         bloom="ROWCOL", index_chunk_size=256, bloom_chunk_size=64)),
    b"d": (FamilyDescriptor(b"d", max_versions=1000, compression="ZSTD", bloom_filter="NONE",
                            data_block_encoding="DIFF"),
           HFileSettings(encoding="DIFF", compression="ZSTD")),
    b"n": (FamilyDescriptor(b"n", max_versions=1000, compression="LZ4", bloom_filter="ROW",
                            block_size=8192),
           HFileSettings(block_size=8192, compression="LZ4", bloom="ROW")),
    b"p": (FamilyDescriptor(b"p", max_versions=1000, bloom_filter="NONE",
                            data_block_encoding="PREFIX", block_size=1024),
           HFileSettings(block_size=1024, encoding="PREFIX", index_chunk_size=256)),
}


@pytest.fixture(scope="module")
def described(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    """The table, of two regions, created on the session's HBase; dropped after."""
    folder = tmp_path_factory.mktemp("hfile-bulk")
    endpoints = load_cluster_json(native_cluster_json(real_hbase, folder))
    with table_of(endpoints, TABLE, FAMILIES):
        yield {**real_hbase.described, "folder": folder, "endpoints": endpoints}


def test_bulk_load_returns_every_cell(described: dict[str, Any]) -> None:
    """``f`` in one file over both regions, which the tool splits (with HBase's own writer);
    the others in one file a region, as a bulk replay writes them, loaded as they are: every
    encoding and every compression among them."""
    load_and_scan(described, TABLE, FAMILIES, described["folder"] / "load", b"f")


def test_gets_pass_the_rowcol_bloom_filter(described: dict[str, Any]) -> None:
    """After the load, a get of one column (which a ROWCOL filter answers first) finds
    every version written of every column of the ROWCOL family."""
    with connect(described["endpoints"]) as client:
        if not list(client.scan(TABLE)):
            pytest.skip("the bulk load test did not load the table")
    assert rowcol_gets_missing(described["endpoints"], TABLE, b"r") == []
