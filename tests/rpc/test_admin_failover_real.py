"""The native admin riding out a master failover on real Apache HBase 2.6.1: a stack of its
own with two backup masters (one region server), the active master aborted between calls and
during one; the next calls reach the new master (ZooKeeper names it) and the table they
create is the one HBase's own admin (the Thrift2 gateway) describes."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.rpc.admin import NativeAdmin
from hbase_migrate.thrift.thrift2 import Thrift2Client
from realstack.hbase import RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import running, skip_without_real_stack

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    """Its own stack, not one of ``real_stacks``: three masters (no other module's), and the
    tests kill the active ones, which cannot be undone."""
    skip_without_real_stack()
    yield from running(RealHBase(tmp_path_factory.mktemp("failover"), RealHBaseOptions(
        region_servers=1, masters=3, heap="1g", name="failover")), "real HBase, 3 masters")


def desc(table: str) -> TableDescriptor:
    return TableDescriptor(table, (FamilyDescriptor(b"f", max_versions=3, ttl=3600),))


def test_admin_calls_go_on_at_the_new_master(stack: RealHBase) -> None:
    d: dict[str, Any] = stack.described
    cluster_json: Path = stack.cluster_json
    with NativeAdmin(d["zookeeper"], d["znode_parent"], master_wait=180) as admin:
        status = admin.cluster_status()
        first = status.master
        assert first is not None and len(status.backup_masters) == 2
        admin.create_table(desc("before"), [b"m"])

        killed = call_admin(cluster_json, "kill-master")
        assert killed == str(first)
        admin.create_table(desc("after"), [b"g", b"p"])  # rides out the failover
        assert admin.master_server is not None and admin.master_server != first
        assert admin.failovers == 1
        assert admin.master_server == admin.active_master() == admin.cluster_status().master
        with Thrift2Client(d["thrift2"]) as t2:
            assert t2.table_descriptor("after") == admin.table_descriptor("after")
            assert [r.start_key for r in t2.regions("after")] == [b"", b"g", b"p"]
        admin.snapshot("before", "failover_snap")
        assert [s.name for s in admin.snapshots("failover_")] == ["failover_snap"]
        admin.drop("before")
        assert not admin.table_exists("before") and admin.table_exists("after")


def test_a_call_in_flight_when_the_master_dies(stack: RealHBase) -> None:
    """The master asked to abort while a disable waits on it (and a create follows): both
    end done, at the new master."""
    d = stack.described
    with NativeAdmin(d["zookeeper"], d["znode_parent"], master_wait=180) as admin:
        before = admin.master_server or admin.active_master()
        if not admin.table_exists("after"):
            pytest.skip("the first test's table is not there")
        asked: list[float] = []

        def kill() -> None:
            asked.append(time.monotonic())
            call_admin(stack.cluster_json, "kill-master")

        killer = threading.Timer(0.05, kill)
        killer.start()
        try:
            admin.disable_table("after")
            disabled = time.monotonic()
            admin.create_table(desc("during"))
        finally:
            killer.join()
        assert asked and asked[0] < disabled  # the abort was asked for during the disable
        assert admin.active_master() != before and admin.failovers >= 1
        assert admin.table_state("after") == "DISABLED"
        assert admin.table_state("during") == "ENABLED"
