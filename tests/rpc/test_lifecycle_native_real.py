"""The lifecycle with ``client = "native"`` on both clusters, on real Apache HBase 2.6.1 (the
session's ``real_hbase``): the migration's clusters name ZooKeeper, WebHDFS and the HBase root
but no Thrift gateway, so every step (prepare's regions, descriptors and create with split
keys; the ``scan`` copy; replay's writes; validate's scans and repair's writes) goes over
HBase's own RPC. Source and target are two tables of the one real cluster (a second JVM
stack is more than the suite should start). A live writer (the workload, through the
cluster's gateways: it is not part of the migration) writes puts and every delete kind during
the copy. The Thrift2 gateway of the same cluster is the independent reader that checks the
result cell for cell."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.client import connect
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.thrift.thrift1 import Thrift1Client
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.wal.model import Cell
from minihbase.cli.minicluster import call_admin
from minihbase.workload import SPLITS, Workload, WorkloadSpec
from realstack.hbase import RealHBase

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
SOURCE, TARGET = "native_life", "native_life_copy"


def native_cluster_json(real: RealHBase, folder: Path) -> Path:
    """The real cluster's ``cluster.json`` with its gateways left out."""
    data = json.loads(real.cluster_json.read_text(encoding="utf-8"))
    for gateway in ("thrift", "thrift2", "client"):
        data.pop(gateway, None)
    path = folder / "native.cluster.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def configure(folder: Path, cluster: Path) -> Path:
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "native"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{cluster}"\n[target]\ncluster_json = "{cluster}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGET}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[spark]\nmaster = "{IN_PROCESS}"\n[ranges]\nmax_cells = 200\n', encoding="utf-8")
    return path


def workload(real: ClusterEndpoints, seed: int, ops: int, rate: float | None = None) -> None:
    runner = Workload(real, WorkloadSpec(SOURCE, seed, ops, rate=rate))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()


def every_version(thrift2: str, table: str) -> list[Cell]:
    with Thrift2Client(thrift2) as client:
        return sorted(c for piece in client.scan(table) for c in piece)


def test_lifecycle_with_both_clusters_native(real_hbase: RealHBase, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    real = load_cluster_json(real_hbase.cluster_json)
    assert real.thrift2 is not None
    workload(real, seed=51, ops=300)  # the source table, pre-split, every cell kind
    spec = load_config(configure(tmp_path, native_cluster_json(real_hbase, tmp_path)))
    for cluster in (spec.source, spec.target):
        found = cluster.endpoints()
        assert (found.client, found.thrift, found.thrift2) == ("native", "", None)

    opened: list[str] = []  # a Thrift client the steps make fails the test
    for gateway in (Thrift1Client, Thrift2Client):
        monkeypatch.setattr(gateway, "__init__", _noted(gateway.__init__, opened))
    try:
        assert prepare(spec).passed
        live = threading.Thread(target=_unpatched, args=(workload, real, 52, 150, 300.0))
        live.start()  # puts and every delete kind while the copy runs, after T0
        copied = snapshot(spec).to_json()
        live.join()
        assert copied["cells"] > 0
        call_admin(real_hbase.cluster_json, "roll")
        caught_up = replay(spec).to_json()  # what came after T0, from the real WALs
        assert caught_up["cells"].get("Put", 0) > 0 and len(caught_up["cells"]) > 1, \
            caught_up["cells"]
        matched = validate(spec, recompare_wait=0).to_json()
        assert matched["verdict"] == "match", matched
        # the target made to differ natively (a value changed, a cell of its own), then
        # repaired: the repair's puts and deletes go over the RPC too
        with connect(spec.target.endpoints()) as native:
            first = next(iter(native.scan(TARGET)))[0]
            native.write_cells(TARGET, [first._replace(value=b"changed"),
                                        first._replace(qualifier=b"extra", value=b"x")])
        differing = validate(spec, recompare_wait=0).to_json()
        assert differing["verdict"] == "mismatch", differing
        fixed = validate(spec, repair=True, recompare_wait=0).to_json()
        assert fixed["verdict"] == "match", fixed
    finally:
        monkeypatch.undo()
    assert opened == [], opened

    # The independent reader: the cluster's Thrift2 gateway, every version of both tables,
    # and the target's regions where the source's split points are.
    source = every_version(real.thrift2, SOURCE)
    assert source == every_version(real.thrift2, TARGET)
    assert len({(c.row, c.family, c.qualifier) for c in source}) < len(source)  # versions
    with Thrift2Client(real.thrift2) as t2:
        assert [r.start_key for r in t2.regions(TARGET)] == [b"", *SPLITS]
        assert t2.table_descriptor(TARGET).families == t2.table_descriptor(SOURCE).families
    with connect(spec.target.endpoints()) as native:
        assert isinstance(native, NativeCluster)
        assert [r.start_key for r in native.regions(TARGET)] == [b"", *SPLITS]


_WORKLOAD = threading.local()  # set on the live writer's thread: its gateways are allowed


def _noted(init: Any, opened: list[str]) -> Any:
    """``init`` of a Thrift client, noting the endpoint when called off the writer's
    thread."""
    def noted(self: Any, endpoint: str, *args: Any, **kwargs: Any) -> None:
        if not getattr(_WORKLOAD, "allowed", False):
            opened.append(f"{type(self).__name__} {endpoint}")
        init(self, endpoint, *args, **kwargs)
    return noted


def _unpatched(run: Any, *args: Any) -> None:
    _WORKLOAD.allowed = True
    run(*args)
