"""The lifecycle from a real HBase 1.4.13 source (the ``hbase1`` realstack, one stack for the
module; ``make sweep-1x`` runs it from 1.2.6 and 1.7.2) to the session's real HBase 2.6.1:
prepare (the descriptor over 1.x's Thrift1, its Thrift2 gateway has no admin calls), the scan
copy at T0 while a live writer puts and deletes (every type) and a source region splits
between two ranges' copies, a region server of the source killed (its unclosed WAL split and
archived by the master), a WAL roll, the replay of the 1.x WALs read over that line's own
WebHDFS (Hadoop 2.7.4 for 1.4.13), validate ending in a match; then both clusters read cell
for cell through the native RPC client (not the gateways the lifecycle uses) and through
HBase's own Java client of each side's version. A 1.x target is refused."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.check import check
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.lifecycle_parts import (
    FAMILIES,
    SPLITS,
    history,
    kill_a_table_server,
    live_round,
)

from .fixtures import running, skip_without_real_stack
from .java_cells import differences, java_dump

pytestmark = [pytest.mark.own_stack, pytest.mark.realstack, pytest.mark.integration]

# ``make sweep-1x`` runs it on the other 1.x lines (one source stack each)
VERSIONS = os.environ.get("HBASE_MIGRATE_REAL_HBASE1_VERSIONS", "1.4.13").split(",")

TABLE = "old_orders"
SPLIT_AT = b"row-0250"  # split on the source while the copy runs
@pytest.fixture(scope="module", params=VERSIONS)
def hbase1(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[RealHBase]:
    """Its own stack, not test_hbase1_real's (whose tests change its WAL compression): the
    lifecycle kills a server, which 1.x's launcher cannot put back."""
    skip_without_real_stack()
    version = request.param
    yield from running(RealHBase(tmp_path_factory.mktemp("hbase1"), RealHBaseOptions(
        hbase_version=version, region_servers=2, heap="768m")), f"HBase {version}")


def configure(folder: Path, source: Path, target: Path, table: str = TABLE) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "from1x"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{source}"\n[target]\ncluster_json = "{target}"\n'
        f'[[tables]]\nsource = "{table}"\ntarget = "{table}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n'
        f'[ranges]\nmax_cells = 400\nplan_copy_cells = 1\n'  # ranges copied one by one
        , encoding="utf-8")
    return path


def cells(client: NativeClient, raw: bool = False, since: int = 0) -> list[Cell]:
    return [c for piece in client.scan(TABLE, raw=raw, time_range=(since, 2 ** 63 - 1))
            for c in piece]


def explain(source: NativeClient, target: NativeClient) -> str:
    """What differs, for a failure's message: the visible cells each side shows and no other,
    and every raw cell (markers, deleted and pruned versions) of the rows involved."""
    seen, held = cells(source), cells(target)
    rows = sorted({c.row for c in set(seen) ^ set(held)})[:3]
    raw = {name: [c for c in cells(client, raw=True) if c.row in rows]
           for name, client in (("source", source), ("target", target))}
    return f"visible: {differences(seen, held)}; raw of {rows}: {raw}"


def agree_in_java(src: dict[str, Any], dst: dict[str, Any], expected: list[Cell],
                  t0: int) -> None:
    """The check of the native client's, through HBase's own Java clients of each side's
    version (1.4.13's and 2.6.1's); the native reading of the source (``expected``) is the
    Java one's."""
    old_side, new_side = java_dump(src, TABLE), java_dump(dst, TABLE)
    assert differences(old_side.visible, new_side.visible) == ""
    assert old_side.visible == expected
    since_t0 = [c for c in old_side.raw if c.timestamp >= t0]
    assert not set(since_t0) - set(new_side.raw), differences(since_t0, new_side.raw)


