"""The compiled data block decoders against the pure-Python references: built by the set-up,
the same cells for every data block of the golden files (on the compiled path, not handed to
the reference), and the same cells and error for blocks damaged past their checksums. An
encoded block written back unencoded (``unencoded_block``, which the compiled region digest reads)
holds the reference's cells, and is refused where they have tags or the decoder declines."""

from __future__ import annotations

import struct
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hbase_migrate.compiled import Implementation
from hbase_migrate.errors import HFileError
from hbase_migrate.hfile.block import DATA, ENCODED_DATA, HEADER_SIZE
from hbase_migrate.hfile.checksum import CHECKSUM_CRC32C, crc32c, num_chunks
from hbase_migrate.hfile.decoders import CELLS, COMPILED_NAMES, NONE, REFERENCES, decode
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.rowindex import ROW_INDEX_V1
from tests.hfile.golden_files import CASES
from tests.hfile.printout import GOLDEN

# (file, encoding, block data after the encoding id, tags, mvcc, compressed tags) of every
# golden data block
Block = tuple[str, int, bytes, bool, bool, bool]


@cache
def golden_blocks() -> tuple[Block, ...]:
    found = []
    for folder, name in CASES:
        with HFileReader(folder / name) as reader:
            t = reader.trailer
            offset = t.first_data_block_offset
            while offset < t.load_on_open_offset:
                block = reader.blocks.read(offset, t.load_on_open_offset)
                where = f"{folder.name}/{name}@{offset}"
                flags = (reader.tags, reader.mvcc, reader.compressed_tags)
                if block.magic == DATA:
                    found.append((where, NONE, block.data, *flags))
                elif block.magic == ENCODED_DATA:
                    found.append((where, int.from_bytes(block.data[:2], "big"), block.data[2:],
                                  *flags))
                offset += block.on_disk_size
    return tuple(found)


def outcome(block: Block, data: bytes, name: Implementation) -> tuple[Any, ...]:
    """The cells ``decode`` hands out for ``data`` read as ``block``'s, and how it ended."""
    _, encoding, _, tags, mvcc, compressed = block
    CELLS.use(name)
    cells = []
    try:
        for stored in decode(encoding, data, tags=tags, mvcc=mvcc, compressed_tags=compressed):
            cells.append(stored)
    except Exception as exc:  # any end, compared as it is
        return tuple(cells), type(exc).__name__, str(exc)
    return tuple(cells), None, None


@pytest.fixture
def reference_after() -> Any:
    if CELLS.module is None:
        pytest.skip("the compiled cell decoders are not built")
    before = CELLS.implementation()
    yield
    CELLS.use(before)


def test_the_set_up_builds_the_compiled_decoders() -> None:
    assert CELLS.module is not None, (
        "hbase_migrate/hfile/_cells is not built: run `make setup` "
        "(or `python scripts/build-speedups.py`)")


def test_every_golden_block_decodes_the_same_compiled(reference_after: None) -> None:
    """Every data block of every golden file, in every encoding: the compiled decoder reads
    it whole (no hand-over to the reference) into the reference's cells."""
    blocks = golden_blocks()
    assert {encoding for _, encoding, *_ in blocks} == set(REFERENCES)
    assert {b[1] for b in blocks if b[5]} == set(REFERENCES) - {NONE}
    for block in blocks:
        where, encoding, data, tags, mvcc, compressed = block
        compiled = getattr(CELLS.module, COMPILED_NAMES[encoding])(data, tags, mvcc, compressed)
        expected = list(REFERENCES[encoding](data, tags=tags, mvcc=mvcc,
                                             compressed_tags=compressed))
        assert compiled is not None, where
        assert compiled == expected and len(expected) > 0, where


def written_back(block: Block, data: bytes) -> list[StoreCell] | None:
    """The cells of ``data`` (read as ``block``'s) written back unencoded, as the reference
    reads an unencoded block without tags; None where ``unencoded_block`` answers None."""
    _, encoding, _, tags, mvcc, _compressed = block
    plain = CELLS.module.unencoded_block(encoding, data, tags, mvcc)  # type: ignore[union-attr]
    return None if plain is None else list(REFERENCES[NONE](plain, tags=False, mvcc=mvcc))


def test_encoded_golden_blocks_written_back_unencoded_hold_the_same_cells(
        reference_after: None) -> None:
    """Every encoded data block of the golden files written back unencoded: the reference's
    cells where none has tags, refused where one has (tags the compiled digest leaves to the
    rows), refused for an unencoded block (read in place, never written back)."""
    blocks = golden_blocks()
    seen = set()
    for block in blocks:
        where, encoding, data, tags, mvcc, compressed = block
        found = written_back(block, data)
        if encoding == NONE:
            assert found is None, where
            continue
        expected = list(REFERENCES[encoding](data, tags=tags, mvcc=mvcc,
                                             compressed_tags=compressed))
        tagged = any(stored.cell.tags for stored in expected)
        assert found == (None if tagged else expected), where
        seen.add((encoding, tagged))
    # the golden files' PREFIX, DIFF and FAST_DIFF blocks all hold tags: untagged ones in
    # every encoding are the writer's, in test_compiled_region_digest.py
    assert {e for e, _ in seen} == set(REFERENCES) - {NONE}
    assert {t for _, t in seen} == {False, True}


