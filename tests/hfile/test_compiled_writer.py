"""The compiled writer loop (``hfile/_writer.pyx``) against the pure-Python reference
(``HFileWriter.append_reference``, ``bloomwriter.murmur_hash`` and ``BloomChunk``): built by
the set-up, the same file byte for byte in every data block encoding and compression the
writer supports, with and without tags, with each Bloom filter; the same bytes on generated
cells (timestamps at the ends of the 64-bit range, every type, duplicates, empty parts); the
same refusal where the reference refuses."""

from __future__ import annotations

import io
import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hbase_migrate.compiled import Implementation
from hbase_migrate.hfile.bloomwriter import murmur_hash
from hbase_migrate.hfile.encoders import BY_NAME, flat_key
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.writer import (
    WRITABLE_CODECS,
    WRITER,
    HFileSettings,
    HFileWriteError,
    HFileWriter,
)
from hbase_migrate.wal.model import Cell, Tag, cell_order

LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
TYPES = (4, 8, 10, 12, 14)


def compiled_module() -> Any:
    if WRITER.module is None:
        pytest.fail("the compiled HFile writer loop is not built (make setup builds it)")
    return WRITER.module


def write(cells: list[tuple[Cell, int]], config: HFileSettings, name: Implementation
          ) -> bytes:
    """The file ``name``'s loop writes of ``cells`` (with their mvcc)."""
    before = WRITER.implementation()
    WRITER.use(name)
    try:
        out = io.BytesIO()
        with HFileWriter(out, config) as writer:
            for cell, mvcc in cells:
                writer.append(cell, mvcc)
            writer.close({b"BULKLOAD_SOURCE_TASK": b"t"})
        return out.getvalue()
    finally:
        WRITER.use(before)


