"""The validate operator's ``read_from`` Param reaches the step as ``from_snapshot``; left
empty, the step reads the migration's ``[validate] from``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hbase_migrate.lifecycle
from hbase_migrate.audit.records import Provenance
from hbase_migrate.config import parse_config
from hbase_migrate_airflow.operators.lifecycle import ValidateOperator


def test_read_from_is_passed_only_when_given(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    spec = parse_config({"migration": {"name": "m", "ledger": f"sqlite:///{tmp_path}/l.db"},
                         "source": {"thrift": "a:9090"}, "target": {"thrift": "b:9090"},
                         "tables": [{"source": "t"}]}, tmp_path / "m.toml")
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(hbase_migrate.lifecycle, "validate",
                        lambda spec, **options: asked.append(options))
    operator = ValidateOperator(task_id="validate")
    for params in ({"read_from": "snapshot"}, {"read_from": "live"}, {"read_from": None}):
        operator.call(spec, Provenance(), params, {})
    assert [a.get("from_snapshot", "unset") for a in asked] == [True, False, "unset"]
