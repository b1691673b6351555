"""A migration between two real HBase 2.6.1 clusters given only as ``hbase+rpc://`` URIs (their
region servers' RPC ports) and WebHDFS for the WALs: the schema, the copy by scan, the replay
of writes made since and the validation reach both through HBase's RPC connection registry
(``ClientMetaService``, which 2.6's region servers serve), and no connection of this process
goes to either cluster's ZooKeeper while they run (every ``socket.connect`` is watched; the
servers keep their own sessions). HBase's Java client of 2.6.1 judges the result cell for
cell. The source is the session's real stack; the target the second plain stack
(``second_hbase``, shared with test_snapshot_real), of which the migration knows the RPC URI
alone.

A MOB table (``IS_MOB``, ``MOB_THRESHOLD``) migrates the same way, exactly: values on both
sides of the threshold, flushed on the source (so the large ones are read back from its MOB
files), copied by scan, replayed from the WALs (which hold whole values) and validated; the
target's family is MOB with the same threshold and, flushed, keeps its large values in MOB
files of its own (``mobdir``, listed over WebHDFS)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.cli import cli
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.config import IN_PROCESS, MigrationSpec, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.check import check
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.registry import RpcRegistry
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import (
    kerberos_environment,
    read_requests,
    stack_endpoints,
)
from tests.realstack.java_cells import differences, java_dump
from tests.realstack.lifecycle_parts import MOB_THRESHOLD, mob_files, mob_values, rpc_uri
from tests.socket_watch import connections, ports

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
TABLE = "by_rpc_uri"
VERSION = "2.6.1"  # the first release line with connection URIs (HBASE-28436)


@pytest.fixture(scope="module")
def target(second_hbase: RealHBase) -> RealHBase:
    """The second plain stack test_snapshot_real migrates to as well (its gateways unused:
    the migration is given the servers' RPC URIs alone)."""
    return second_hbase


def zookeeper_port(stack: RealHBase) -> int:
    return int(str(stack.described["zookeeper"]).rpartition(":")[2])


def configure(folder: Path, source: RealHBase, target: RealHBase,
              table: str = TABLE) -> MigrationSpec:
    sides = "".join(
        f'[{role}]\nname = "{role}"\nuri = "{rpc_uri(stack)}"\n'
        f'webhdfs = "{stack.described["webhdfs"]}"\n'
        f'hbase_root = "{stack.described["hbase_root"]}"\n'
        for role, stack in (("source", source), ("target", target)))
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "{table}"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'{sides}[[tables]]\nsource = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n'
        '[snapshot]\nmethod = "scan"\n', encoding="utf-8")  # what these tests are about
    return load_config(path)


def puts(rows: range, ts: int, value: bytes) -> list[Cell]:
    return [Cell(b"row-%04d" % i, b"d", b"q", ts, CellType.PUT, value + b"%d" % i)
            for i in rows]


def test_a_migration_by_hbase_rpc_uris_opens_no_zookeeper_connection(
        real_hbase: RealHBase, target: RealHBase, tmp_path: Path) -> None:
    began = time.monotonic()
    spec = configure(tmp_path, real_hbase, target)
    for cluster in (spec.source, spec.target):
        assert cluster.endpoints().zookeeper is None and cluster.endpoints().native
    old = int(time.time() * 1000) - 60_000
    with connections() as seen:
        with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
            source.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d", 3),)),
                                [b"row-0100"])
            source.write_cells(TABLE, puts(range(200), old, b"old"))
        assert check(spec).to_json()["tables"] == [TABLE]
        assert prepare(spec).passed
        copied = snapshot(spec).to_json()
        with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
            source.write_cells(TABLE, puts(range(150, 260), old + 30_000, b"new"))
            source.write_cells(TABLE, [Cell(b"row-0003", b"d", b"q", old + 30_000,
                                            CellType.DELETE_COLUMN, b"")])
        call_admin(real_hbase.cluster_json, "roll")
        replayed = replay(spec).to_json()
        verdict = validate(spec, recompare_wait=0).to_json()["verdict"]
        shown = CliRunner().invoke(cli, ["cluster", "info", "--config", str(spec.path),
                                         "--side", "target", "--json"])
    assert copied["cells"] == 200 and replayed["exit_code"] == 0, replayed
    assert verdict == "match"
    zookeepers = {zookeeper_port(real_hbase), zookeeper_port(target)}
    assert not zookeepers & ports(seen), sorted(set(seen))
    servers = {int(s.rpartition(":")[2]) for s in rpc_uri(target)[12:].split(",")}
    assert servers <= ports(seen)  # the watch saw the registry's own connections
    info = json.loads(shown.output)
    assert info["registry"]["kind"] == "rpc" and "error" not in info["registry"], info
    assert info["registry"]["master"] == info["status"]["master"], info
    expected = java_dump(real_hbase.described, TABLE)
    found = java_dump(target.described, TABLE)
    assert differences(expected.visible, found.visible) == ""
    assert len(found.visible) == 200 + 110 - 1  # old, new, row 3's old one deleted
    print(f"\nhbase+rpc:// migration on HBase {VERSION}: {copied['cells']} copied, "
          f"{sum(replayed['cells'].values())} replayed, {len(set(seen))} connections, none "
          f"to ZooKeeper; test {time.monotonic() - began:.0f} s")