def workload(tags: bool, count: int = 6_000) -> list[tuple[Cell, int]]:
    """Rows of one to three cells in order: every type, versions of a column, values alike
    and not, rows and qualifiers of varying length, tags on half the cells when asked."""
    cells = []
    for i in range(count):
        row = b"row-%d" % (i // 3) + b"x" * (i % 7 == 0)
        kind = TYPES[i % len(TYPES)]
        value = b"" if kind != 4 else (b"value-%d-" % (i % 11)) * (1 + i % 4)
        cell_tags = ((Tag(1, b"acl-%d" % (i % 5)), Tag(8, (i % 3).to_bytes(8, "big")))
                     if tags and i % 2 else ())
        cells.append(Cell(row, b"f", b"q" * (i % 3), 1_700_000_000_000 - (i * 7919) % 100_000,
                          kind, value, cell_tags))
    cells.sort(key=cell_order)
    return [(cell, i * 3 % 1_000) for i, cell in enumerate(cells)]


CASES = [(e, c, t) for e in BY_NAME for c in WRITABLE_CODECS for t in (False, True)]


@pytest.mark.parametrize(("encoding", "compression", "tags"), CASES,
                         ids=[f"{e}-{c}-{'tags' if t else 'no-tags'}" for e, c, t in CASES])
def test_the_same_file_in_every_encoding_and_compression(encoding: str, compression: str,
                                                         tags: bool, tmp_path: Path) -> None:
    compiled_module()
    cells = workload(tags)
    for bloom in ("NONE", "ROW", "ROWCOL"):
        config = HFileSettings(block_size=2_048, encoding=encoding, compression=compression,
                               bloom=bloom, include_tags=tags, create_time=1,
                               index_chunk_size=512, bloom_chunk_size=1_024)
        reference = write(cells, config, "python")
        assert write(cells, config, "compiled") == reference, (encoding, compression, bloom)
    (tmp_path / "f").write_bytes(reference)
    with HFileReader(tmp_path / "f") as reader:  # and the file holds the cells
        read = [(s.cell, s.mvcc) for s in reader.cells()]
    assert read == (cells if tags else [(c._replace(tags=()), m) for c, m in cells])


def test_tags_uncompressed_and_without_mvcc_too() -> None:
    compiled_module()
    cells = workload(True, 2_000)
    for encoding, compress_tags, mvcc in itertools.product(BY_NAME, (False, True),
                                                           (False, True)):
        config = HFileSettings(block_size=1_024, encoding=encoding, compress_tags=compress_tags,
                               include_mvcc=mvcc, create_time=1)
        assert write(cells, config, "compiled") == write(cells, config, "python")


TIMES = st.one_of(st.integers(0, 4), st.integers(-3, 3),
                  st.sampled_from([LONG_MIN, LONG_MAX, LONG_MIN + 1, LONG_MAX - 1, -1, 0,
                                   1 << 40, -(1 << 40), 1 << 62, -(1 << 62)]))
CELLS = st.lists(st.builds(
    Cell, st.sampled_from([b"", b"a", b"ab", b"b", b"\xff" * 300]), st.just(b"f"),
    st.sampled_from([b"", b"q", b"qq", b"r"]), TIMES, st.sampled_from(TYPES),
    st.sampled_from([b"", b"v", b"vv", b"w" * 200]),
    st.sampled_from([(), (Tag(1, b"x"),), (Tag(1, b"x"), Tag(2, b""))])), max_size=60)


@settings(max_examples=120, deadline=None)
@given(CELLS, st.sampled_from(sorted(BY_NAME)), st.sampled_from(["NONE", "ROW", "ROWCOL"]),
       st.integers(0, LONG_MAX))
def test_generated_cells_make_the_same_bytes(cells: list[Cell], encoding: str, bloom: str,
                                             mvcc: int) -> None:
    compiled_module()
    ordered = [(c, mvcc if i % 2 else i) for i, c in enumerate(sorted(cells, key=cell_order))]
    config = HFileSettings(block_size=256, encoding=encoding, bloom=bloom, create_time=1,
                           index_chunk_size=128)
    assert write(ordered, config, "compiled") == write(ordered, config, "python")


@pytest.mark.parametrize("bad", [
    Cell(b"a", b"f", b"q", 5, 4, b"v"),  # sorts before the cell written
    Cell(b"c", b"g", b"q", 5, 4, b"v"),  # another family
    Cell(b"b", b"f", b"q", 6, 4, b"v"),  # a newer version after an older one
    Cell(b"r" * 40_000, b"f", b"q", 5, 4, b"v"),  # a row too long
    Cell(b"c", b"f", b"q", 5, 256, b"v"),  # a type past a byte
    Cell(b"c", b"f", b"q", 1 << 63, 4, b"v"),  # a timestamp past 64 bits
])
def test_a_cell_refused_is_refused_alike(bad: Cell, tmp_path: Path) -> None:
    compiled_module()
    found = []
    for name in ("python", "compiled"):
        WRITER.use(name)
        try:
            with HFileWriter(tmp_path / "f") as writer:
                writer.append(Cell(b"b", b"f", b"q", 5, 4, b"v"))
                with pytest.raises(Exception) as raised:
                    writer.append(bad)
                found.append((type(raised.value), str(raised.value)))
                writer.append(Cell(b"b", b"f", b"q", 4, 4, b"v"))  # and goes on
        finally:
            WRITER.use("compiled")
    assert found[0] == found[1]
    assert found[0][0] is HFileWriteError or bad.timestamp > LONG_MAX


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40), st.integers(-(1 << 31), (1 << 31) - 1))
def test_the_compiled_murmur_hash_is_the_references(data: bytes, seed: int) -> None:
    assert compiled_module().murmur_hash(data, seed) == murmur_hash(data, seed)


def test_the_compiled_key_is_the_references() -> None:
    cell = Cell(b"row", b"fam", b"qual", LONG_MIN, 14, b"v")
    assert compiled_module().flat_key(cell) == flat_key(cell)


@pytest.mark.parametrize(("env", "expected"), [("0", "compiled"), ("1", "python")])
def test_the_environment_chooses_the_writer_loop(env: str, expected: str) -> None:
    compiled_module()
    out = subprocess.run(
        [sys.executable, "-c", "from hbase_migrate.hfile.writer import WRITER; "
         "print(WRITER.implementation())"],
        env={**os.environ, "HBASE_MIGRATE_PURE_PYTHON": env}, capture_output=True, text=True,
        check=True)
    assert out.stdout.strip() == expected
