"""Airflow's tests on embedded clusters: the clusters named by Airflow connections."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hbase_migrate.airflow_stack import hbase_connection
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