def test_lifecycle_from_1x_to_26_under_a_live_writer(hbase1: RealHBase, real_hbase: RealHBase,
                                                     tmp_path: Path) -> None:
    src, dst = hbase1.described, real_hbase.described
    began = time.monotonic()
    with NativeAdmin(src["zookeeper"], src["znode_parent"]) as admin:
        admin.create_table(TableDescriptor(TABLE, FAMILIES), SPLITS)
    source = NativeClient(src["zookeeper"], src["znode_parent"], max_backoff=1.0)
    target = NativeClient(dst["zookeeper"], dst["znode_parent"], max_backoff=1.0)
    with source, target:
        old = int(time.time() * 1000) - 60_000
        source.write(TABLE, history(range(300), old))
        spec = load_config(configure(tmp_path, hbase1.cluster_json, real_hbase.cluster_json))
        assert check(spec).to_json()["tables"] == [TABLE]
        prepared = prepare(spec).to_json()
        assert prepared["tables"][0]["split_points"] == len(SPLITS), prepared
        with NativeAdmin(dst["zookeeper"], dst["znode_parent"]) as admin:
            made = next(d for d in admin.table_descriptors() if d.name == TABLE)
        assert [(f.name, f.max_versions) for f in made.families] == [
            (f.name, f.max_versions) for f in FAMILIES]
        assert [r.start for r in target.regions(TABLE)] == [b"", *SPLITS]

        stop = threading.Event()
        rounds: list[int] = []

        def writer() -> None:  # until the copy ended, 20 rounds at least
            while not stop.is_set() or len(rounds) < 20:
                source.write(TABLE, live_round(len(rounds), int(time.time() * 1000), old))
                rounds.append(len(rounds))
                time.sleep(0.05)

        split: list[int] = []

        def progress(done: int, total: int) -> None:  # a source region splits mid-copy
            if not split and done < total:
                split.append(call_admin(hbase1.cluster_json, "split", {
                    "table": TABLE, "at": SPLIT_AT.decode()})["regions"])

        live = threading.Thread(target=writer)
        live.start()
        copy_began = time.monotonic()
        try:
            copied = snapshot(spec, progress=progress).to_json()
        finally:
            copy_seconds = time.monotonic() - copy_began
            stop.set()
            live.join()
        t0 = copied["watermark"]
        assert split == [len(SPLITS) + 2]
        victim = kill_a_table_server(hbase1, source, TABLE)
        assert [r.start for r in source.regions(TABLE)] == [b"", *SPLITS, SPLIT_AT]
        call_admin(hbase1.cluster_json, "roll")
        replay_began = time.monotonic()
        replayed = replay(spec).to_json()
        replay_seconds = time.monotonic() - replay_began
        kinds = set(replayed["cells"])
        assert {"Put", "Delete", "DeleteColumn", "DeleteFamily",
                "DeleteFamilyVersion"} <= kinds, replayed["cells"]
        with Ledger.open(spec.ledger_url) as ledger:  # the killed server's WALs, read
            read = [f for f in ledger.wal_files(1) if f.server == victim and f.entries]
        assert read, victim
        matched = validate(spec, recompare_wait=0).to_json()
        # a str, printed whole (pytest shortens the repr of any other message)
        assert matched["verdict"] == "match", f"{matched}\n{explain(source, target)}"

        # Cell for cell through the native RPC client: every version both show; raw from
        # T0 on (markers and deleted versions, which only the replay carried), the target
        # holds all the source does: the source's recovery of the killed server's regions
        # (recovered edits, flushed) kept fewer raw cells than the target's memstores hold.
        expected = cells(source)
        assert cells(target) == expected and len(expected) > 2000, explain(source, target)
        raw = cells(target, raw=True, since=t0)
        assert set(cells(source, raw=True, since=t0)) <= set(raw)
        assert {c.type for c in raw} == {CellType.PUT, CellType.DELETE_COLUMN,
                                         CellType.DELETE_FAMILY}
        agree_in_java(src, dst, expected, t0)
    print(f"\n{hbase1.options.hbase_version} started in {src['started_in_ms']} ms; copy "
          f"{copied['cells']} cells in {copy_seconds:.1f} s "
          f"({copied['cells'] / copy_seconds:.0f} cells/s); replay "
          f"{sum(replayed['cells'].values())} cells in {replay_seconds:.1f} s "
          f"({sum(replayed['cells'].values()) / replay_seconds:.0f} cells/s); {len(rounds)} "
          f"live rounds; test {time.monotonic() - began:.0f} s; killed server's WALs "
          f"{[(f.path, f.status) for f in read]}")


def test_a_1x_target_is_refused_before_anything_is_written(hbase1: RealHBase,
                                                           real_hbase: RealHBase,
                                                           tmp_path: Path) -> None:
    """A 1.x Thrift2 gateway would store a family-version delete as a whole-family delete:
    prepare refuses a 1.x target in one line naming it, and creates nothing there."""
    src, dst = real_hbase.described, hbase1.described
    with NativeAdmin(src["zookeeper"], src["znode_parent"]) as admin:
        admin.create_table(TableDescriptor("to_1x", FAMILIES), [])
    spec = load_config(configure(tmp_path, real_hbase.cluster_json, hbase1.cluster_json,
                                 "to_1x"))
    with pytest.raises(ConfigError) as refused:
        prepare(spec)
    assert str(refused.value) == (
        f"target cluster {dst['name']!r}: an HBase 1.x target is not supported (its Thrift2 "
        f"gateway {dst['thrift2']} has no admin calls and writes a family-version delete as "
        "a whole-family delete)")
    with NativeAdmin(dst["zookeeper"], dst["znode_parent"]) as admin:
        assert admin.table_state("to_1x") is None
