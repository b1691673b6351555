"""Operators: each ``execute()`` calls one lifecycle step and returns its summary."""

from hbase_migrate_airflow.operators.cdc import CdcOperator
from hbase_migrate_airflow.operators.lifecycle import (
    CheckOperator,
    CutoverCheckOperator,
    PrepareOperator,
    ReplayOperator,
    ReportOperator,
    SnapshotOperator,
    ValidateOperator,
)
from hbase_migrate_airflow.operators.parts import (
    ReplayPartsOperator,
    SnapshotPartsOperator,
    ValidatePartsOperator,
)

__all__ = ["CdcOperator", "CheckOperator", "CutoverCheckOperator", "PrepareOperator",
           "ReplayOperator", "ReplayPartsOperator", "ReportOperator", "SnapshotOperator",
           "SnapshotPartsOperator", "ValidateOperator", "ValidatePartsOperator"]