MOB_TABLE = "mob_values"


def test_a_mob_table_migrates_exactly(real_hbase: RealHBase, target: RealHBase,
                                      tmp_path: Path) -> None:
    spec = configure(tmp_path, real_hbase, target, MOB_TABLE)
    family = FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=MOB_THRESHOLD)
    old = int(time.time() * 1000) - 60_000
    with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
        source.create_table(TableDescriptor(MOB_TABLE, (family,)), [b"mob-0030"])
        source.write_cells(MOB_TABLE, mob_values(range(60), old, b"first"))
    call_admin(real_hbase.cluster_json, "flush", {"table": MOB_TABLE})
    assert mob_files(real_hbase, MOB_TABLE) > 0  # the large values went to MOB files
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    with NativeCluster.of(spec.source.endpoints(), spec.gateway) as source:
        source.write_cells(MOB_TABLE, mob_values(range(40, 80), old + 30_000, b"second"))
    call_admin(real_hbase.cluster_json, "roll")
    replayed = replay(spec).to_json()
    assert copied["cells"] == 60 and replayed["exit_code"] == 0, replayed
    assert validate(spec, recompare_wait=0).to_json()["verdict"] == "match"
    # the source side from a snapshot's files: its MOB values read from its MOB files,
    # and not one read request reaches the source's regions
    before = read_requests(real_hbase, MOB_TABLE)
    from_files = validate(spec, recompare_wait=0, from_snapshot=True).to_json()
    assert read_requests(real_hbase, MOB_TABLE) == before
    assert from_files["verdict"] == "match", from_files
    assert from_files["source_read"].startswith("snapshot files over WebHDFS")
    assert from_files["tables"][0]["source_cells"] == 100
    with NativeCluster.of(spec.target.endpoints(), spec.gateway) as dst:
        have = dst.table_descriptor(MOB_TABLE).family(b"m")
    assert have is not None and (have.mob, have.mob_threshold) == (True, MOB_THRESHOLD)
    call_admin(target.cluster_json, "flush", {"table": MOB_TABLE})
    assert mob_files(target, MOB_TABLE) > 0
    expected = java_dump(real_hbase.described, MOB_TABLE)
    found = java_dump(target.described, MOB_TABLE)
    assert differences(expected.visible, found.visible) == ""
    sizes = {len(c.value) for c in found.visible}
    assert min(sizes) < MOB_THRESHOLD < max(sizes) and len(found.visible) == 60 + 40


def test_the_registry_answers_over_kerberos(secured_stack: RealHBase) -> None:
    """The session's Kerberos-secured 2.6.1 (SASL GSSAPI on every RPC connection, privacy
    first): the registry's calls go through the same SASL as the data's; its answers are
    what the secured ZooKeeper says, and a client given the ``hbase+rpc://`` URI alone
    writes and reads a table."""
    with kerberos_environment():
        endpoints = stack_endpoints(secured_stack)
        assert endpoints.kerberos and endpoints.zookeeper
        with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                            **endpoints.client_auth) as zk:
            expected = (zk.cluster_id(), zk.master(), zk.meta_server())
        by_uri = replace(endpoints, zookeeper=None, uri=rpc_uri(secured_stack), thrift="",
                         thrift2=None, client="native")
        registry = RpcRegistry(by_uri.bootstrap, **by_uri.client_auth)
        try:
            assert (registry.cluster_id(), registry.active_master(),
                    registry.meta_server()) == expected
        finally:
            registry.close()
        table = "registry_sasl"
        cell = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")
        with NativeCluster.of(by_uri, ClientSettings()) as client, connections() as seen:
            client.create_table(TableDescriptor(table, (FamilyDescriptor(b"f"),)))
            client.write_cells(table, [cell])
            assert [c for row in client.scan(table) for c in row] == [cell]
        assert int(endpoints.zookeeper.rpartition(":")[2]) not in ports(seen)
