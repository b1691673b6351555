"""Real HBase says a missing table tersely (``scan big: big``, ``Failed 1 action: big``):
the steps still name the table, the side, the cluster and its gateways (issue 38.2, 44.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.cluster.missing import MissingTableError
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase

pytestmark = [pytest.mark.integration, pytest.mark.realstack]


def test_missing_tables_on_real_hbase_are_named(real_hbase: RealHBase, tmp_path: Path) -> None:
    endpoints = load_cluster_json(real_hbase.cluster_json)
    assert endpoints.thrift2
    runner = Workload(endpoints, WorkloadSpec("causes_src", 8, 20))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()

    def config(source: str, target: str, name: str) -> Path:
        path = tmp_path / f"{name}.toml"
        path.write_text(
            f'[migration]\nname = "{name}"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
            f'[source]\ncluster_json = "{real_hbase.cluster_json}"\n'
            f'[target]\ncluster_json = "{real_hbase.cluster_json}"\n'
            f'[[tables]]\nsource = "{source}"\ntarget = "{target}"\n', encoding="utf-8")
        return path

    with pytest.raises(MissingTableError) as missing:
        prepare(load_config(config("causes_typo", "causes_dst", "typo")))
    message = str(missing.value)
    assert message.startswith("source table 'causes_typo' does not exist on the source "
                              f"cluster {endpoints.name!r} (thrift2 {endpoints.thrift2}, "
                              f"thrift {endpoints.thrift})"), message

    spec = load_config(config("causes_src", "causes_dst", "gone"))
    prepare(spec)
    with Thrift2Client(endpoints.thrift2) as client:  # the target table goes after prepare
        client.disable_table("causes_dst")
        client.delete_table("causes_dst")
    with pytest.raises(MissingTableError) as missing:
        snapshot(spec)
    assert str(missing.value).startswith(
        "target table 'causes_dst' does not exist on the target cluster "
        f"{endpoints.name!r} (thrift2 {endpoints.thrift2}"), str(missing.value)
