"""An HBase snapshot's manifest (format v2, HBase 0.98.x and later): what it describes and
which files it references.

A completed snapshot is the folder ``<root>/.hbase-snapshot/<name>/`` holding
``.snapshotinfo`` (a ``SnapshotDescription``: name 1, table 2, creation_time 3, type 4,
version 5, owner 6, ttl 8) and ``data.manifest`` (a ``SnapshotDataManifest``: table_schema 1,
region_manifests 2). Each ``SnapshotRegionManifest`` holds region_info 2 (a ``RegionInfo``:
region_id 1, table_name 2 {namespace 1, qualifier 2}, start_key 3) and family_files 3
({family_name 1, store_files 2 {name 1, reference 2, file_size 3}}).

A store file name is one of

* an HFile of the region (``<hex>`` or ``<hex>_SeqId_<n>_``);
* an HFileLink (``[<ns>=]<table>=<region>-<hfile>``), as a cloned table holds: the file is
  the linked table's;
* a reference file (``<hfile>.<parent region>``) of a daughter region after a split: the
  file is the parent region's (HBase rebuilds the reference from the manifest on clone).

Each lives under ``data/<ns>/<table>/<region>/<family>/`` until HBase archives it (compaction,
a dropped table, a split's parent cleaned) to the same path under ``archive/``: a reader looks
in both, as HBase's HFileLink does. ExportSnapshot writes every file to the target root's
``archive/data/<ns>/<table>/<region>/<family>/<hfile>``, where a clone links to it.

A table with MOB families has one more region in the manifest, HBase's dummy MOB region
(``MobUtils.getMobRegionInfo``: start key ``.mob``, region id 0), whose files are the MOB
files: under ``mobdir/data/<ns>/<table>/<mob region>/<family>/`` until archived to the same
``archive/`` path as any HFile. ExportSnapshot writes them to ``archive/`` like the others;
the clone links its own MOB folder to them and its region servers read a MOB value from the
``archive/`` folder of the table its reference cell names.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from hbase_migrate.cluster.descriptors import encoded_region_name
from hbase_migrate.hfile.mob import MOB_DIR, is_mob_region, mob_region
from hbase_migrate.hfile.reference import Half, parse_reference_message
from hbase_migrate.tablename import DEFAULT_NAMESPACE, normalize_table_name, split_table_name
from hbase_migrate.wal.protobuf import Message, ProtobufError

SNAPSHOT_DIR = ".hbase-snapshot"
WORKING_DIR = f"{SNAPSHOT_DIR}/.tmp"
INFO_FILE = ".snapshotinfo"
MANIFEST_FILE = "data.manifest"
_LINK = re.compile(r"^(?:([A-Za-z0-9_]+)=)?([A-Za-z0-9_][A-Za-z0-9_.-]*)=([0-9a-f]+)-(.+)$")
_REFERENCE = re.compile(r"^(.+)\.([0-9a-f]+)$")


class SnapshotManifestError(ProtobufError):
    """A snapshot file that does not parse as HBase writes it."""


@dataclass(frozen=True)
class SnapshotDescription:
    """``.snapshotinfo``: times in ms, ``ttl`` in seconds (0: never expires)."""

    name: str
    table: str
    creation_time: int
    ttl: int

    def expires_at(self) -> int | None:
        """When HBase's cleaner may delete the snapshot (ms), or None."""
        return self.creation_time + self.ttl * 1000 if self.ttl > 0 else None


@dataclass(frozen=True, order=True)
class SnapshotFile:
    """One HFile a snapshot references, where it is stored: ``table`` (``[ns:]name``),
    ``region`` (encoded) and ``family`` of the folder, ``hfile`` its name; ``size`` as the
    manifest records it (None when it does not)."""

    table: str
    region: str
    family: str
    hfile: str
    size: int | None = None

    def folder(self) -> str:
        namespace, qualifier = split_table_name(self.table)
        return f"data/{namespace}/{qualifier}/{self.region}/{self.family}"

    @property
    def mob(self) -> bool:
        """Whether it is a MOB file (of the table's dummy MOB region)."""
        return self.region == mob_region(self.table)

    def source_paths(self) -> tuple[str, str]:
        """Where the file may be under the source root: live, then archived. A file of the
        table's MOB region lives under ``mobdir/`` (``HFileLink``'s ``mobPath``,
        ``MobUtils.getMobRegionPath``)."""
        live = posixpath.join(self.folder(), self.hfile)
        return f"{MOB_DIR}/{live}" if self.mob else live, f"archive/{live}"

    def target_path(self) -> str:
        """Where ExportSnapshot puts it under the target root (a clone links there)."""
        return f"archive/{posixpath.join(self.folder(), self.hfile)}"


def parse_description(data: bytes, where: str) -> SnapshotDescription:
    """A ``.snapshotinfo`` file's content; ``where`` names it in errors."""
    try:
        message = Message(data, f"{where} (SnapshotDescription)")
        return SnapshotDescription(
            message.req_str(1, "name"), normalize_table_name(message.opt_str(2, "table") or ""),
            message.opt_int(3, "creation_time") or 0, message.opt_int(8, "ttl") or 0)
    except (ProtobufError, ValueError) as exc:
        raise SnapshotManifestError(f"{where}: not a snapshot description: {exc}") from None


