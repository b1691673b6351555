"""A resumable validation: each range's checksums (both sides, and how each side was read)
are recorded in the ledger as the range finishes (``range_checksums``), so a validation
stopped before its verdict (killed, Ctrl-C, a range that failed) continues where it stopped.

The next validation of the same scope (a whole validation, or the same part of the same run)
looks at the newest one: when it stopped (checksums recorded, no ``validations`` rows) it
compares plans: the planned key ranges, the tables, the migration's watermark, how each side
is read (``--from``), the mode (strict or live) and, in strict mode, the newest finished
replay run (a live validation reads both sides as they move: each range's checksums say
what it was when read, replay runs or not, so a follow does not void them). The same plan:
its ranges are carried over (recorded again under the new step with ``resumed_from``, never
read again) and only the others are read. Another plan: a fresh validation, and one line
saying what changed. ``restart`` forces a fresh one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.liveness import ABANDONED
from hbase_migrate.audit.records import ChecksumRecord, StepStatus, dump_json
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import RangeStats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.timeutil import format_time

LIVE_READ = "live scan"
SNAPSHOT_READ = "snapshot "  # followed by the snapshot's name


def side_read(snapshot: str | None) -> str:
    """How one side of a range is read, as ``range_checksums`` records it."""
    return LIVE_READ if snapshot is None else SNAPSHOT_READ + snapshot


@dataclass(frozen=True)
class Plan:
    """What a validation's checksums depend on; equal plans read equal data."""

    scope: dict[str, Any]  # kind, part, run: which stopped validation this one continues
    body: dict[str, Any]

    @classmethod
    def of(cls, kind: str, part: str | None, run: str | None, ranges: Sequence[KeyRange],
           watermark: int | None, from_snapshot: bool, live: bool, replay: int | None,
           accepted: Sequence[str] = ()) -> Plan:
        """``accepted``: a Bigtable target's accepted losses, left out of the source's
        side (another list, other source digests)."""
        ids = sorted(r.id for r in ranges)
        return cls({"kind": kind, "part": part, "run": run}, {
            "tables": sorted({r.table for r in ranges}), "ranges": len(ids),
            "ranges_sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest(),
            "watermark": watermark, "source": "snapshot" if from_snapshot else "live",
            "target": "live", "mode": "live" if live else "strict", "replay": replay,
            **({"accepted": sorted(accepted)} if accepted else {})})

    def to_json(self) -> dict[str, Any]:
        return {**self.body, "scope": self.scope}

    @property
    def key(self) -> str:
        return hashlib.sha256(dump_json(self.to_json()).encode()).hexdigest()


