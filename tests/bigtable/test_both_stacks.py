"""The Bigtable lifecycle from a source on either stack (the embedded cluster, real HBase
2.6.1): the seeded workload (every operation, every delete type, both gateways) before and
after the copy, a WAL roll and a region move in between, then replay and validation; Bigtable
read with Google's client, kept by the source families' VERSIONS as HBase keeps them, must
hold what the source returns."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.cli.minicluster import call_admin
from tests.bigtable.classic import bigtable_as_hbase_reads
from tests.realstack.lifecycle_parts import workload

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]


def test_a_workload_on_either_stack_lands_on_bigtable_as_the_source_reads(
        source_cluster: dict[str, Any], tmp_path: Path, bigtable_emulator: Emulator) -> None:
    table = f"bt_{tmp_path.name[-8:].replace('-', '_')}"
    endpoints = ClusterEndpoints.from_json(source_cluster)
    assert endpoints.thrift2
    since = int(time.time() * 1000) - 60_000
    workload(endpoints, table, 1, ops=150)
    config = tmp_path / "m.toml"
    config.write_text(
        f'[migration]\nname = "both"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
        f'[source]\ncluster_json = "{source_cluster["cluster_json"]}"\n'
        f'[[tables]]\nsource = "{table}"\n'
        f'[target]\nkind = "bigtable"\nproject = "proj"\ninstance = "{table.replace("_", "-")}"\n'
        f'emulator_host = "{bigtable_emulator.host}"\n', encoding="utf-8")
    migration = load_config(config)
    lifecycle.prepare(migration)
    lifecycle.snapshot(migration)
    info = call_admin(source_cluster["cluster_json"], "info")
    holder = next(s for s in info["servers"] if s["alive"] and s["regions"])
    call_admin(source_cluster["cluster_json"], "roll", {})
    call_admin(source_cluster["cluster_json"], "move", {"region": holder["regions"][-1]})
    workload(endpoints, table, 2, ops=150)
    assert lifecycle.replay(migration, start=since).exit_code == 0

    verdict = lifecycle.validate(migration).metrics
    assert (verdict["verdict"], verdict["differing"]) == ("match", [])
    with Thrift2Client(endpoints.thrift2) as source:
        versions = {f.name: f.max_versions for f in source.table_descriptor(table).families}
        expected = {(c.row, c.family, c.qualifier, c.timestamp, c.value)
                    for piece in source.scan(table) for c in piece}
    assert expected and bigtable_as_hbase_reads(config, table, versions) == expected