def parse_manifest(data: bytes, where: str) -> list[SnapshotFile]:
    """Every HFile a ``data.manifest`` references, each once, sorted; ``where`` names it."""
    try:
        manifest = Message(data, f"{where} (SnapshotDataManifest)")
        found: set[SnapshotFile] = set()
        for raw in manifest.repeated(2):
            region = Message(raw, f"{where} region manifest")
            info = Message(region.req_bytes(2, "region_info"), f"{where} RegionInfo")
            name = Message(info.req_bytes(2, "table_name"), f"{where} TableName")
            namespace = name.req_bytes(1, "namespace").decode()
            qualifier = name.req_bytes(2, "qualifier").decode()
            table = qualifier if namespace == DEFAULT_NAMESPACE else f"{namespace}:{qualifier}"
            encoded = encoded_region_name(table, info.opt_bytes(3) or b"",
                                          info.req_int(1, "region_id"))
            for family_raw in region.repeated(3):
                family = Message(family_raw, f"{where} family files")
                family_name = family.req_bytes(1, "family_name").decode()
                for store_raw in family.repeated(2):
                    store = Message(store_raw, f"{where} store file")
                    found.add(_located(table, encoded, family_name, store.req_str(1, "name"),
                                       2 in store, store.opt_int(3)))
    except (ProtobufError, ValueError, UnicodeDecodeError) as exc:
        raise SnapshotManifestError(f"{where}: not a snapshot data manifest: {exc}") from None
    return sorted(found, key=lambda f: (f.table, f.region, f.family, f.hfile))


@dataclass(frozen=True)
class RegionFile:
    """A store file of a snapshot's region: where it is stored, and for a reference file
    of a split daughter, the half of that file it reads."""

    file: SnapshotFile
    half: Half | None = None


@dataclass(frozen=True)
class SnapshotRegion:
    """One region of a snapshot, as its scan reads it: ``start``/``stop`` rows (``b""``
    open), its store files by family (bytes)."""

    table: str
    encoded: str
    start: bytes
    stop: bytes
    stores: tuple[tuple[bytes, tuple[RegionFile, ...]], ...]

    def overlaps(self, start: bytes, stop: bytes) -> bool:
        """Whether rows ``[start, stop)`` (``b""`` open) meet the region's."""
        return (not stop or self.start < stop) and (not self.stop or start < self.stop)


def parse_table_schema(data: bytes, where: str) -> bytes:
    """The ``TableSchema`` message a ``data.manifest`` holds (field 1)."""
    try:
        return Message(data, f"{where} (SnapshotDataManifest)").req_bytes(1, "table_schema")
    except ProtobufError as exc:
        raise SnapshotManifestError(f"{where}: not a snapshot data manifest: {exc}") from None


def parse_regions(data: bytes, where: str) -> list[SnapshotRegion]:
    """The regions a scan of the snapshot reads, by start row: split parents (offline, their
    daughters' references read their files), read replicas and the MOB region (the table's
    MOB files, ``SnapshotManifest.addMobRegion``: read through the reference cells that
    name them, ``hfile/mob.py``) left out."""
    regions = []
    try:
        manifest = Message(data, f"{where} (SnapshotDataManifest)")
        for raw in manifest.repeated(2):
            region = Message(raw, f"{where} region manifest")
            info = Message(region.req_bytes(2, "region_info"), f"{where} RegionInfo")
            if info.opt_int(5) or info.opt_int(6) or info.opt_int(7):  # offline, split, replica
                continue
            name = Message(info.req_bytes(2, "table_name"), f"{where} TableName")
            namespace = name.req_bytes(1, "namespace").decode()
            qualifier = name.req_bytes(2, "qualifier").decode()
            table = qualifier if namespace == DEFAULT_NAMESPACE else f"{namespace}:{qualifier}"
            start = info.opt_bytes(3) or b""
            if is_mob_region(start, info.req_int(1, "region_id")):
                continue
            encoded = encoded_region_name(table, start, info.req_int(1, "region_id"))
            stores = []
            for family_raw in region.repeated(3):
                family = Message(family_raw, f"{where} family files")
                family_name = family.req_bytes(1, "family_name")
                files = []
                for store_raw in family.repeated(2):
                    store = Message(store_raw, f"{where} store file")
                    file_name = store.req_str(1, "name")
                    reference = store.opt_bytes(2)
                    located = _located(table, encoded, family_name.decode(), file_name,
                                       reference is not None, store.opt_int(3))
                    half = None if reference is None else parse_reference_message(
                        reference, f"{where} region {encoded} store file {file_name}")
                    files.append(RegionFile(located, half))
                stores.append((family_name, tuple(sorted(files, key=lambda f: f.file.hfile))))
            regions.append(SnapshotRegion(table, encoded, start, info.opt_bytes(4) or b"",
                                          tuple(stores)))
    except (ProtobufError, ValueError, UnicodeDecodeError) as exc:
        raise SnapshotManifestError(f"{where}: not a snapshot data manifest: {exc}") from None
    return sorted(regions, key=lambda r: r.start)


def _located(table: str, region: str, family: str, name: str, reference: bool,
             size: int | None) -> SnapshotFile:
    """Where the store file ``name`` of ``table``'s ``region`` really is."""
    if reference:  # <hfile>.<parent region>: the parent's file (the size is the reference's)
        found = _REFERENCE.match(name)
        if found is None:
            raise ValueError(f"reference file name {name!r} is not <hfile>.<region>")
        name, region, size = found.group(1), found.group(2), None
    link = _LINK.match(name)
    if link is not None:
        namespace, qualifier, region, name = link.groups()
        table = qualifier if namespace in (None, DEFAULT_NAMESPACE) else f"{namespace}:{qualifier}"
    return SnapshotFile(table, region, family, name, size)
