"""A table's key range read from an HBase snapshot's files, with no request to its region
servers: the range statistics of ``validate --from snapshot``'s source side.

The snapshot's ``data.manifest`` gives its regions and their store files
(``manifest.parse_regions``: HFileLinks and split references resolved to the file they
name, found live or under ``archive/``, as the export finds them) and the table schema
HBase recorded in it. For each region meeting
the range, one at a time, its store files are read where they are, streamed over WebHDFS
(no copy: a seek opens a new stream there; the bytes read taken from the throttle as the
export's copies are), from the data block each file's index leads the range's start row to,
as a normal scan of every version returns them
(``hfile/region.py``): the family rules are the table
schema's, the TTLs counted at ``now_ms``; MOB reference cells are resolved to their MOB
files' cells (``hfile/mob.py``), each MOB file copied once per range, live from ``mobdir/``
or archived. The cells are digested by
``ranges.stats.digest_rows``, exactly as a live scan's, so the two digests are comparable
(compiled, a region at a time by ``hfile.region.region_digest``: from the raw data blocks
where the region allows, the same rows, cells and digest).
Memory: one block per store file and one row.

A validation from both snapshots reads the target's side the same way (from its own
cluster, its table's name) and adds to the source's the WAL edits past the snapshot's
files up to the replay's positions (``tail``: :mod:`hbase_migrate.snapshot.tail`), merged
as each region's memstore would hold them.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from hbase_migrate.cluster.descriptors import ALL_VERSIONS, FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.schema import decode_table_schema
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hdfs.datanode import HDFS_SCHEME, open_store_file
from hbase_migrate.hfile.mob import MobResolver
from hbase_migrate.hfile.region import Newer, Source, Stores, region_digest, region_rows
from hbase_migrate.hfile.visible import ScanSpec
from hbase_migrate.limits import Throttle
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, Keep, RangeStats, digest_rows
from hbase_migrate.snapshot.export import ExportFile, locate, open_root
from hbase_migrate.snapshot.manifest import (
    MANIFEST_FILE,
    SNAPSHOT_DIR,
    RegionFile,
    SnapshotManifestError,
    SnapshotRegion,
    parse_regions,
    parse_table_schema,
)
from hbase_migrate.snapshot.tail import Tail
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import ProtobufError
from hbase_migrate.wal.source import open_source


def snapshot_regions(root: HdfsRoot, snapshot: str) -> list[SnapshotRegion]:
    """The regions of a completed snapshot under ``root``, by start row."""
    return read_snapshot(root, snapshot)[0]


def read_snapshot(root: HdfsRoot, snapshot: str
                  ) -> tuple[list[SnapshotRegion], TableDescriptor]:
    """The regions (by start row) and the table's descriptor of a completed snapshot."""
    path = f"{SNAPSHOT_DIR}/{snapshot}/{MANIFEST_FILE}"
    with root.read(path) as chunks:
        data = b"".join(chunks)
    where = root.where(path)
    schema = parse_table_schema(data, where)
    try:
        descriptor = decode_table_schema(schema)
    except ProtobufError as exc:
        raise SnapshotManifestError(f"{where}: its table schema does not parse: {exc}") from None
    return parse_regions(data, where), descriptor


def range_rows(root: HdfsRoot, snapshot: str, regions: Sequence[SnapshotRegion],
               families: Sequence[FamilyDescriptor], key_range: KeyRange, now_ms: int, *,
               scratch: Path | None = None, throttle: Throttle | None = None,
               table: str | None = None, tail: Tail | None = None
               ) -> Iterator[list[Cell]]:
    """The visible cells of ``key_range``, every version, a row per list, in scan order;
    ``table``: the snapshot's table when not the range's (a target's); ``tail``: the WAL
    edits past the snapshot's files to add (:mod:`hbase_migrate.snapshot.tail`)."""
    scan = ScanSpec(now_ms=now_ms, max_versions=ALL_VERSIONS)
    for stores, mob, newer in _region_reads(root, snapshot, regions, key_range, scratch,
                                            throttle, table, tail):
        yield from region_rows(stores, families, scan, key_range.start, key_range.stop,
                               mob, newer)


