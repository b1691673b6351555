"""The parts of the ``hbase`` copy method that need no HBase: a snapshot manifest read back
from bytes laid out as HBase's Snapshot.proto says (field numbers written out here, not
taken from the reader), snapshot names, the admin shell channel's statements and failures,
the ``[snapshot]`` config, and the method refused on the embedded cluster."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import cli
from hbase_migrate.cluster.admin import AdminShellError, ShellAdmin, snapshot_name
from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.snapshot.manifest import (
    SnapshotFile,
    SnapshotManifestError,
    parse_description,
    parse_manifest,
)
from tests.cli_util import fails
from tests.support.minicluster import EmbeddedClusters, run_workload, write_migration


def varint(n: int) -> bytes:
    out = b""
    while True:
        low, n = n & 0x7F, n >> 7
        out += bytes([low | (0x80 if n else 0)])
        if not n:
            return out


def field(number: int, value: bytes | int) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def region_manifest(namespace: bytes, table: bytes, start: bytes, region_id: int,
                    families: dict[bytes, list[bytes]]) -> bytes:
    """A SnapshotRegionManifest: region_info 2 (RegionInfo: region_id 1, table_name 2
    {namespace 1, qualifier 2}, start_key 3), family_files 3 ({family_name 1,
    store_files 2})."""
    info = field(1, region_id) + field(2, field(1, namespace) + field(2, table)) + \
        field(3, start)
    body = field(1, 2) + field(2, info)
    for family, stores in families.items():
        body += field(3, field(1, family) + b"".join(field(2, s) for s in stores))
    return body


def store(name: str, size: int | None = None, reference: bool = False) -> bytes:
    """A StoreFile: name 1, reference 2 (Reference: splitkey 1, range 2), file_size 3."""
    out = field(1, name.encode())
    if reference:
        out += field(2, field(1, b"m") + field(2, 0))
    return out + (field(3, size) if size is not None else b"")


def md5(text: bytes) -> str:
    return hashlib.md5(text).hexdigest()


def test_a_manifest_lists_plain_files_links_and_the_files_references_point_to() -> None:
    first = region_manifest(b"default", b"orders", b"", 1700000000000, {
        b"d": [store("0123abcd", 4096), store("ffee_SeqId_7_", 10)],
        b"m": [store("orders=" + "a" * 32 + "-77aa", 12)]})
    daughter = region_manifest(b"ns", b"t2", b"k", 1700000000001, {
        b"d": [store("abcd." + "b" * 32, 99, reference=True)]})
    manifest = field(1, b"schema-not-read") + field(2, first) + field(2, daughter)
    files = parse_manifest(manifest, "data.manifest")
    orders = md5(b"orders,,1700000000000")
    assert files == [
        SnapshotFile("ns:t2", "b" * 32, "d", "abcd", None),  # the parent's file
        SnapshotFile("orders", orders, "d", "0123abcd", 4096),
        SnapshotFile("orders", orders, "d", "ffee_SeqId_7_", 10),
        SnapshotFile("orders", "a" * 32, "m", "77aa", 12),   # the linked table's file
    ]
    assert orders < "a" * 32
    assert files[0].source_paths() == (f"data/ns/t2/{'b' * 32}/d/abcd",
                                       f"archive/data/ns/t2/{'b' * 32}/d/abcd")
    assert files[1].target_path() == f"archive/data/default/orders/{orders}/d/0123abcd"


def test_a_description_and_bad_bytes() -> None:
    info = field(1, b"snap") + field(2, b"default:orders") + field(3, 1234) + field(4, 1) \
        + field(8, 600)
    description = parse_description(info, ".snapshotinfo")
    assert (description.name, description.table, description.creation_time,
            description.ttl, description.expires_at()) == ("snap", "orders", 1234, 600, 601234)
    with pytest.raises(SnapshotManifestError, match=r"^x/data.manifest: not a snapshot data"):
        parse_manifest(field(2, b"\x12\x01"), "x/data.manifest")


def test_snapshot_names_keep_to_hbase_characters() -> None:
    assert snapshot_name("m 1", "ns:orders", 17) == "hbase_migrate_m_1_ns_orders_17"


def test_the_shell_channel_sends_statements_and_fails_in_one_line(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    admin = ShellAdmin("target", f"tee -a {seen}")
    admin.snapshot("ns:t", "s1", 3600)
    admin.clone("s1", "ns:t")
    admin.restore("s1", "ns:t")
    admin.delete("s1")
    assert seen.read_text().splitlines() == [
        "snapshot 'ns:t', 's1', {TTL => 3600}", "clone_snapshot 's1', 'ns:t'",
        "disable 'ns:t'", "restore_snapshot 's1'", "enable 'ns:t'", "delete_snapshot 's1'"]
    lister = ShellAdmin("source", "sh -c 'cat >/dev/null; echo \" hbase_migrate_m_t_1 t "
                                  "(2026-11-23)\"; echo \" hbase_migrate_m_t_2 t\"'")
    assert lister.snapshots("hbase_migrate_m_t_") == ["hbase_migrate_m_t_1",
                                                      "hbase_migrate_m_t_2"]
    failing = ShellAdmin("source", "sh -c 'echo ERROR: Table t does not exist >&2; exit 1'")
    with pytest.raises(AdminShellError) as failed:
        failing.snapshot("t", "s1", 60)
    assert str(failed.value) == ("source admin_shell \"sh -c 'echo ERROR: Table t does not "
                                 "exist >&2; exit 1'\": 'snapshot s1' exited with 1: ERROR: "
                                 "Table t does not exist")


def test_the_snapshot_section_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    base = ('[migration]\nname = "m"\n[source]\nthrift = "h:1"\n[target]\nthrift = "h:2"\n'
            '[[tables]]\nsource = "t"\n')
    path.write_text(base + '[snapshot]\nmethod = "hbase"\nttl = "2h"\nkeep = true\n')
    settings = load_config(path).snapshot
    assert (settings.method, settings.ttl, settings.keep) == ("hbase", 7_200_000, True)
    path.write_text(base + '[snapshot]\nmethod = "distcp"\n')
    with pytest.raises(ConfigError, match=r"\[snapshot\] method: expected 'auto' or 'scan' or "
                                          r"'hbase' or 'bulk', got 'distcp'"):
        load_config(path)
    path.write_text(base)
    assert load_config(path).snapshot.method == "auto"


@pytest.mark.integration
def test_hbase_is_refused_on_the_embedded_cluster_and_scan_still_copies(
        tmp_path: Path,
        make_embedded: EmbeddedClusters, capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, "orders", seed=3, ops=100)
    config = str(write_migration(tmp_path, src, dst, "orders"))
    runner = CliRunner()
    assert runner.invoke(cli, ["prepare", "--config", config]).exit_code == 0
    line = fails(["snapshot", "--config", config, "--method", "hbase"], capsys)
    assert "source cluster 'source': no hbase.version under its HBase root" in line
    assert "use method = \"scan\"" in line
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None and record.state == "schema_ready"  # nothing done
    copied = runner.invoke(cli, ["snapshot", "--config", config])  # the default: auto
    assert copied.exit_code == 0, copied.output
    said = [ln for ln in copied.output.splitlines() if ln.startswith("copy method:")]
    assert said == ["copy method: scan (auto: the source cluster 'source' has no "
                    "hbase.version under its HBase root over WebHDFS "
                    f"({src.endpoints.webhdfs}), so it is no HBase that keeps its tables "
                    "in HFiles there (the embedded cluster keeps none) and takes no "
                    "snapshots to export)"]
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None and record.state == "copied"
        step = ledger.steps(record.id, "snapshot")[-1]
    assert (step.metrics["method"], step.metrics["method_asked"]) == ("scan", "auto")
    assert step.metrics["cells"] > 0
