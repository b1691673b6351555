"""Airflow's tests on embedded clusters: the clusters named by Airflow connections, and a
migration spec as an Airflow run builds it from them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import hbase_connection
from hbase_migrate.config import MigrationSpec
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import clusters_over_rpc


def env_connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, cluster: MiniHBase) -> None:
    body = hbase_connection(conn_id, cluster.endpoints)
    del body["connection_id"]
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(body))


@contextmanager
def connected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zookeeper: ZooKeeperServer
              ) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    """Embedded source and target, named by the connections test_source and test_target
    (which reach them over HBase's own RPC)."""
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        env_connection(monkeypatch, "test_source", src)
        env_connection(monkeypatch, "test_target", dst)
        yield src, dst


def airflow_spec(name: str, ledger: str, port: int = 9090) -> MigrationSpec:
    """A spec as an Airflow run builds it from hbase connections."""
    return MigrationSpec.from_dict({
        "migration": {"name": name, "ledger": ledger},
        "source": {"name": "hbase_source", "thrift": f"src:{port}", "thrift2": f"src:{port + 1}",
                   "zookeeper": "zk:2181"},
        "target": {"name": "hbase_target", "thrift": f"dst:{port}"},
        "tables": [{"source": "orders", "target": "orders_v2", "families": ["d"]}],
        "replay": {"roll_period": 60_000, "margin": 1000},
    })