def _region_reads(root: HdfsRoot, snapshot: str, regions: Sequence[SnapshotRegion],
                  key_range: KeyRange, scratch: Path | None, throttle: Throttle | None,
                  table: str | None, tail: Tail | None
                  ) -> Iterator[tuple[Stores, MobResolver, Newer | None]]:
    """Each region of ``regions`` meeting ``key_range``: its store files, the range's MOB
    resolver and its WAL tail (what ``range_rows`` reads of it)."""
    name = table or key_range.table
    if tail is not None:
        tail.check(name, (r.encoded for r in regions))
    with tempfile.TemporaryDirectory(prefix="snapshot-mob-", dir=scratch) as mob_folder, \
            MobResolver(name, functools.partial(
                _fetch_mob, root, Path(mob_folder), throttle)) as mob:
        for region in regions:
            if not region.overlaps(key_range.start, key_range.stop):
                continue
            stores = {family: [store_file(root, snapshot, f, throttle) for f in files]
                      for family, files in region.stores}
            newer: Newer | None = None if tail is None else \
                functools.partial(tail.newer, name, region.encoded)
            yield stores, mob, newer


def snapshot_source_stats(source: ClusterSpec, snapshot: str, key_range: KeyRange,
                          now_ms: int, throttle: Throttle | None, keep: Keep | None = None,
                          *, table: str | None = None, tail: Tail | None = None
                          ) -> RangeStats:
    """A side of ``validate --from snapshot`` (``ranges.tasks.SnapshotReader``):
    ``key_range`` read from ``snapshot``'s files over ``source``'s WebHDFS (``table``:
    the snapshot's table when not the range's; ``tail``: WAL edits to add)."""
    return snapshot_range_stats(open_root(source), snapshot, key_range, now_ms,
                                throttle=throttle, keep=keep, table=table, tail=tail)


def snapshot_range_stats(root: HdfsRoot, snapshot: str, key_range: KeyRange, now_ms: int, *,
                         scratch: Path | None = None, throttle: Throttle | None = None,
                         keep: Keep | None = None, table: str | None = None,
                         tail: Tail | None = None) -> RangeStats:
    """Rows, cells and digest of ``key_range`` in the snapshot (its families' rules from
    the table schema it recorded), as ``range_stats`` gives them for a live scan (the
    rows through ``keep`` first, when given)."""
    regions, descriptor = read_snapshot(root, snapshot)
    compiled = DIGEST.compiled()
    if keep is not None or compiled is None:
        rows = range_rows(root, snapshot, regions, descriptor.families, key_range, now_ms,
                          scratch=scratch, throttle=throttle, table=table, tail=tail)
        return digest_rows(key_range, rows if keep is None else keep(rows))
    # the compiled digest, a region at a time (from the raw blocks where it can)
    scan = ScanSpec(now_ms=now_ms, max_versions=ALL_VERSIONS)
    into = compiled.RangeDigest()
    for stores, mob, newer in _region_reads(root, snapshot, regions, key_range, scratch,
                                            throttle, table, tail):
        region_digest(stores, descriptor.families, scan, into, key_range.start,
                      key_range.stop, mob, newer)
    rows, cells, digest = into.result()
    return RangeStats(key_range, rows, cells, digest)


def store_file(root: HdfsRoot, snapshot: str, store: RegionFile, throttle: Throttle | None
                ) -> Source:
    """A store file of the snapshot, read where it is now (live or archived), its bytes
    taken from ``throttle`` as they come."""
    path, _status = locate(root, ExportFile.of(snapshot, store.file))
    url = root.read_url(path)
    metered = None if throttle is None else functools.partial(throttle.take, 0)
    # from the DataNodes (as a region server reads) or over WebHDFS
    opener = open_store_file if url.startswith(f"{HDFS_SCHEME}://") else open_source
    return Source(url, store.half, functools.partial(opener, url, metered))


def _fetch_mob(root: HdfsRoot, folder: Path, throttle: Throttle | None,
               paths: Sequence[str]) -> Path | None:
    """The MOB file at the first of ``paths`` there is, copied into ``folder`` (kept for the
    range: the references of several regions may name it); None when at none."""
    for path in paths:
        if root.status(path) is not None:
            return _copy(root, path, folder / path.replace("/", "-"), throttle)
    return None


def _copy(root: HdfsRoot, path: str, local: Path, throttle: Throttle | None) -> Path:
    if local.exists():
        return local
    with root.read(path) as chunks, local.open("wb") as out:
        for chunk in chunks:
            if throttle is not None:
                throttle.take(0, len(chunk))
            out.write(chunk)
    return local
