"""The compiled region digest from raw data blocks (``_digestscan.pyx``, through
``region.region_digest``) against the pure-Python path (the reference decoders, merge and
matcher in ``region.region_rows``, digested by ``stats.reference_digest_rows``) on
generated regions written by the project's HFile writer: one to three files of one family
and up to two of another, small blocks, deletes of every kind, versions, duplicate keys,
timestamps at both ends of 64 bits, bulk-loaded files, two regions digested one after the
other, WAL cells newer than the files, a read from a row and up to a row, and the family
rules drawn, files in every encoding. A region the compiled loop does not read (tags, a
fault) goes through the rows; one without tags (a WAL tail too, any encoding) must not."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.hfile import region
from hbase_migrate.hfile.decoders import CELLS, whole_block
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.region import DIGEST_SCAN, region_digest, region_rows
from hbase_migrate.hfile.visible import VISIBLE, ScanSpec
from hbase_migrate.hfile.writer import HFileSettings, HFileWriter
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, RangeStats, reference_digest_rows
from hbase_migrate.wal.model import Cell, Tag, cell_order

ROWS = [b"a", b"b", b"bb", b"m", b"n"]
KINDS = [4, 4, 4, 4, 4, 8, 10, 12, 14]
STAMPS = [0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, -(1 << 63), (1 << 63) - 1]
ENCODINGS = ["PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1"]


@st.composite
def store_file(draw: Any, family: bytes, tags: bool) -> dict[str, Any]:
    """A store file's cells (drawn from a seed: hypothesis's own draws of many small fields
    crowd on their first values), file info, encoding and whether it keeps mvcc."""
    rnd = random.Random(draw(st.integers(0, 1 << 32)))
    cells = sorted((Cell(rnd.choice(ROWS), family, rnd.choice([b"q", b"q", b"r"]),
                         rnd.choice(STAMPS), rnd.choice(KINDS), b"v%d" % rnd.randrange(10),
                         (Tag(8, (1 << 40).to_bytes(8, "big")),)
                         if tags and rnd.random() < 0.3 else ())
                    for _ in range(rnd.randrange(40))), key=cell_order)
    bulk = rnd.choice(["no", "no", "info", "info-skip"])
    info = {b"MAX_SEQ_ID_KEY": rnd.randrange(7).to_bytes(8, "big")}
    if bulk.startswith("info"):
        info[b"BULKLOAD_TIMESTAMP"] = b"\x00" * 8
    if bulk == "info-skip":
        info[b"SKIP_RESET_SEQ_ID"] = b"\x01"
    return {"family": family, "cells": [(c, rnd.randrange(10)) for c in cells], "info": info,
            "encoding": rnd.choice(["NONE"] * 4 + ENCODINGS),
            "mvcc": rnd.choice([True, True, False])}


def wal_tail(seed: int) -> list[StoreCell]:
    """Up to four WAL cells newer than the files (none half the time), in scan order."""
    rnd = random.Random(seed)
    cells = [StoreCell(Cell(rnd.choice(ROWS), rnd.choice([b"f", b"g"]), b"q",
                            rnd.choice(STAMPS), rnd.choice(KINDS), b"w"), rnd.randrange(100, 103))
             for _ in range(rnd.choice([0, 0, 0, 0, 1, 2, 3, 4]))]
    return sorted(cells, key=lambda s: (*cell_order(s.cell), -s.mvcc))


def region_files(tags: bool) -> Any:
    return st.tuples(st.integers(1, 3), st.integers(0, 2)).flatmap(lambda n: st.tuples(
        *[store_file(b"f", tags) for _ in range(n[0])],
        *[store_file(b"g", tags) for _ in range(n[1])])).map(list)


FAMILY = st.builds(lambda versions, min_versions, ttl, keep: FamilyDescriptor(
    b"", max_versions=versions, min_versions=min_versions, ttl=ttl, keep_deleted_cells=keep),
    st.integers(1, 3), st.integers(0, 1), st.sampled_from([FOREVER, FOREVER, 1]),
    st.sampled_from(["FALSE", "TRUE"]))


def write(folder: Path, files: list[dict[str, Any]], rows: tuple[bytes, bytes]
          ) -> dict[bytes, list[str]]:
    """The region's store files holding the cells of rows in ``rows`` ([from, to))."""
    stores: dict[bytes, list[str]] = {}
    for n, f in enumerate(files):
        family = f["family"]
        path = folder / f"{rows[0].decode() or '0'}-{n}"
        writer = HFileWriter(path, HFileSettings(block_size=120, encoding=f["encoding"],
                                                 include_mvcc=f["mvcc"]))
        for cell, mvcc in f["cells"]:
            if rows[0] <= cell.row < rows[1]:
                writer.append(cell, mvcc)
        writer.close(f["info"])
        stores.setdefault(family, []).append(str(path))
    return stores


