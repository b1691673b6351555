"""Replay convergence from a source on either stack into an embedded target: the seeded
workload (every operation, both gateways), a region move and WAL rolls through the admin
endpoint, more workload, then a catch-up over WebHDFS; the target must equal the source cell
for cell. On real HBase the WALs, their names, rolls and moves are HBase's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.run import run_replay
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from stackprocs.admin_client import call_admin
from tests.realstack.lifecycle_parts import workload
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration



def test_replay_converges_across_a_move_and_rolls(source_cluster: dict[str, Any],
                                                  tmp_path: Path,
                                                  make_embedded: EmbeddedClusters) -> None:
    start = now_ms() - 60_000
    table = f"replayed_{tmp_path.name[-8:].replace('-', '_')}"
    endpoints = ClusterEndpoints.from_json(source_cluster)
    workload(endpoints, table, 1)
    info = call_admin(source_cluster["cluster_json"], "info")
    holder = next(s for s in info["servers"] if s["alive"] and s["regions"])
    call_admin(source_cluster["cluster_json"], "roll", {})
    call_admin(source_cluster["cluster_json"], "move", {"region": holder["regions"][-1]})
    workload(endpoints, table, 2)
    call_admin(source_cluster["cluster_json"], "roll", {})
    workload(endpoints, table, 3)
    dst = make_embedded("target", folder=tmp_path / "dst")
    assert endpoints.thrift2 and dst.endpoints.thrift2
    with Thrift2Client(endpoints.thrift2) as src_t2, \
            Thrift2Client(dst.endpoints.thrift2) as dst_t2:
        copy_schema(src_t2, dst_t2, table)
        (tmp_path / "m.toml").write_text(
            f'[migration]\nname = "both"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
            f'[source]\ncluster_json = "{source_cluster["cluster_json"]}"\n'
            f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
            f'[[tables]]\nsource = "{table}"\n', encoding="utf-8")
        summary = run_replay(ReplayJob.from_spec(load_config(tmp_path / "m.toml"),
                                                 start=start))
        assert summary.exit_code == 0, summary.to_json()
        comparison = compare_tables(src_t2, dst_t2, table)
        assert comparison.equal, comparison
