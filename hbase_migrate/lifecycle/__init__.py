"""The migration lifecycle, one function per step (DESIGN section 2).

Each step takes the migration spec, explicit arguments and an optional
:class:`~hbase_migrate.audit.records.Provenance`; it records a ledger step with that
provenance and its metrics, moves the migration's state forward, and returns a typed
:class:`~hbase_migrate.lifecycle.result.StepResult` (replay and the CDC stream: their run's
``RunSummary``), whose ``to_json()`` is what a command prints with ``--json`` and what an
Airflow task hands on. Steps are idempotent: run again after a failure or a success, they
reach the same end state and say what they skipped. The command line, the Airflow operators
and the embedded stack's demo only call these functions.

    prepare(spec)          target tables with the source's families and split points
    snapshot(spec)         fix the watermark T0, copy every cell version at [0, T0)
                           (whole, or one part of a copy snapshot_parts planned)
    finish_snapshot(spec)  the end of a copy made in parts: copied once every range is
    replay(spec)           WAL edits since T0 (catch-up), or of a window [start, end)
    validate(spec)         compare source and target (whole, or one part of a run)
    judge_validation(spec, run)  the verdict of a validation run made in parts
    cutover_check(spec)    go / no-go, with reasons
    report(spec)           the audit report (HTML, from the ledger alone; records no step)
    cdc(spec)              the WAL edits as Kafka messages (the CDC stream, beside replay)
    verify_lists(spec)     the soak's linked lists counted on both sides (a lost write shows)
"""

from hbase_migrate.lifecycle.cdc import cdc
from hbase_migrate.lifecycle.cutover import cutover_check
from hbase_migrate.lifecycle.judge import judge_validation
from hbase_migrate.lifecycle.prepare import prepare
from hbase_migrate.lifecycle.replay import replay
from hbase_migrate.lifecycle.report import report
from hbase_migrate.lifecycle.snapshot import snapshot
from hbase_migrate.lifecycle.snapshot_finish import finish_snapshot
from hbase_migrate.lifecycle.validate import validate
from hbase_migrate.lifecycle.verify_lists import verify_lists

__all__ = ["cdc", "cutover_check", "finish_snapshot", "judge_validation", "prepare", "replay",
           "report", "snapshot", "validate", "verify_lists"]