def changed(then: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """What differs between two plans' bodies, in words (None: nothing)."""
    said: dict[str, Callable[[], str]] = {
        "tables": lambda: f"other tables ({', '.join(then.get('tables') or [])} then)",
        "ranges": lambda: (f"other key ranges ({then.get('ranges')} then, "
                           f"{now['ranges']} now)"),
        "ranges_sha256": lambda: "other key ranges (as many, other bounds)",
        "watermark": lambda: (f"another watermark (T0 {then.get('watermark')} then, "
                              f"{now['watermark']} now)"),
        "source": lambda: f"another --from ({then.get('source')} then, {now['source']} now)",
        "target": lambda: f"another target read ({then.get('target')} then)",
        "mode": lambda: f"another mode ({then.get('mode')} then, {now['mode']} now)",
        "replay": lambda: (f"a replay run finished since (step {now['replay']}): both sides "
                           "may have changed"),
        "accepted": lambda: "other accepted losses ([target] accept) to leave out",
    }
    for key, words in said.items():
        if then.get(key) != now.get(key):
            return words()
    return None


@dataclass
class Resume:
    """Where a validation starts: the stopped step it continues (``from_step``) and the
    ranges carried from it, by range id, with their source snapshots; ``note``: the line
    the output shows (empty when there was nothing to continue)."""

    plan: Plan
    from_step: int | None = None
    carried: dict[str, ChecksumRecord] = field(default_factory=dict)
    note: str = ""

    @property
    def snapshots(self) -> dict[str, str]:
        """The source snapshots the carried ranges were read from, by table."""
        return {r.table_name: r.source_read.removeprefix(SNAPSHOT_READ)
                for r in self.carried.values() if r.source_read.startswith(SNAPSHOT_READ)}

    def pairs(self) -> dict[str, RangePair]:
        return {rid: pair_of(r) for rid, r in self.carried.items()}

    def drop(self, table: str, why: str) -> None:
        """Read ``table``'s carried ranges again (``why``: one line)."""
        gone = [rid for rid, r in self.carried.items() if r.table_name == table]
        for rid in gone:
            del self.carried[rid]
        if gone:
            self.note += f"; {len(gone)} ranges of {table} read again: {why}"

    def to_json(self) -> dict[str, Any]:
        times = [r.recorded_at for r in self.carried.values()]
        return {"from_step": self.from_step, "ranges": len(self.carried),
                "since": min(times) if times else None, "note": self.note}


def pair_of(row: ChecksumRecord) -> RangePair:
    key_range = KeyRange(row.table_name, row.range_start, row.range_end)
    return RangePair(RangeStats(key_range, row.source_rows, row.source_cells,
                                row.source_digest),
                     RangeStats(key_range, row.target_rows, row.target_cells,
                                row.target_digest))


def resume_point(ledger: Ledger, migration_id: int, plan: Plan, ranges: Sequence[KeyRange],
                 restart: bool = False) -> Resume:
    """Where a validation with ``plan`` over ``ranges`` starts (see the module's doc)."""
    newest = next(((step, then, judged) for step, (then, judged) in
                   ledger.checksum_steps(migration_id).items()
                   if then.get("scope") == plan.scope), None)
    if newest is None or newest[2]:  # none, or the newest of its scope finished
        return Resume(plan)
    step, then, _ = newest
    rows = ledger.checksums(migration_id, step)
    when = format_time(min(r.recorded_at for r in rows))
    if restart:
        return Resume(plan, note=f"starting afresh (--restart): the {len(rows)} ranges "
                                 f"validation step {step} recorded from {when} are not used")
    why = changed(then, plan.body)
    if why is not None:
        return Resume(plan, note=f"starting afresh: the validation stopped at step {step} "
                                 f"(ranges recorded from {when}) had {why}")
    wanted = {r.id for r in ranges}
    carried = {rid: r for r in rows
               if (rid := KeyRange(r.table_name, r.range_start, r.range_end).id) in wanted}
    record = next((s for s in ledger.steps(migration_id) if s.id == step), None)
    how = ("still running" if record is not None and record.status is StepStatus.RUNNING
           else "killed" if record is not None and (record.error or "").startswith(ABANDONED)
           else "it failed")
    return Resume(plan, step, carried,
                  f"resumed {len(carried)} of {len(ranges)} key ranges from validation step "
                  f"{step} ({how}; ranges recorded from {when}); reading the other "
                  f"{len(ranges) - len(carried)}")


@dataclass(frozen=True)
class ChecksumRecorder:
    """What records each range's checksums as it finishes (picklable: a range task records
    its own range when it reaches the ledger at ``ledger_url``)."""

    ledger_url: str
    migration_id: int
    step_id: int
    plan_key: str
    plan: tuple[tuple[str, Any], ...]
    source_reads: tuple[tuple[str, str], ...]  # by table; a table not named: live scan
    target_reads: tuple[tuple[str, str], ...] = ()  # by (source) table, the same way

    def __call__(self, pair: RangePair) -> None:
        self.record(pair)

    def record(self, pair: RangePair, ledger: Ledger | None = None,
               resumed: ChecksumRecord | None = None) -> None:
        if ledger is None:
            with Ledger.open(self.ledger_url) as opened:
                self.record(pair, opened, resumed)
            return
        r, s, t = pair.range, pair.source, pair.target
        reads = (resumed.source_read, resumed.target_read) if resumed else (
            dict(self.source_reads).get(r.table, LIVE_READ),
            dict(self.target_reads).get(r.table, LIVE_READ))
        ledger.record_checksum(
            self.migration_id, self.step_id, self.plan_key, dict(self.plan), r.table, r.start,
            r.stop, rows=(s.rows, t.rows), cells=(s.cells, t.cells),
            digests=(s.digest, t.digest), reads=reads,
            resumed_from=resumed.step_id if resumed else None,
            now=resumed.recorded_at if resumed else None)
