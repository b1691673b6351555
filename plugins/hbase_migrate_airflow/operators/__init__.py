"""Operators: each ``execute()`` calls one lifecycle step and returns its summary."""

from hbase_migrate_airflow.operators.lifecycle import (
    CutoverCheckOperator,
    PrepareOperator,
    ReplayOperator,
    SnapshotOperator,
    ValidateOperator,
)

__all__ = ["CutoverCheckOperator", "PrepareOperator", "ReplayOperator", "SnapshotOperator",
           "ValidateOperator"]
