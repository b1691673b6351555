"""Fixtures of the CDC stream's tests: the real Kafka broker (``kafka_broker``, session) and
a source and a target embedded cluster with a workload of every operation in real WAL
files (the building blocks are in :mod:`tests.support.cdc`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hbase_migrate.audit.ledger import now_ms
from minihbase.regionserver import WalSettings
from tests.support.cdc import TABLE, Source
from tests.support.minicluster import EmbeddedClusters, copy_table_schema, run_workload


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Source]:
    base = tmp_path_factory.mktemp("cdc")
    start = now_ms() - 1_000
    with EmbeddedClusters(base) as clusters:
        src, dst = clusters.pair(wal=WalSettings(region_servers=2))
        for seed in range(4):  # a few files per server
            run_workload(src, TABLE, seed, 150)
            assert src.region_servers is not None
            src.region_servers.roll()
        copy_table_schema(src, dst, TABLE)
        yield Source(src, dst, start)
