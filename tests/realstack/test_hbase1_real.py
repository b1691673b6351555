"""A real HBase 1.4.13 source (the ``hbase1`` realstack: Hadoop 2.7.4 mini HDFS, two region
servers), one stack for the module; ``make sweep-1x`` runs it on the other 1.x lines
(``HBASE_MIGRATE_REAL_HBASE1_VERSIONS``, one stack each).

* Its WALs, plain and then dictionary-compressed with tags (the same running servers, after
  the launcher's ``wal-compression`` and a roll), read over its own WebHDFS by
  ``hbase-migrate wal dump`` agree entry by entry with HBase 1.4.13's WALPrettyPrinter (cell
  types from 1.4.13's own WAL reader: its printer prints none). The workload writes every
  cell type through the 1.x Thrift2 gateway (the family-version delete, which that gateway
  cannot ask for, through HBase's Java client in the launcher).
* The native RPC client against the 1.x region servers: cells of every type written one
  way and read back the other (Thrift2), regions as the master placed them.
* The native admin against the 1.x master, whose table state is in ZooKeeper (1.x has no
  ``GetTableState``).
* The 1.x replication znodes (a peer in 1.x's ReplicationPeer schema, its state, each
  server's queue with its current WAL) as the project reads them from ZooKeeper, and a
  killed server's WALs through ``-splitting`` to ``oldWALs`` (last: it kills a server)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import cell_order
from hbase_migrate.wal.reader import WalReader
from realstack.hbase import RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.rpc.cells import ROWS, every_kind, flat

from .agreement import disagreements, entries, run_dump
from .fixtures import running, skip_without_real_stack
from .golden import collect, printed_entries
from .wal_workload import run_on

pytestmark = [pytest.mark.own_stack, pytest.mark.realstack, pytest.mark.integration]

VERSIONS = os.environ.get("HBASE_MIGRATE_REAL_HBASE1_VERSIONS", "1.4.13").split(",")
PLAIN = {"old_a": (b"\x40", b"\x80"), "old_b": ()}
COMPRESSED = {"old_c": (b"\x40",), "old_d": ()}


@pytest.fixture(scope="module", params=VERSIONS)
def hbase1(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RealHBase]:
    """Its own stack, not test_hbase1_lifecycle_real's: the tests turn its WAL compression on
    and kill a server, which 1.x's launcher cannot put back."""
    skip_without_real_stack()
    version = request.param
    yield from running(RealHBase(tmp_path_factory.mktemp("hbase1"), RealHBaseOptions(
        hbase_version=version, region_servers=2, heap="768m", replication_peer="1")),
        f"HBase {version}")


def dump_remote(store: WebHdfsWalStore, name: str) -> list[dict[str, Any]]:
    """``hbase-migrate wal dump`` of WAL ``name`` over WebHDFS, wherever it is now (HBase
    moves a closed WAL to oldWALs once its regions flushed)."""
    for _ in range(3):
        url = next(f.path for f in store.list_wal_files() if f.name == name)
        done = run_dump(url)
        if done.returncode == 0:
            return entries(done.stdout)
        if "No such file" not in done.stderr:
            break
    raise AssertionError(f"wal dump {name}: {done.stderr}")


def wals_agree(stack: RealHBase, out: Path, tables: dict[str, tuple[bytes, ...]],
               skip: frozenset[str] = frozenset()) -> list[Path]:
    """The workload on ``tables``, a roll, and every closed WAL with entries (not in
    ``skip``) read over WebHDFS in agreement with 1.4.13's printer; the copies."""
    run_on(stack.cluster_json, stack.described, tables)
    files = collect(stack, out, skip)
    printed = printed_entries(files, stack.options.hbase_version)
    store = WebHdfsWalStore(stack.described["webhdfs"], stack.described["hbase_root"])
    written = set()
    for path in files:
        hbase = printed[path.name]
        assert disagreements(path.name, dump_remote(store, path.name), hbase) == []
        written |= {entry["table"] for entry in hbase}
        kinds = {cell["type"] for entry in hbase for cell in entry["cells"]}
        assert kinds <= {"Put", "Delete", "DeleteColumn", "DeleteFamily",
                         "DeleteFamilyVersion"}, path.name
    assert set(tables) <= written
    return files


def test_plain_and_compressed_wals_agree_with_walprettyprinter(hbase1: RealHBase,
                                                                tmp_path: Path) -> None:
    plain = wals_agree(hbase1, tmp_path / "plain", PLAIN)
    assert not any(WalReader(path).header.has_compression for path in plain)
    call_admin(hbase1.cluster_json, "wal-compression", {"mode": "dict+tags"})
    # a roll: the files the servers open from now on are compressed
    switched = collect(hbase1, tmp_path / "switch")
    compressed = wals_agree(hbase1, tmp_path / "compressed", COMPRESSED,
                            frozenset(path.name for path in plain + switched))
    headers = [WalReader(path).header for path in compressed]
    assert headers and all(h.has_compression and h.has_tag_compression for h in headers)
    # the per-cell TTL of the workload is a tag (type 8) on the cells of both runs
    for files in (plain, compressed):
        tags = {tag for entries in printed_entries(files, hbase1.options.hbase_version).values()
                for entry in entries for cell in entry["cells"] for tag in cell["tags"]}
        assert any(tag.startswith("8:") for tag in tags)


