"""Step 5: the cutover gate (DESIGN section 6): go only when nothing is left to replay, no
gap is open, the replay lag is below a threshold, and a validation made after the last
catch-up matched on every planned range (one run, made whole or in parts). The verdict and
its reasons are a ledger step; for a Bigtable target it lists every accepted loss the
migration's steps met (``accepted_losses``: the validation leaves them out of the source's
side, so they do not stand in the way of go). On go, the source snapshots the ``hbase``
copy method took are deleted, unless the snapshot step kept them (``--keep-snapshot``,
``[snapshot] keep``).
"""

from __future__ import annotations

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.audit.records import GateVerdict, Provenance, StepStatus, Verdict
from hbase_migrate.audit.status import compute_status, drained
from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.hbase.bigtable_target import migration_losses
from hbase_migrate.lifecycle.judge import uncovered
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.lifecycle.step import recorded_step
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.snapshot.hbase_method import delete_snapshots
from hbase_migrate.timeutil import format_duration, format_time, human_duration

DEFAULT_MAX_LAG_MS = 60_000


def cutover_check(spec: MigrationSpec, *, max_lag: int = DEFAULT_MAX_LAG_MS,
                  provenance: Provenance | None = None) -> StepResult:
    """The go / no-go verdict with the reasons against it."""
    with recorded_step(spec, "cutover-check", provenance) as step:
        now = now_ms()
        ledger, mid = step.ledger, step.migration.id
        status, = compute_status(ledger, now=now, names=[spec.name],
                                 archive_ttl=spec.replay.archive_ttl).migrations
        reasons = []
        if status.gaps:
            reasons.append(f"{len(status.gaps)} open gap(s): edits lost for the target "
                           "(see `hbase-migrate status`)")
        files = ledger.wal_files(mid, SOURCE)
        undone = [f for f in files if not drained(f)]
        if not files:
            reasons.append("no source WAL file was ever listed: replay has not run")
        if undone:
            reasons.append(f"{len(undone)} source WAL file(s) not replayed to their end "
                           f"(e.g. {undone[0].path}, {undone[0].status})")
        if status.lag is None or status.lag > max_lag:
            lag = "unknown" if status.lag is None else human_duration(status.lag)
            reasons.append(f"replay lag {lag} is above {format_duration(max_lag)}")
        catch_ups = [s for s in ledger.steps(mid, "replay") if s.ended_at is not None]
        last = status.last_validation
        if last is None:
            reasons.append("no validation yet")
        elif missing := uncovered(ledger, mid, spec, ledger.last_validations(mid)):
            reasons.append(f"the last validation compared {last.ranges} range(s) but not "
                           f"{len(missing)} planned one(s) (e.g. {missing[0]}): a part is "
                           "missing or it validated some tables only")
        elif last.verdict != Verdict.MATCH:
            reasons.append(f"the last validation found {last.mismatched} of {last.ranges} "
                           "range(s) different")
        elif catch_ups and catch_ups[-1].ended_at and last.validated_at < catch_ups[-1].ended_at:
            reasons.append(f"the last validation ({format_time(last.validated_at)}) is older "
                           f"than the last catch-up replay ({format_time(catch_ups[-1].ended_at)})")
        failed = [s for s in catch_ups[-1:] if s.status is StepStatus.FAILED]
        if failed:
            reasons.append(f"the last catch-up replay (step #{failed[0].id}) failed: "
                           f"{failed[0].error}")
        if spec.target.bigtable is not None:  # go or not, every accepted loss is listed
            step.metrics["accepted_losses"] = migration_losses(ledger.steps(mid))
        step.metrics.update(verdict=GateVerdict.NO_GO if reasons else GateVerdict.GO,
                            reasons=reasons,
                            lag=status.lag, max_lag=max_lag, open_gaps=len(status.gaps),
                            files_not_drained=len(undone))
        copies = [s for s in ledger.steps(mid, "snapshot") if s.status is StepStatus.SUCCEEDED]
        if not reasons and copies and copies[-1].metrics.get("method") == "hbase" \
                and not copies[-1].metrics.get("keep_snapshot"):
            admin = open_cluster(spec.source).admin(spec.snapshot.hbase_version)
            step.metrics["snapshots_deleted"] = delete_snapshots(spec, admin)
        return step.result()