@st.composite
def damaged_block(draw: st.DrawFn, compressed_tags: bool = False) -> tuple[Block, bytes]:
    """A golden data block with one to three bytes changed, cut short or lengthened; with
    ``compressed_tags``, one whose tags are dictionary-compressed."""
    blocks = golden_blocks()
    if compressed_tags:
        blocks = tuple(b for b in blocks if b[5] and b[1] != ROW_INDEX_V1)
    block = draw(st.sampled_from(blocks))
    data = bytearray(block[2])
    how = draw(st.sampled_from(["flip", "flip", "cut", "append"]))
    if how == "cut":
        del data[draw(st.integers(0, len(data) - 1)):]
    elif how == "append":
        data += draw(st.binary(min_size=1, max_size=12))
    else:
        for _ in range(draw(st.integers(1, 3))):
            pos = draw(st.integers(0, len(data) - 1))
            data[pos] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF, data[pos] ^ 0x01,
                                              data[pos] ^ 0x10, data[pos] ^ 0x80]))
    return block, bytes(data)


@settings(max_examples=400, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged_block())
def test_damaged_blocks_decode_the_same(reference_after: None,
                                        case: tuple[Block, bytes]) -> None:
    """Cells, then the error, as the reference; and the compiled decoder reads a block whole
    only when the reference reads it whole into the same cells."""
    same_outcomes(case)


def same_outcomes(case: tuple[Block, bytes]) -> None:
    block, data = case
    expected = outcome(block, data, "python")
    assert outcome(block, data, "compiled") == expected
    assert expected[1] in (None, "CellCorruptError")
    _, encoding, _, tags, mvcc, compressed = block
    compiled = getattr(CELLS.module, COMPILED_NAMES[encoding])(data, tags, mvcc, compressed)
    assert compiled is None or (tuple(compiled), None, None) == expected
    if encoding != NONE:  # written back only where the reference reads it whole, no tags
        found = written_back(block, data)
        assert found is None or ((tuple(found), None, None) == expected
                                 and not any(s.cell.tags for s in found))


@settings(max_examples=300, deadline=4000,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(damaged_block(compressed_tags=True))
def test_damaged_blocks_with_compressed_tags_decode_the_same(
        reference_after: None, case: tuple[Block, bytes]) -> None:
    """The same on PREFIX, DIFF and FAST_DIFF blocks whose tags are compressed (a literal's
    length, a slot reference past the dictionary, a tag cut short)."""
    same_outcomes(case)


@pytest.mark.parametrize("name", ["small-fastdiff", "small-diff", "small-prefix",
                                  "small-rowindex", "small", "small-tagcompression"])
def test_every_cut_of_a_block_decodes_the_same(reference_after: None, name: str) -> None:
    block = next(b for b in golden_blocks() if b[0].startswith(f"{GOLDEN.name}/{name}@"))
    for end in range(len(block[2])):
        cut = block[2][:end]
        assert outcome(block, cut, "compiled") == outcome(block, cut, "python"), end


def resealed(data: bytearray, offset: int) -> None:
    """The CRC32C checksums of the block at ``offset`` computed again over its bytes (as
    ``ChecksumUtil`` lays them out: ``block.py``), so a change in it passes them."""
    kind, per_chunk, with_header = struct.unpack_from(">bii", data, offset + 24)
    assert kind == CHECKSUM_CRC32C
    body = bytes(data[offset : offset + with_header])
    sums = b"".join(struct.pack(">I", crc32c(body[i * per_chunk : (i + 1) * per_chunk]))
                    for i in range(num_chunks(with_header, per_chunk)))
    data[offset + with_header : offset + with_header + len(sums)] = sums


def read_file(path: Path, name: Implementation) -> tuple[Any, ...]:
    CELLS.use(name)
    cells = []
    try:
        with HFileReader(path) as reader:
            cells.extend(reader.cells())
    except HFileError as exc:
        return tuple(cells), type(exc).__name__, str(exc), exc.offset
    return tuple(cells), None, None, None


@pytest.mark.parametrize("name", ["small-fastdiff", "small-diff", "small-prefix",
                                  "small-rowindex", "small", "small-tagcompression"])
def test_a_file_damaged_past_its_checksums_fails_the_same(reference_after: None, name: str,
                                                          tmp_path: Path) -> None:
    """Bytes of the one data block (offset 0) changed and its checksums made again: both
    decoders hand out the same cells, then fail naming the file and block 0, or read on."""
    data = bytearray((GOLDEN / name).read_bytes())
    with_header = struct.unpack_from(">i", data, 29)[0]
    damaged = tmp_path / name
    failures = 0
    for at in range(HEADER_SIZE + 2, with_header, 3):
        before = data[at]
        data[at] = before ^ 0x41
        resealed(data, 0)
        damaged.write_bytes(data)
        data[at] = before
        resealed(data, 0)
        expected = read_file(damaged, "python")
        assert read_file(damaged, "compiled") == expected, at
        if expected[1] is not None:
            failures += 1
            assert expected[3] == 0 and str(damaged) in expected[2], at
    assert failures > 0
    # the checksums made again over the restored block are HBase's own
    assert zlib.crc32(data) == zlib.crc32((GOLDEN / name).read_bytes())