def compiled_decoders_read(stores: dict[bytes, list[str]]) -> bool:
    """Whether the compiled block decoders read every data block of the region's files
    (DIFF's leaves timestamps 2^63 or more apart to the reference)."""
    for paths in stores.values():
        for path in paths:
            with HFileReader(path) as reader:
                def whole(encoding: int, data: bytes, tags: bool, mvcc: bool) -> Any:
                    return whole_block(encoding, data, tags=tags, mvcc=mvcc,
                                       compressed_tags=reader.compressed_tags)
                if any(block is None for block in reader.data_blocks(b"", whole)):
                    return False
    return True


class Spy:
    """Counts the regions read through ``rows_of`` (``region_rows``' rows), not the
    compiled loop."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        monkeypatch.setattr(region, "rows_of", self.wrap(region.rows_of))

    def wrap(self, real: Any) -> Any:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)
        return counted


def reference(regions: list[dict[bytes, list[str]]], families: list[FamilyDescriptor],
              scan: ScanSpec, key_range: KeyRange, newer: list[StoreCell]) -> RangeStats:
    before = VISIBLE.implementation(), CELLS.implementation()
    VISIBLE.use("python")
    CELLS.use("python")
    try:
        rows: Iterator[list[Cell]] = itertools.chain.from_iterable(
            region_rows(stores, families, scan, key_range.start, key_range.stop,
                        newer=(lambda _flushed: iter(newer)) if n == 0 and newer else None)
            for n, stores in enumerate(regions))
        return reference_digest_rows(key_range, rows)
    finally:
        VISIBLE.use(before[0])
        CELLS.use(before[1])


def compiled(regions: list[dict[bytes, list[str]]], families: list[FamilyDescriptor],
             scan: ScanSpec, key_range: KeyRange, newer: list[StoreCell]) -> RangeStats:
    into = DIGEST.module.RangeDigest()  # type: ignore[union-attr]
    for n, stores in enumerate(regions):
        region_digest(stores, families, scan, into, key_range.start, key_range.stop,
                      newer=(lambda _flushed: iter(newer)) if n == 0 and newer else None)
    return RangeStats(key_range, *into.result())


def built() -> None:
    if DIGEST_SCAN.module is None or DIGEST.module is None or VISIBLE.module is None:
        pytest.skip("the compiled region digest is not built (make setup)")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(plain=region_files(tags=False), tagged=region_files(tags=True), f=FAMILY, g=FAMILY,
       start=st.sampled_from([b"", b"", b"b", b"bb", b"n"]),
       stop=st.sampled_from([b"", b"", b"c", b"nn"]), tail=st.integers(0, 1 << 32),
       with_tags=st.booleans())
def test_the_compiled_region_digest_is_the_python_paths(
        tmp_path_factory: pytest.TempPathFactory, plain: list[dict[str, Any]],
        tagged: list[dict[str, Any]], f: FamilyDescriptor, g: FamilyDescriptor,
        start: bytes, stop: bytes, tail: int, with_tags: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    built()
    files = tagged if with_tags else plain
    folder = tmp_path_factory.mktemp("region")
    regions = [write(folder, files, (b"", b"m")), write(folder, files, (b"m", b"\xff"))]
    families = [dataclasses.replace(f, name=b"f"), dataclasses.replace(g, name=b"g")]
    scan = ScanSpec(now_ms=1003, max_versions=1 << 30)
    key_range = KeyRange("t", start, stop if stop > start else b"")
    newer = wal_tail(tail)
    expected = reference(regions, families, scan, key_range, newer)
    spy = Spy(monkeypatch)
    assert compiled(regions, families, scan, key_range, newer) == expected
    if not any(c.tags for x in files for c, _ in x["cells"]) and all(
            compiled_decoders_read(stores) for stores in regions):
        # every region read by the compiled loop alone, whatever its files' encodings
        assert spy.calls == 0
    monkeypatch.undo()


@pytest.mark.parametrize("encoding", ["NONE", *ENCODINGS])
def test_a_region_without_tags_is_read_by_the_compiled_loop_in_every_encoding(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str) -> None:
    """Two families' files in ``encoding``, many blocks each, versions and deletes: the
    compiled loop reads the region alone, to the reference's digest. (Timestamps 2^64 apart,
    which DIFF's compiled decoder leaves to the reference, are the generated regions'.)"""
    built()
    rnd = random.Random(encoding)
    stamps = [1_700_000_000_000 + n for n in range(6)]
    files = [{"family": family, "info": {b"MAX_SEQ_ID_KEY": bytes([8, n])}, "encoding": encoding,
              "mvcc": n == 0,
              "cells": sorted(((Cell(b"r%04d" % rnd.randrange(300), family, rnd.choice(
                  [b"a", b"b", b"c"]), rnd.choice(stamps), rnd.choice(KINDS),
                  b"v" * rnd.randrange(30)), rnd.randrange(5)) for _ in range(400)),
                  key=lambda c: cell_order(c[0]))}
             for family in (b"f", b"g") for n in range(2)]
    stores = write(tmp_path, files, (b"", b"\xff"))
    families = [FamilyDescriptor(b"f", max_versions=2), FamilyDescriptor(b"g")]
    scan = ScanSpec(now_ms=1003, max_versions=1 << 30)
    key_range = KeyRange("t", b"r0100", b"")
    expected = reference([stores], families, scan, key_range, [])
    spy = Spy(monkeypatch)
    assert compiled([stores], families, scan, key_range, []) == expected
    assert spy.calls == 0 and expected.cells > 100


@pytest.mark.parametrize("encoding", ["NONE", "FAST_DIFF"])
def test_a_region_left_half_way_is_digested_once(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  encoding: str) -> None:
    """A cell with tags after plain ones: the compiled loop has fed the digest the cells
    before it when it gives up; the region is read again through the rows, the digest put
    back first: the rows and cells are counted once and the digest is the reference's."""
    built()
    cells = [(Cell(b"r%03d" % n, b"f", b"q", 1, 4, b"v" * 40), 1) for n in range(50)]
    cells.append((Cell(b"r999", b"f", b"q", 1, 4, b"t", (Tag(8, b"\x00" * 8),)), 1))
    file = {"family": b"f", "cells": cells, "info": {}, "encoding": encoding, "mvcc": True}
    stores = write(tmp_path, [file], (b"", b"\xff"))
    families = [FamilyDescriptor(b"f")]
    scan = ScanSpec(now_ms=10)
    key_range = KeyRange("t", b"", b"")
    expected = reference([stores], families, scan, key_range, [])
    spy = Spy(monkeypatch)
    found = compiled([stores], families, scan, key_range, [])
    assert spy.calls == 1
    assert (found.rows, found.cells) == (50, 50)  # the tagged cell's TTL ran out
    assert found == expected
