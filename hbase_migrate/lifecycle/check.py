"""Before the first write: the migration's clusters answer and its source tables (and the
families it names) exist, and, for a Bigtable target, the pre-flight check finds nothing
Bigtable cannot take that the migration has not accepted. Reads only; records no step, so a
start that cannot go on leaves the ledger and the target untouched."""

from __future__ import annotations

import logging
from typing import Any

from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.lifecycle.bigtable_check import preflight
from hbase_migrate.lifecycle.missing import schema_reader
from hbase_migrate.lifecycle.result import StepResult

log = logging.getLogger(__name__)


def check(spec: MigrationSpec) -> StepResult:
    """Open both clusters' gateways (an outage raises as it does anywhere: a retry can mend
    it) and look up every source table (over Thrift1 when the source's Thrift2 gateway has
    no admin calls, as HBase 1.x's; a Bigtable target is asked for its tables); a missing
    table or family is a ConfigError naming each one (no retry can mend it). For a Bigtable
    target, the pre-flight check (:mod:`.bigtable_check`, which ``prepare`` runs again
    before its first write) follows: each finding is logged, the report is the result's
    ``preflight``, and a finding not accepted raises
    :class:`~hbase_migrate.bigtable.errors.BigtablePreflightError`."""
    missing: list[str] = []
    tables = []
    with schema_reader(spec.source) as describe, open_cluster(spec.target).client() as target:
        if spec.target.bigtable is not None:  # its client connects on its first call
            target.probe()
        for table in spec.tables:
            desc = describe(table.source)
            if desc is None:
                missing.append(f"table {table.source}")
                continue
            have = {f.name.decode("utf-8", "replace") for f in desc.families}
            missing += [f"family {table.source}:{f}" for f in table.families if f not in have]
            tables.append(table.source)
    if missing:
        raise ConfigError(f"migration {spec.name!r}: the source has no {', no '.join(missing)}"
                          " (check the migration's tables and families)")
    metrics: dict[str, Any] = {"tables": tables}
    if spec.target.bigtable is not None:
        with open_cluster(spec.source).client() as source:
            report = preflight(spec, source)
        level = logging.WARNING if report.found else logging.INFO
        for line in report.lines():
            log.log(level, "migration %r: %s", spec.name, line)
        metrics["preflight"] = report.to_json()
        report.raise_refused()
    return StepResult(spec.name, None, None, metrics)
