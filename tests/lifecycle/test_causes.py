"""Errors that say their cause (issues 38.2 and 44.4): a step after a failed one is refused
naming the step that failed, when, and what to run, and writes nothing; a table or column
family missing on either side is named with the side, the cluster and its endpoints,
whatever HBase's own message said, in prepare, snapshot, replay (both gateways) and
validate."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.missing import MissingFamilyError, MissingTableError
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.lifecycle.step import StepRefusedError
from hbase_migrate.timeutil import format_time
from minihbase.regionserver import WalSettings
from minihbase.zookeeper import ZooKeeperServer
from tests.cli_util import fails
from tests.support.minicluster import (
    EmbeddedClusters,
    clusters_over_rpc,
    edits_after_t0,
    run_workload,
    t2,
    write_migration,
)

pytestmark = pytest.mark.integration
TABLE = "orders"


def names(endpoints: ClusterEndpoints) -> list[str]:
    """What a message about a cluster must hold: its name and where it was reached (both
    gateways, or the ZooKeeper quorum of a cluster reached over HBase's RPC)."""
    if endpoints.native:
        assert endpoints.zookeeper
        return [f"cluster {endpoints.name!r}", endpoints.zookeeper]
    assert endpoints.thrift2
    return [f"cluster {endpoints.name!r}", endpoints.thrift2, endpoints.thrift]


def steps_of(spec: MigrationSpec) -> list[tuple[str, StepStatus, int | None, str]]:
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        return [(s.kind, s.status, s.ended_at, s.error or "") for s in ledger.steps(record.id)]


def test_steps_after_a_failed_prepare_are_refused_saying_which_when_and_what_to_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=3, ops=30)
        config = write_migration(tmp_path, src, dst, "ordres")  # a typo
        spec = load_config(config)

        with pytest.raises(MissingTableError) as missing:
            prepare(spec)
        message = str(missing.value)
        assert message.startswith("source table 'ordres' does not exist on the source "
                                  "cluster 'source'"), message
        assert all(n in message for n in names(src.endpoints)), message
        assert isinstance(missing.value, ConfigError)  # no retry mends it
        (kind, status, ended, _), = steps_of(spec)
        assert (kind, status) == ("prepare", StepStatus.FAILED) and ended is not None
        failed_at = format_time(ended)

        with pytest.raises(StepRefusedError) as refused:
            snapshot(spec)
        assert str(refused.value) == (
            f"migration 'mig': the snapshot copy needs the migration schema_ready or later, "
            f"but step prepare (#1) failed at {failed_at} (MissingTableError: {message}); "
            "nothing was done: fix that cause and run prepare again")
        with pytest.raises(StepRefusedError, match=rf"^migration 'mig': validation needs the "
                           rf"migration copied or later, but step prepare \(#1\) failed at "
                           rf"{failed_at} .*run prepare again, then snapshot$"):
            validate(spec)
        with t2(dst) as target:  # nothing was written to the target
            assert not target.table_exists("ordres") and not target.table_exists(TABLE)
        assert [(k, s) for k, s, _, _ in steps_of(spec)][1:] == [
            ("snapshot", StepStatus.FAILED), ("validate", StepStatus.FAILED)]
        with Ledger.open(spec.ledger_url) as ledger:
            record = ledger.migration(spec.name)
            assert record is not None and record.state == "failed"

        # the command line says it in one line, exit code 2
        line = fails(["snapshot", "--config", str(config)], capsys)
        assert line.startswith("migration 'mig': the snapshot copy needs") and \
            line.endswith("run prepare again"), line


def test_a_failed_copy_is_retried_but_a_failed_prepare_is_not_gone_past(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    """A migration failed by a later step moves on when its earlier steps hold: a retried
    snapshot runs (the refusal looks at the steps, not at the state alone)."""
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=4, ops=30)
        spec = load_config(write_migration(tmp_path, src, dst, TABLE))
        prepare(spec)
        with t2(dst) as target:  # the target table goes: the copy fails, naming it
            target.disable_table(TABLE)
            target.delete_table(TABLE)
        with pytest.raises(MissingTableError) as missing:
            snapshot(spec)
        message = str(missing.value)
        assert message.startswith("target table 'orders' does not exist on the target "
                                  "cluster 'target'") and "run prepare" in message, message
        assert all(n in message for n in names(dst.endpoints)), message
        with pytest.raises(StepRefusedError, match=r"step snapshot \(#2\) failed at .*target "
                           r"table 'orders' does not exist"):
            validate(spec)
        prepare(spec)
        assert snapshot(spec).to_json()["state"] == "copied"


def test_a_missing_family_is_named_on_either_side(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=5, ops=30)
        config = write_migration(tmp_path, src, dst, TABLE)
        text = config.read_text().replace('source = "orders"\n',
                                          'source = "orders"\nfamilies = ["d", "x"]\n')
        config.write_text(text.replace('name = "mig"', 'name = "fam"'))
        with pytest.raises(MissingFamilyError) as missing:
            prepare(load_config(config))
        message = str(missing.value)
        assert message.startswith("source table 'orders' on the source cluster 'source'"), \
            message
        assert "has no column family 'x' named in [[tables]] families (it has 'd', 'm')" \
            in message and all(n in message for n in names(src.endpoints)), message

        spec = load_config(write_migration(tmp_path, src, dst, TABLE))
        prepare(spec)
        snapshot(spec)
        with t2(dst) as target:  # the target table made again without family m
            target.disable_table(TABLE)
            target.delete_table(TABLE)
            target.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)))
        with pytest.raises(MissingFamilyError) as missing:
            validate(spec)
        message = str(missing.value)
        assert message.startswith("target table 'orders' on the target cluster 'target'") \
            and "no column family 'm' of source table 'orders' (it has 'd')" in message, \
            message
        assert all(n in message for n in names(dst.endpoints)), message


@pytest.mark.parametrize("gateway", ["thrift2", "thrift"])
def test_replay_names_the_missing_target_table_and_family(
        tmp_path: Path, gateway: str, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=1, roll_period=3600))
    spec = edits_after_t0(tmp_path, src, dst, TABLE)
    thrift1 = gateway == "thrift"
    used = dst.endpoints.thrift if thrift1 else dst.endpoints.thrift2
    with t2(dst) as target:
        target.disable_table(TABLE)
        target.delete_table(TABLE)
    done = replay(spec, force_thrift1=thrift1)
    assert done.exit_code == 1 and done.failures
    for failure in done.failures:
        assert failure.error is not None
        assert (f"target table 'orders' does not exist on the target cluster 'target' "
                f"(at {used}): run prepare") in failure.error, failure
    with t2(dst) as target:
        target.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"d"),)))
    done = replay(spec, force_thrift1=thrift1)
    assert done.exit_code == 1 and done.failures
    for failure in done.failures:
        assert failure.error is not None
        assert (f"target table 'orders' on the target cluster 'target' (at {used}) "
                "has no column family m") in failure.error, failure
