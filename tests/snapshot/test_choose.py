"""``[snapshot] method = "auto"``: each reason the choice gives, with fake probes standing in
for the clusters (what each probe answers is set here, and the expected method and sentence
are written out by hand)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import ClusterSpec, MigrationSpec, load_config
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.errors import ConfigError, HBaseMigrateError
from hbase_migrate.snapshot.choose import MethodChoice, choose_method
from hbase_migrate.snapshot.probes import _bits_allow_write


@dataclass
class FakeProbes:
    """Clusters that allow the file copy unless told otherwise (by role)."""

    roots: dict[str, str] = field(default_factory=dict)
    unreachable: set[str] = field(default_factory=set)
    read_only: str | None = None
    admins: dict[str, str] = field(default_factory=dict)
    releases: dict[str, str | None] = field(
        default_factory=lambda: {"source": "2.6.1", "target": "2.6.1"})
    families: dict[str, tuple[FamilyDescriptor, ...]] = field(
        default_factory=lambda: {"source": (FamilyDescriptor(b"d"),),
                                 "target": (FamilyDescriptor(b"d"),)})
    asked: list[str] = field(default_factory=list)

    def file_root(self, cluster: ClusterSpec) -> str | None:
        self.asked.append(f"root {cluster.role}")
        if cluster.role in self.unreachable:
            raise HBaseMigrateError("WebHDFS http://nn:9870: connection refused")
        return self.roots.get(cluster.role)

    def writable_root(self, cluster: ClusterSpec) -> str | None:
        self.asked.append(f"writable {cluster.role}")
        return self.read_only

    def admin(self, cluster: ClusterSpec, hbase_version: str) -> str | None:
        self.asked.append(f"admin {cluster.role} {hbase_version}")
        return self.admins.get(cluster.role)

    def release(self, cluster: ClusterSpec) -> str | None:
        return self.releases[cluster.role]

    def descriptor(self, cluster: ClusterSpec, table: str) -> TableDescriptor | None:
        found = self.families.get(cluster.role)
        return None if found is None else TableDescriptor(table, found)


@pytest.fixture()
def spec(tmp_path: Path) -> MigrationSpec:
    path = tmp_path / "m.toml"
    path.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:1"\n[target]\n'
                    'thrift = "h:2"\n[[tables]]\nsource = "orders"\ntarget = "orders_copy"\n')
    return load_config(path)


def test_auto_is_the_default(spec: MigrationSpec) -> None:
    assert spec.snapshot.method == "auto"


def test_two_hbase_clusters_that_allow_it_get_the_file_copy(spec: MigrationSpec) -> None:
    probes = FakeProbes(releases={"source": "2.5.8", "target": "2.6.1"}, families={
        "source": (FamilyDescriptor(b"d", compression="SNAPPY"), FamilyDescriptor(b"m")),
        "target": (FamilyDescriptor(b"d", compression="SNAPPY"), FamilyDescriptor(b"m"))})
    choice = choose_method(spec, probes)
    assert choice == MethodChoice(
        "hbase", "both clusters are HBase (2.5.8 to 2.6.1) with their roots over WebHDFS, "
                 "the target's writable, admin calls possible, codecs NONE, SNAPPY readable "
                 "on the target, no encrypted family")
    assert probes.asked == ["root source", "root target", "writable target",
                            "admin source 2.6.1", "admin target 2.6.1"]
    assert choice.to_metrics() == {"method": "hbase", "method_asked": "auto",
                                   "method_reason": choice.reason}
    assert choice.line == f"copy method: hbase (auto: {choice.reason})"


def test_a_bigtable_target_is_copied_by_scan(spec: MigrationSpec) -> None:
    bigtable = replace(spec, target=replace(spec.target, bigtable=BigtableSettings("p", "i")))
    probes = FakeProbes()
    assert choose_method(bigtable, probes) == MethodChoice(
        "scan", "the target is Cloud Bigtable, copied by the scan copy only")
    assert probes.asked == []  # nothing asked of a cluster


@pytest.mark.parametrize(("asked", "reason"), [
    ({"parts": True}, "a copy made in parts is a scan copy (its parts are key ranges)"),
    ({"watermark": 1_700_000_000_000},
     "a watermark was given, and the file copy takes T0 from its snapshots"),
])
def test_parts_and_a_watermark_are_the_scan_copys_alone(
        spec: MigrationSpec, asked: dict[str, object], reason: str) -> None:
    assert choose_method(spec, FakeProbes(), **asked) == MethodChoice(  # type: ignore[arg-type]
        "scan", reason)


def test_a_table_with_some_of_its_families_is_scanned(spec: MigrationSpec) -> None:
    subset = replace(spec, tables=(replace(spec.tables[0], families=("d",)),))
    assert choose_method(subset, FakeProbes()) == MethodChoice(
        "scan", "table orders takes some of its families, and the file copy takes whole "
                "tables")


def test_each_clusters_refusal_is_the_reason(spec: MigrationSpec) -> None:
    said = "the target cluster 't' has no hbase.version under its HBase root"
    assert choose_method(spec, FakeProbes(roots={"target": said})) == MethodChoice(
        "scan", said)
    assert choose_method(spec, FakeProbes(unreachable={"source"})) == MethodChoice(
        "scan", "the source's HBase root over WebHDFS could not be checked: WebHDFS "
                "http://nn:9870: connection refused")
    assert choose_method(spec, FakeProbes(read_only="not writable")).reason == "not writable"
    assert choose_method(spec, FakeProbes(admins={"source": "no java"})) == MethodChoice(
        "scan", "no java")


@pytest.mark.parametrize(("source", "target", "method"), [
    ("2.6.1", "1.4.14", "scan"),   # an older major: not promised to read 2.x files
    ("2.6.1", "3.0.0-beta-1", "hbase"),
    ("1.4.14", "2.6.1", "hbase"),
    ("2.4.17", "2.6.1", "hbase"),
])
def test_the_target_may_not_be_an_older_major_version(
        spec: MigrationSpec, source: str, target: str, method: str) -> None:
    choice = choose_method(spec, FakeProbes(releases={"source": source, "target": target}))
    assert choice.method == method
    if method == "scan":
        assert choice.reason == (f"the target runs HBase {target}, an older major version "
                                 f"than the source's {source}, which is not promised to "
                                 "read its files")


def test_a_version_not_told_is_scanned(spec: MigrationSpec) -> None:
    choice = choose_method(spec, FakeProbes(releases={"source": "2.6.1", "target": None}))
    assert choice == MethodChoice("scan", "the target did not say which HBase it runs (got "
                                          "None), so the target's reading of its files is "
                                          "not known")


def test_codecs_the_target_has_not_shown_it_reads_are_scanned(spec: MigrationSpec) -> None:
    lz4 = FamilyDescriptor(b"d", compression="LZ4")
    choice = choose_method(spec, FakeProbes(families={
        "source": (lz4,), "target": (FamilyDescriptor(b"d"),)}))
    assert choice == MethodChoice(
        "scan", "family orders:d is compressed with LZ4, which the target's table "
                "orders_copy does not carry in that family, so the target has not shown it "
                "reads it")
    no_table = choose_method(spec, FakeProbes(families={"source": (lz4,)}))
    assert no_table.method == "scan" and "LZ4" in no_table.reason
    gz = FamilyDescriptor(b"d", compression="GZ")  # in every JVM: no target table needed
    assert choose_method(spec, FakeProbes(families={"source": (gz,)})).method == "hbase"


def test_an_encrypted_family_is_scanned(spec: MigrationSpec) -> None:
    secret = FamilyDescriptor(b"s", encryption="AES")
    choice = choose_method(spec, FakeProbes(families={"source": (secret,),
                                                      "target": (secret,)}))
    assert choice == MethodChoice(
        "scan", "family orders:s is encrypted (AES): its files need the source's master "
                "key on the target")


def test_a_source_without_the_table_is_scanned(spec: MigrationSpec) -> None:
    choice = choose_method(spec, FakeProbes(families={"target": (FamilyDescriptor(b"d"),)}))
    assert choice == MethodChoice("scan", "the source has no table orders")


def test_a_kept_choice_names_the_step_that_made_it() -> None:
    first = MethodChoice("scan", "why")
    kept = MethodChoice.of({**first.to_metrics(), "method_kept_from": 7})
    assert kept == MethodChoice("scan", "why", 7)
    assert kept.line == "copy method: scan (auto: why; chosen by step #7)"
    assert kept.to_metrics()["method_kept_from"] == 7


@pytest.mark.parametrize(("status", "allowed"), [
    ({"owner": "me", "permission": "755"}, True),
    ({"owner": "me", "permission": "555"}, False),
    ({"owner": "hbase", "permission": "775"}, False),  # a group not known here: not assumed
    ({"owner": "hbase", "permission": "777"}, True),
    ({"owner": "hbase"}, False),
])
def test_permission_bits_when_the_namenode_has_no_access_check(
        monkeypatch: pytest.MonkeyPatch, status: dict[str, object], allowed: bool) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "me")
    assert _bits_allow_write(status) is allowed


def test_a_familys_encryption_is_read_from_its_descriptor_and_never_written() -> None:
    from hbase_migrate.cluster.schema import decode_family, family_message, pair
    from hbase_migrate.wal.protobuf import bytes_field

    # ColumnFamilySchema: name 1, attributes 2 (BytesBytesPair), as HBase's master sends it
    sent = bytes_field(1, b"s") + bytes_field(2, pair(b"COMPRESSION", b"GZ")) + bytes_field(
        2, pair(b"ENCRYPTION", b"AES")) + bytes_field(2, pair(b"ENCRYPTION_KEY", b"\x01\x02"))
    family = decode_family(sent)
    assert (family.compression, family.encryption) == ("GZ", "AES")
    assert b"ENCRYPTION" not in family_message(family)  # a target's key is its own
    assert "encryption" not in FamilyDescriptor(b"d").to_json()
    assert FamilyDescriptor.from_json(family.to_json()) == family


@dataclass
class FakeRoot:
    """The bulk copy's probe of the target's root: ``real`` (an exception: it cannot say)."""

    real: bool | Exception = True
    asked: list[str] = field(default_factory=list)

    def real_root(self, endpoints: ClusterEndpoints) -> bool:
        self.asked.append(f"root {endpoints.name} {endpoints.webhdfs}{endpoints.hbase_root}")
        if isinstance(self.real, Exception):
            raise self.real
        return self.real


def bulk_spec(tmp_path: Path, target: str, snapshot: str = "auto_bulk = true\n"
              ) -> MigrationSpec:
    """A migration whose target is given by the ``target`` lines, ``[snapshot]`` as told."""
    path = tmp_path / "bulk.toml"
    path.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:1"\n[target]\n'
                    f'{target}[[tables]]\nsource = "orders"\ntarget = "orders_copy"\n'
                    f"[snapshot]\n{snapshot}")
    return load_config(path)


NATIVE = ('client = "native"\nzookeeper = "zk:2181"\nname = "dst"\n'
          'webhdfs = "http://nn:9870"\nhbase_root = "/hbase"\n')
WATERMARK = "a watermark was given, and the file copy takes T0 from its snapshots"
TAKES = ("the target takes a bulk load (HBase over its RPC with its HDFS over WebHDFS, "
         "families the HFile writer writes)")


def test_auto_bulk_is_off_by_default_and_the_choice_is_then_the_other_two(
        tmp_path: Path) -> None:
    spec = bulk_spec(tmp_path, NATIVE, snapshot="")
    assert spec.snapshot.auto_bulk is False
    root = FakeRoot()
    choice = choose_method(spec, FakeProbes(), watermark=1, bulk_probe=root)
    assert choice == MethodChoice("scan", WATERMARK)
    assert root.asked == []  # the target's root not even read


@pytest.mark.parametrize(("asked", "probes", "why_not_files"), [
    ({"watermark": 1}, FakeProbes(), WATERMARK),
    ({"parts": True}, FakeProbes(),
     "a copy made in parts is a scan copy (its parts are key ranges)"),
    ({}, FakeProbes(releases={"source": "2.6.1", "target": "1.4.14"}),
     "the target runs HBase 1.4.14, an older major version than the source's 2.6.1, which "
     "is not promised to read its files"),
    ({}, FakeProbes(families={"source": (FamilyDescriptor(b"d", compression="LZ4"),),
                              "target": (FamilyDescriptor(b"d", compression="ZSTD"),)}),
     "family orders:d is compressed with LZ4, which the target's table orders_copy does not "
     "carry in that family, so the target has not shown it reads it"),
    ({}, FakeProbes(roots={"source": "the source cluster 's' has no hbase.version"}),
     "the source cluster 's' has no hbase.version"),
])
def test_where_the_file_copy_cannot_run_a_target_taking_a_bulk_load_gets_the_bulk_copy(
        tmp_path: Path, asked: dict[str, object], probes: FakeProbes,
        why_not_files: str) -> None:
    root = FakeRoot()
    choice = choose_method(bulk_spec(tmp_path, NATIVE), probes, bulk_probe=root,
                           **asked)  # type: ignore[arg-type]
    assert choice == MethodChoice("bulk", f"{why_not_files}; {TAKES}")
    assert root.asked == ["root dst http://nn:9870/hbase"]
    assert choice.line == f"copy method: bulk (auto: {why_not_files}; {TAKES})"
    assert choice.to_metrics() == {"method": "bulk", "method_asked": "auto",
                                   "method_reason": choice.reason}


def test_the_file_copy_still_comes_first(tmp_path: Path) -> None:
    root = FakeRoot()
    choice = choose_method(bulk_spec(tmp_path, NATIVE), FakeProbes(), bulk_probe=root)
    assert choice.method == "hbase" and root.asked == []


@pytest.mark.parametrize(("target", "root", "families", "why_not_bulk"), [
    ('thrift = "h:2"\nname = "dst"\n', True, None,
     "the target cluster 'dst' is reached through its Thrift gateway, which has no bulk "
     'load (a bulk load goes over HBase\'s RPC: client = "native")'),
    ('client = "native"\nzookeeper = "zk:2181"\nname = "dst"\n', True, None,
     "the target cluster 'dst' names no webhdfs URL and hbase_root, and a bulk load stages "
     "its files on the target's HDFS over WebHDFS"),
    (NATIVE, False, None,
     "the target cluster 'dst' has no hbase.version under its HBase root over WebHDFS: it "
     "is no HBase that keeps its tables in HFiles (the embedded cluster takes no bulk load)"),
    (NATIVE, HBaseMigrateError("WebHDFS http://nn:9870: connection refused"), None,
     "the target cluster 'dst''s HBase root over WebHDFS could not be checked: WebHDFS "
     "http://nn:9870: connection refused"),
    (NATIVE, True, (FamilyDescriptor(b"d", encryption="AES"),),
     "the target's family orders_copy:d is encrypted (AES), and the HFile writer writes no "
     "encrypted file"),
    (NATIVE, True, (FamilyDescriptor(b"d"), FamilyDescriptor(b"m", compression="LZO")),
     "the target's family orders_copy:m is compressed with LZO, which the HFile writer does "
     "not write (it writes NONE, GZ, SNAPPY, LZ4, ZSTD)"),
    (NATIVE, True, "none", "the target has no table orders_copy to load into"),
])
def test_a_target_that_cannot_take_the_bulk_copy_is_scanned_saying_why_neither(
        tmp_path: Path, target: str, root: bool | Exception,
        families: tuple[FamilyDescriptor, ...] | str | None, why_not_bulk: str) -> None:
    probes = FakeProbes()
    if families == "none":
        del probes.families["target"]
    elif families is not None:
        probes.families["target"] = families  # type: ignore[assignment]
    choice = choose_method(bulk_spec(tmp_path, target), probes, watermark=1,
                           bulk_probe=FakeRoot(root))
    assert choice == MethodChoice("scan", f"{WATERMARK}; no bulk copy either: {why_not_bulk}")


def test_a_bigtable_target_takes_neither_files_nor_a_bulk_load(spec: MigrationSpec) -> None:
    bigtable = replace(spec, target=replace(spec.target, bigtable=BigtableSettings("p", "i")),
                       snapshot=replace(spec.snapshot, auto_bulk=True))
    assert choose_method(bigtable, FakeProbes()) == MethodChoice(
        "scan", "the target is Cloud Bigtable, copied by the scan copy only; no bulk copy "
                "either: the target is Cloud Bigtable, which takes no bulk load")


def test_auto_bulk_must_be_true_or_false(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[snapshot\] auto_bulk.*true or false"):
        bulk_spec(tmp_path, NATIVE, snapshot='auto_bulk = "yes"\n')
    assert bulk_spec(tmp_path, NATIVE, snapshot='method = "bulk"\n').snapshot.method == "bulk"
