"""The report's line of how a validation read its sides, for one read from both clusters'
snapshots: each side's snapshots and the requests each cluster's region servers got."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

from hbase_migrate.audit.records import StepRecord
from hbase_migrate.report.validation_sections import _source_read


def test_a_validation_from_both_snapshots_names_both_and_their_requests() -> None:
    step = cast(StepRecord, SimpleNamespace(metrics={
        "source_snapshots": {"orders": "hbase_migrate_m_validate_orders_1"},
        "target_snapshots": {"orders": "hbase_migrate_m_validate_target_orders_2"},
        "source_requests": 0, "target_requests": 0}))
    assert _source_read(step) == (
        "snapshot files: hbase_migrate_m_validate_orders_1; 0 requests sent to its region "
        "servers; the target from snapshot files: hbase_migrate_m_validate_target_orders_2; "
        "0 requests sent to its region servers")
    live = cast(StepRecord, SimpleNamespace(metrics={"source_requests": 6}))
    assert _source_read(live) == "live scan; 6 requests sent to its region servers"
