"""A snapshot manifest's regions as a scan reads them: a split parent left out, its
daughters reading halves of its files through references, a link followed to its table;
HBase's dummy MOB region (start key ``.mob``, region id 0) no region a scan reads, its files
MOB files read from ``mobdir/`` and exported to ``archive/``."""

from __future__ import annotations

import hashlib

import pytest

from hbase_migrate.hfile.reference import Half
from hbase_migrate.snapshot.manifest import (
    RegionFile,
    SnapshotFile,
    SnapshotManifestError,
    parse_manifest,
    parse_regions,
    parse_table_schema,
)
from hbase_migrate.wal.protobuf import bytes_field, varint_field


def region_info(region_id: int, start: bytes, stop: bytes, *, split: bool = False) -> bytes:
    name = bytes_field(1, b"default") + bytes_field(2, b"t")
    return (varint_field(1, region_id) + bytes_field(2, name) + bytes_field(3, start)
            + bytes_field(4, stop) + (varint_field(5, 1) + varint_field(6, 1) if split else b""))


def store_file(name: str, reference: bytes | None = None) -> bytes:
    return bytes_field(1, name.encode()) + (b"" if reference is None
                                            else bytes_field(2, reference))


def region(info: bytes, *files: bytes) -> bytes:
    family = bytes_field(1, b"f") + b"".join(bytes_field(2, f) for f in files)
    return bytes_field(2, info) + bytes_field(3, family)


def reference(row: bytes, top: bool) -> bytes:
    key = len(row).to_bytes(2, "big") + row + b"\x00" + b"\x7f" + b"\xff" * 8
    return bytes_field(1, key) + varint_field(2, 0 if top else 1)


def encoded(start: bytes, region_id: int) -> str:
    return hashlib.md5(b"t," + start + b",%d" % region_id).hexdigest()


def test_daughters_read_halves_of_the_parent_and_links_their_table() -> None:
    parent = encoded(b"", 1)
    manifest = bytes_field(1, b"schema") + b"".join(bytes_field(2, r) for r in (
        region(region_info(3, b"m", b""), store_file(f"abc.{parent}", reference(b"m", True))),
        region(region_info(1, b"", b"", split=True), store_file("abc")),
        region(region_info(2, b"", b"m"), store_file(f"abc.{parent}", reference(b"m", False)),
               store_file("other=0123abcd-def"))))
    got = parse_regions(manifest, "data.manifest")
    assert [(r.start, r.stop, r.encoded) for r in got] == [
        (b"", b"m", encoded(b"", 2)), (b"m", b"", encoded(b"m", 3))]
    assert got[0].stores == ((b"f", (
        RegionFile(SnapshotFile("t", parent, "f", "abc"), Half(b"m", top=False)),
        RegionFile(SnapshotFile("other", "0123abcd", "f", "def")))),)
    assert got[1].stores == ((b"f", (
        RegionFile(SnapshotFile("t", parent, "f", "abc"), Half(b"m", top=True)),)),)
    assert got[0].overlaps(b"a", b"b") and not got[0].overlaps(b"m", b"")
    assert got[1].overlaps(b"", b"") and not got[1].overlaps(b"a", b"m")
    assert parse_table_schema(manifest, "data.manifest") == b"schema"


def test_the_mob_region_is_no_region_a_scan_reads() -> None:
    """A MOB table's snapshot lists its MOB files as the dummy region ``.mob`` with region
    id 0 (HBase's ``MobUtils.getMobRegionInfo``): it holds no rows of its own."""
    manifest = bytes_field(1, b"schema") + b"".join(bytes_field(2, r) for r in (
        region(region_info(5, b"", b""), store_file("abc")),
        region(region_info(0, b".mob", b""), store_file("d41d8cd98f00b204e9800998ecf8427e"
                                                        "20261126" + "0" * 32 + "_x"))))
    assert [(r.start, r.encoded) for r in parse_regions(manifest, "m")] == [
        (b"", encoded(b"", 5))]
    # a region of real rows from '.mob' (its region id a time, never 0) stays
    manifest = bytes_field(1, b"schema") + bytes_field(2, region(region_info(7, b".mob", b""),
                                                                 store_file("abc")))
    assert [r.start for r in parse_regions(manifest, "m")] == [b".mob"]


def test_a_manifest_that_does_not_parse_is_named() -> None:
    with pytest.raises(SnapshotManifestError, match=r"^snap/data\.manifest: not a snapshot data"):
        parse_regions(bytes_field(2, b"\x12\x01"), "snap/data.manifest")


def test_the_mob_region_is_no_scan_region_and_its_files_are_read_from_mobdir() -> None:
    mob = encoded(b".mob", 0)  # MobUtils.getMobRegionInfo: MD5 of "t,.mob,0"
    manifest = bytes_field(1, b"schema") + b"".join(bytes_field(2, r) for r in (
        region(region_info(5, b"", b""), store_file("ref")),
        region(region_info(0, b".mob", b""), store_file("mobfile"))))
    assert [r.encoded for r in parse_regions(manifest, "data.manifest")] == [encoded(b"", 5)]
    files = {f.hfile: f for f in parse_manifest(manifest, "data.manifest")}
    assert not files["ref"].mob and files["mobfile"].mob
    assert files["mobfile"].source_paths() == (
        f"mobdir/data/default/t/{mob}/f/mobfile", f"archive/data/default/t/{mob}/f/mobfile")
    assert files["mobfile"].target_path() == f"archive/data/default/t/{mob}/f/mobfile"
    assert files["ref"].source_paths()[0] == f"data/default/t/{encoded(b'', 5)}/f/ref"