FAMILIES = (FamilyDescriptor(b"f", max_versions=10), FamilyDescriptor(b"g", max_versions=10))


def test_native_client_on_1x_region_servers(hbase1: RealHBase) -> None:
    """Every cell type written natively reads back raw as written and, visible, as the 1.x
    Thrift2 gateway reads it; a get of each row as Thrift2's; the regions where the
    master put them (the launcher's view)."""
    described = hbase1.described
    with NativeAdmin(described["zookeeper"], described["znode_parent"]) as admin:
        admin.create_table(TableDescriptor("native1", FAMILIES), [b"g", b"p"])
    written = every_kind(ROWS)
    with NativeClient(described["zookeeper"], described["znode_parent"],
                      max_backoff=1.0) as native, Thrift2Client(described["thrift2"]) as t2:
        native.write("native1", written)
        assert flat(native.scan("native1", raw=True)) == sorted(written, key=cell_order)
        assert flat(native.scan("native1")) == flat(t2.scan("native1"))
        for row in ROWS:
            assert native.get("native1", row) == t2.get("native1", row), row
        regions = native.regions("native1")
    assert [(r.start, r.end) for r in regions] == [(b"", b"g"), (b"g", b"p"), (b"p", b"")]
    info = call_admin(hbase1.cluster_json, "info", {})
    hosted = {region: server["name"] for server in info["servers"]
              for region in server["regions"]}
    for region in regions:
        assert hosted[region.encoded] == f"{region.host},{region.port},{region.start_code}"


def test_native_admin_on_a_1x_master(hbase1: RealHBase) -> None:
    """Table states come from ZooKeeper on a 1.x master: enabled, disabled, gone."""
    described = hbase1.described
    with NativeAdmin(described["zookeeper"], described["znode_parent"]) as admin:
        assert admin.cluster_status().version == hbase1.options.hbase_version
        assert admin.table_state("admin1") is None
        admin.create_table(TableDescriptor("admin1", FAMILIES), [b"m"])
        assert admin.table_state("admin1") == "ENABLED"
        assert admin.table_exists("admin1")
        admin.disable_table("admin1")
        assert admin.table_state("admin1") == "DISABLED"
        assert not admin.is_table_enabled("admin1")
        admin.drop("admin1")
        assert admin.table_state("admin1") is None
        assert "admin1" not in [d.name for d in admin.table_descriptors()]


def test_replication_znodes_and_a_killed_servers_splitting(hbase1: RealHBase) -> None:
    """The peer and its state as 1.x writes them; each live server queues its current WAL.
    A killed server's WAL files stay listed at every moment of the master's split (in
    ``WALs/<server>-splitting/``, then ``oldWALs/``), its queue is claimed by a live server
    as a recovered queue naming them, and the split ends with no ``-splitting`` folder."""
    described = hbase1.described
    store = WebHdfsWalStore(described["webhdfs"], described["hbase_root"])
    with HBaseZooKeeper(described["zookeeper"], described["znode_parent"]) as zk:
        assert [(p.peer_id, p.enabled) for p in zk.replication_peers()] == [("1", True)]
        assert zk.replication_peers()[0].cluster_key.endswith(":/hbase-peer")
        for enabled in (False, True):
            call_admin(hbase1.cluster_json, "replication", {"enabled": enabled})
            assert [(p.peer_id, p.enabled) for p in zk.replication_peers()] == [("1", enabled)]
        # each server adds the peer's queue when ZooKeeper tells it of the peer: soon after
        deadline = time.monotonic() + 60
        while True:
            live = [s for s in call_admin(hbase1.cluster_json, "info", {})["servers"]
                    if s["alive"]]
            queues = {str(q.server): q for q in zk.replication_queues() if not q.recovered}
            queued = [s["name"] in queues and s["wal"] in queues[s["name"]].wals for s in live]
            if (len(live) == 2 and all(queued)) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert len(live) == 2 and all(queued), (live, queues)
        victim = next(s["name"] for s in live if s["name"] != str(zk.meta_server()))
        files = {f.name for f in store.list_wal_files() if f.server == victim}
        assert files
        call_admin(hbase1.cluster_json, "kill", {"server": victim})
        states: set[str] = set()
        deadline = time.monotonic() + 180
        while True:
            listed = {f.name: f.state for f in store.list_wal_files() if f.name in files}
            assert set(listed) == files  # none missing while it moves
            states |= set(listed.values())
            recovered = [q for q in zk.replication_queues()
                         if q.recovered and str(q.server) != victim]
            if set(listed.values()) == {"archived"} and recovered:
                break
            assert time.monotonic() < deadline, f"split of {victim}: {listed}, {recovered}"
            time.sleep(0.2)
        assert call_admin(hbase1.cluster_json, "finish-split", {}) == []
    claimed = {name for q in recovered for name in q.wals}
    assert claimed and claimed <= files
    assert states <= {"live", "splitting", "archived"}
    print(f"{victim}: states seen {sorted(states)}; recovered queues "
          f"{[q.queue_id for q in recovered]}")
