"""What the Kerberos-secured RPC suites share (test_sasl_real, test_tls_real): the master's
address as the secured ZooKeeper names it, and the lifecycle over HBase's RPC alone on a
secured stack, from a table to a copy beside it."""

from __future__ import annotations

import threading
from pathlib import Path

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.zk.zookeeper import HBaseZooKeeper
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import native_cluster_json


def master(endpoints: ClusterEndpoints) -> tuple[str, int]:
    assert endpoints.zookeeper
    with HBaseZooKeeper(endpoints.zookeeper, endpoints.znode_parent,
                        **endpoints.client_auth) as zk:
        found = zk.master()
    assert found is not None
    return found.host, found.port


def lifecycle_native(stack: RealHBase, endpoints: ClusterEndpoints, tmp_path: Path,
                     source: str) -> None:
    """The lifecycle above on ``stack`` (secured), from ``source`` to a copy beside it."""
    target = f"{source}_copy"

    def writes(seed: int, ops: int) -> None:
        runner = Workload(endpoints, WorkloadSpec(source, seed, ops, rate=50))
        try:
            runner.ensure_table()
            runner.run()
        finally:
            runner.close()

    writes(61, 200)
    cluster = native_cluster_json(stack, tmp_path)
    cluster.chmod(0o600)  # it names a keytab
    config = tmp_path / "migration.toml"
    config.write_text(
        f'[migration]\nname = "sasl"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{cluster}"\n[target]\ncluster_json = "{cluster}"\n'
        f'[[tables]]\nsource = "{source}"\ntarget = "{target}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "{IN_PROCESS}"\n',
        encoding="utf-8")
    spec = load_config(config)
    for side in (spec.source, spec.target):
        found = side.endpoints()
        assert (found.client, found.thrift2, found.kerberos) == ("native", None, True)
    assert prepare(spec).passed
    live = threading.Thread(target=writes, args=(62, 100))
    live.start()
    assert snapshot(spec).to_json()["cells"] > 0
    live.join()
    call_admin(stack.cluster_json, "roll")
    assert replay(spec).to_json()["cells"].get("Put", 0) > 0
    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    with Thrift2Client(endpoints.thrift2 or "", **endpoints.client_auth) as t2:
        copied = sorted(c for piece in t2.scan(target) for c in piece)
        assert copied and copied == sorted(c for piece in t2.scan(source) for c in piece)
