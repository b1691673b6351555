"""The lifecycle steps one after the other on the embedded stack, through the command line,
while a workload writes to the source: each step's ledger record and provenance, the state
moving forward only, reruns that change nothing, and refusals of steps out of order."""

from __future__ import annotations

import json
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import Provenance, StepStatus
from hbase_migrate.cli import cli
from hbase_migrate.config import ValidateSettings, load_config
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.lifecycle.step import StepRefusedError
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import (
    EmbeddedClusters,
    cell_count,
    clusters_over_rpc,
    compare,
    run_workload,
    write_migration,
)

pytestmark = pytest.mark.integration
TABLE = "orders"


def step(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    return result.exit_code, json.loads(result.output)


def ledger_view(config: Path) -> tuple[str, list[tuple[str, StepStatus]]]:
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return record.state, [(s.kind, s.status) for s in ledger.steps(record.id)]


def test_the_steps_migrate_a_live_table_and_reruns_change_nothing(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    settings = WalSettings(region_servers=2, roll_period=1.0)
    with clusters_over_rpc(tmp_path, zookeeper, wal=settings) as (src, dst):
        run_workload(src, TABLE, seed=21, ops=300)
        config = str(write_migration(tmp_path, src, dst, TABLE))

        code, prepared = step("prepare", "--config", config)
        assert code == 0 and prepared["state"] == "schema_ready"
        table, = prepared["tables"]
        assert table["created"] and table["families"]

        live = threading.Thread(target=run_workload, args=(src, TABLE, 22, 300, 200.0))
        live.start()  # the source stays live during the copy and the replay
        code, copied = step("snapshot", "--config", config)
        assert code == 0 and copied["state"] == "copied" and copied["cells"] > 0
        assert copied["anchors"] >= 1
        live.join()
        assert cell_count(dst, TABLE) == copied["cells"]  # only what came before T0

        # In flight, before replay: the exact verdict is recorded, the step does not fail.
        assert not compare(src, dst, TABLE).equal
        code, inflight = step("validate", "--config", config, "--live")
        assert code == 0 and (inflight["verdict"], inflight["mode"]) == ("mismatch", "live")
        assert inflight["state"] == "copied" and "recompare" not in inflight
        table, = inflight["tables"]
        assert inflight["differing"] == [
            f"{TABLE} {m['bounds']}" for m in table["mismatched"]] != []
        with Ledger.open(load_config(config).ledger_url) as ledger:
            record = ledger.migration(load_config(config).name)
            assert record is not None
            rows = ledger.last_validations(record.id)
        assert sum(r.final_verdict.value == "mismatch" for r in rows) == len(
            inflight["differing"])
        with pytest.raises(HBaseMigrateError, match="repair needs a strict validation"):
            validate(load_config(config), live=True, repair=True)
        # the embedded cluster writes no HFiles: no validation from a snapshot's files
        with pytest.raises(HBaseMigrateError, match=r"^validate --from snapshot of migration "
                           r".*no hbase\.version under the source's HBase root") as refused:
            validate(load_config(config), from_snapshot=True)
        assert "the embedded cluster writes none" in str(refused.value)
        # [validate] from = "snapshot" asks the same of a validation naming no --from
        with pytest.raises(HBaseMigrateError, match=r"^validate --from snapshot of migration"):
            validate(replace(load_config(config), validate=ValidateSettings("snapshot")))
        with pytest.raises(HBaseMigrateError, match="repair rewrites ranges from the live"):
            validate(load_config(config), from_snapshot=True, repair=True)

        code, replayed = step("replay", "--config", config)
        assert code == 0, replayed
        code, validated = step("validate", "--config", config)
        assert code == 0 and validated["verdict"] == "match", validated
        assert compare(src, dst, TABLE).equal
        code, gate = step("cutover", "check", "--config", config, "--max-lag", "1h")
        assert code == 0 and gate["verdict"] == "go", gate["reasons"]
        state, steps = ledger_view(Path(config))
        assert state == "validated"
        assert [k for k, _ in steps] == ["prepare", "snapshot", "validate", "replay",
                                         "validate", "cutover-check"]
        assert all(s is StepStatus.SUCCEEDED for _, s in steps)

        # every step again: same end state, and each says what it skipped
        before = cell_count(dst, TABLE)
        assert step("prepare", "--config", config)[1]["skipped"]
        again = step("snapshot", "--config", config)[1]
        assert again["skipped"] and again["watermark"] == copied["watermark"]
        code, rerun = step("replay", "--config", config)
        assert code == 0 and rerun["cells"] == {}
        assert step("validate", "--config", config)[1]["verdict"] == "match"
        assert cell_count(dst, TABLE) == before
        assert ledger_view(Path(config))[0] == "validated"


def test_steps_out_of_order_are_refused_and_failures_can_be_retried(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    # through the gateways: the failed copy is the Thrift2 gateway's of a stopped target
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=23, ops=50)
    config = write_migration(tmp_path, src, dst, TABLE)
    spec = load_config(config)
    Ledger.open(spec.ledger_url).close()  # made first: a refusal leaves no new one
    with pytest.raises(StepRefusedError, match="is created: the snapshot copy needs it "
                                               "schema_ready or later; run prepare first"):
        snapshot(spec)
    assert ledger_view(config)[0] == "created"  # a refusal is not a failure
    with pytest.raises(StepRefusedError, match="run snapshot first"):
        validate(spec)

    who = Provenance("hbase_migrate_start", "manual__1", "prepare")
    prepare(spec, provenance=who)
    dst.stop()  # the target is down: the copy fails, the migration with it
    with pytest.raises(HBaseMigrateError, match="gateway"):
        snapshot(spec)
    assert ledger_view(config)[0] == "failed"
    dst.start()
    dst.write_cluster_json()  # back, on new ports
    retried = snapshot(load_config(config)).to_json()  # a retry leaves failed
    assert retried["state"] == "copied" and compare(src, dst, TABLE).equal
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        first, *_ = ledger.steps(record.id, "prepare")
        assert (first.dag_id, first.run_id, first.task_id) == (
            "hbase_migrate_start", "manual__1", "prepare")
