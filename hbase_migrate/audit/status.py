"""The status report: per migration and source server, replay lag, pending WAL files, gaps,
WALs close to the archive cleaner's TTL, and the last validation verdict.

``StatusReport.to_json()`` is the stable shape of ``hbase-migrate status --json`` (times in
ms since the epoch, durations in ms, ``null`` when unknown; keys sorted when printed)::

    {"now", "ledger", "schema_version", "archive_ttl", "has_gaps",
     "migrations": [{
        "name", "state", "source", "target", "watermark",
        "lag": max lag over its servers (0 when every listed WAL file is replayed to its
               end, else now less the write time of the oldest edit not yet replayed),
        "retention": null | {"kind": "pinned"|"ttl"|"at-risk", "archive_ttl", "interval",
                             "peer", "detail"} (as the newest replay run saw it),
        "servers": [{"server", "newest_replayed_write_time", "lag",
                     "pending": {"seen", "replaying", "failed"}, "replayed", "gaps"}],
        "gaps": [{"kind": "vanished"|"missing", "server", "path" (null for missing),
                  "first_time", "last_time", "detail", "detected_at", "remedy"}],
        "retention_warnings": [{"server", "path", "status", "name_time", "first_seen",
                                "deadline", "remaining"}],
        "last_validation": null | {"step_id", "validated_at", "ranges", "mismatched",
                                   "verdict"},
        "steps": the newest ``recent_steps`` steps, oldest first: [{"id", "kind", "status",
                 "started_at", "ended_at", "by": "cli" or "<dag_id>/<run_id>/<task_id>",
                 "dag_id", "run_id", "task_id", "host" (where it ran), "error"}],
        "streams": {"source" (replay), "cdc": {"stream", "lag", "cells": {type: n},
                    "wal_files": {status: n}, "open_gaps", "outage_seconds",
                    "waiting": null | {"service", "endpoint", "since", "error"},
                    "offsets": [{"server", "file", "offset", "status"}] (each server's
                               newest WAL file and the byte offset acknowledged in it),
                    "messages": Kafka messages the broker acknowledged over the CDC
                                stream's runs (null for replay)}},
        "copy": null (no range planned) | {"ranges", "ranges_copied", "cells_copied",
                 "parts": null | {"planned", "succeeded", "running", "failed"} (the parts
                 of the newest copy plan: its snapshot-part steps, the newest try each)},
        "limits": {"set": the values ``limits set`` keeps (newest per key),
                   "in_force": null, or (with the migration config) every ``[limits]`` key
                   as the config and those values make it,
                   "steps": {"snapshot"|"validate"|"replay": the limits in force as the
                             newest such step ended (per second, null: unlimited)}}}]}

A retention warning is an archived (``oldWALs/``) file not yet replayed whose age since it was
first seen has reached ``warn_fraction`` of ``archive_ttl``: it was archived at or before it was
first seen, so the cleaner may delete it at ``deadline = first_seen + archive_ttl`` or earlier.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from hbase_migrate.audit.errors import LedgerError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.liveness import abandoned
from hbase_migrate.audit.records import (
    PENDING,
    MigrationRecord,
    StepRecord,
    StepStatus,
    Verdict,
    WalFileRecord,
    WalStatus,
)
from hbase_migrate.config import LimitSettings

log = logging.getLogger(__name__)

SOURCE = "source"
CDC = "cdc"
STREAMS = (SOURCE, CDC)  # replay's WAL progress, and the CDC stream's
CDC_KINDS = ("cdc", "cdc-backfill")  # the CDC stream's steps
OUTAGE_STEP = "outage"  # a step recording an outage a run waited out (replay/outage.py)
SNAPSHOT_PLAN_STEP = "snapshot-plan"  # the plan of a copy made in parts (lifecycle/snapshot)
SNAPSHOT_PART_STEP = "snapshot-part"  # one part of such a copy
DEFAULT_ARCHIVE_TTL_MS = 600_000  # hbase.master.logcleaner.ttl default
DEFAULT_WARN_FRACTION = 0.8
DEFAULT_RECENT_STEPS = 10


@dataclass(frozen=True)
class ServerStatus:
    server: str
    newest_replayed_write_time: int | None
    lag: int | None
    pending: dict[str, int]
    replayed: int
    gaps: int


@dataclass(frozen=True)
class GapStatus:
    kind: str
    server: str
    path: str | None
    first_time: int | None
    last_time: int | None
    detail: str | None
    detected_at: int
    remedy: str


@dataclass(frozen=True)
class RetentionWarning:
    server: str
    path: str
    status: str
    name_time: int | None
    first_seen: int
    deadline: int
    remaining: int


@dataclass(frozen=True)
class ValidationStatus:
    step_id: int | None
    validated_at: int
    ranges: int
    mismatched: int
    verdict: str


@dataclass(frozen=True)
class StepStatusLine:
    """One ledger step and who ran it: the command line, or an Airflow task of a DAG run."""

    id: int
    kind: str
    status: str
    started_at: int
    ended_at: int | None
    by: str
    dag_id: str | None
    run_id: str | None
    task_id: str | None
    error: str | None
    host: str | None = None


@dataclass(frozen=True)
class StreamFigures:
    """The live figures of one stream of a migration (``source``: replay; ``cdc``): what
    ``status --json`` and the ``--metrics-port`` endpoint of a follow both report."""

    stream: str
    lag: int | None  # ms, as replay_lag
    cells: dict[str, int]  # acknowledged cells by HBase type, over every WAL file
    wal_files: dict[str, int]  # by status
    open_gaps: int
    outage_seconds: float  # the outages waited out (or being waited out), in all
    waiting: dict[str, Any] | None  # the outage being waited out now: service, endpoint, since
    offsets: list[dict[str, Any]]  # per server, its newest file and the offset acknowledged
    messages: int | None  # the CDC stream's acknowledged messages, over its runs


@dataclass(frozen=True)
class MigrationStatus:
    name: str
    state: str
    source: str
    target: str
    watermark: int | None
    lag: int | None
    servers: list[ServerStatus]
    gaps: list[GapStatus]
    retention_warnings: list[RetentionWarning]
    retention: dict[str, Any] | None
    last_validation: ValidationStatus | None
    steps: list[StepStatusLine]
    streams: dict[str, StreamFigures]
    copy: dict[str, Any] | None
    limits: dict[str, Any]
    # the newest WAL listing the lag is as of: a drained lag is 0 only up to that listing
    listed_at: int | None = None


@dataclass(frozen=True)
class StatusReport:
    now: int
    ledger: str
    schema_version: int
    archive_ttl: int
    migrations: list[MigrationStatus]

    @property
    def has_gaps(self) -> bool:
        return any(m.gaps for m in self.migrations)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "has_gaps": self.has_gaps}


def compute_status(
    ledger: Ledger, *, now: int, names: Sequence[str] | None = None,
    archive_ttl: int = DEFAULT_ARCHIVE_TTL_MS, warn_fraction: float = DEFAULT_WARN_FRACTION,
    recent_steps: int = DEFAULT_RECENT_STEPS, configured: LimitSettings | None = None,
) -> StatusReport:
    """The report as of ``now`` for the migrations ``names`` (all when ``None``);
    ``configured``: the ``[limits]`` of the migration's config, when known."""
    chosen = [m for m in ledger.migrations() if names is None or m.name in names]
    return StatusReport(
        now=now, ledger=ledger.url, schema_version=ledger.schema_version,
        archive_ttl=archive_ttl,
        migrations=[_migration_status(ledger, m, now, archive_ttl, warn_fraction, recent_steps,
                                      configured) for m in chosen],
    )


def _migration_status(ledger: Ledger, migration: MigrationRecord, now: int,
                      archive_ttl: int, warn_fraction: float, recent_steps: int,
                      configured: LimitSettings | None) -> MigrationStatus:
    _reap(ledger, migration.id, now)
    files = ledger.wal_files(migration.id, SOURCE)
    gaps = [GapStatus(g.kind.value, g.server, g.path, g.first_time, g.last_time, g.detail,
                      g.detected_at, g.remedy)
            for g in ledger.gaps(migration.id, stream=SOURCE)]
    servers = [_server_status(server, [f for f in files if f.server == server], gaps, now)
               for server in sorted({f.server for f in files})]
    lags = [s.lag for s in servers if s.lag is not None]
    return MigrationStatus(
        name=migration.name, state=migration.state, source=migration.source,
        target=migration.target, watermark=migration.watermark,
        lag=max(lags) if lags else None, servers=servers, gaps=gaps,
        retention_warnings=_retention_warnings(files, now, archive_ttl, warn_fraction),
        retention=_retention(ledger, migration.id),
        last_validation=_last_validation(ledger, migration.id),
        steps=[_step_line(s) for s in ledger.steps(migration.id)[-recent_steps:]]
        if recent_steps > 0 else [],
        streams={stream: stream_figures(ledger, migration.id, stream, now)
                 for stream in _streams(ledger, migration.id, now)},
        copy=copy_progress(ledger, migration.id),
        limits=_limits(ledger, migration.id, configured),
        listed_at=max((f.last_seen for f in files), default=None),
    )


def copy_progress(ledger: Ledger, migration_id: int) -> dict[str, Any] | None:
    """How far the snapshot copy is: its planned ranges copied, and the parts of the newest
    copy plan by the state of their newest try (a retried part counts once; a try killed
    before it recorded its part is none)."""
    ranges = ledger.key_ranges(migration_id)
    if not ranges:
        return None
    plans = ledger.steps(migration_id, SNAPSHOT_PLAN_STEP)
    parts = None
    if plans and plans[-1].metrics.get("parts"):
        newest: dict[str, StepRecord] = {}
        for step in ledger.steps(migration_id, SNAPSHOT_PART_STEP):
            if step.id > plans[-1].id and "part" in step.metrics:
                newest[str(step.metrics["part"])] = step
        states = Counter(s.status.value for s in newest.values())
        parts = {"planned": len(plans[-1].metrics["parts"]),
                 **{k: states[k] for k in ("succeeded", "running", "failed")}}
    return {"ranges": len(ranges),
            "ranges_copied": sum(r.copied_at is not None for r in ranges),
            "cells_copied": sum(r.copied_cells or 0 for r in ranges), "parts": parts}


def _reap(ledger: Ledger, migration_id: int, now: int) -> None:
    """Mark the migration's abandoned steps failed, so that none shows as running; a ledger
    this reader cannot write keeps them (the next step marks them)."""
    try:
        ledger.reap_steps(migration_id, now)
    except (LedgerError, SQLAlchemyError) as exc:
        log.info("abandoned steps not marked (the ledger refused the write): %s", exc)


def _streams(ledger: Ledger, migration_id: int, now: int) -> list[str]:
    """The streams with WAL-file rows, or waiting for a service (before any listing)."""
    found = set(ledger.streams(migration_id))
    found |= {str(o.metrics.get("stream")) for o in ledger.steps(migration_id, OUTAGE_STEP)
              if o.status is StepStatus.RUNNING and abandoned(o, now) is None}
    return sorted(s for s in found if s in STREAMS)


def stream_figures(ledger: Ledger, migration_id: int, stream: str, now: int
                   ) -> StreamFigures:
    """The figures of ``stream`` as the ledger has them at ``now``."""
    files = ledger.wal_files(migration_id, stream)
    cells: Counter[str] = Counter()
    for f in files:
        cells.update(f.cells_by_type)
    outages = [o for o in ledger.steps(migration_id, OUTAGE_STEP)
               if (o.metrics or {}).get("stream") == stream]
    waiting = next(({"service": o.metrics["service"], "endpoint": o.metrics["endpoint"],
                     "since": o.started_at, "error": o.metrics.get("error")}
                    for o in reversed(outages)
                    if o.status is StepStatus.RUNNING and abandoned(o, now) is None), None)
    seconds = sum(((o.ended_at or now) - o.started_at) / 1000 for o in outages)
    newest: dict[str, WalFileRecord] = {}
    for f in files:  # by server and name time: the last one of each server is its newest
        newest[f.server] = f
    messages = None
    if stream == CDC:
        messages = sum(int((s.metrics or {}).get("calls") or 0)
                       for kind in CDC_KINDS for s in ledger.steps(migration_id, kind))
    return StreamFigures(
        stream=stream, lag=replay_lag(files, now), cells=dict(cells),
        wal_files=dict(Counter(f.status.value for f in files)),
        open_gaps=len(ledger.gaps(migration_id, stream=stream)),
        outage_seconds=round(seconds, 3), waiting=waiting,
        offsets=[{"server": f.server, "file": f.path.rsplit("/", 1)[-1],
                  "offset": f.offset_reached, "status": f.status.value}
                 for f in newest.values()],
        messages=messages)


def _limits(ledger: Ledger, migration_id: int, configured: LimitSettings | None
            ) -> dict[str, Any]:
    """The throttles: set with ``limits set``, in force, and as the newest steps ended."""
    overrides = ledger.limit_overrides(migration_id)
    in_force = None
    if configured is not None:
        known = {k: v for k, v in overrides.items() if hasattr(configured, k)}
        in_force = configured.replace(known).to_dict()
    steps = {}
    for step in ledger.steps(migration_id):
        kind = step.kind.removesuffix("-part")  # a part takes its share of its step's
        if kind in ("snapshot", "validate", "replay") and step.metrics.get("limits"):
            steps[kind] = step.metrics["limits"]
    return {"set": overrides, "in_force": in_force, "steps": steps}


def _step_line(step: StepRecord) -> StepStatusLine:
    who = [step.dag_id, step.run_id, step.task_id]
    by = "/".join(w or "-" for w in who) if step.dag_id else "cli"
    return StepStatusLine(step.id, step.kind, step.status.value, step.started_at,
                          step.ended_at, by, step.dag_id, step.run_id, step.task_id,
                          step.error, step.host)


def drained(f: WalFileRecord) -> bool:
    """Nothing of the file is left to replay as of its last listing."""
    if f.status not in PENDING:
        return True
    return f.size is not None and 0 < f.size <= f.offset_reached


def replay_lag(files: Sequence[WalFileRecord], now: int) -> int | None:
    """The replay lag of ``files`` as of ``now``: 0 when every one is drained, else ``now``
    less the write time of the oldest edit not yet replayed (``None`` when unknown)."""
    # The oldest edit not yet replayed was written no earlier than what was acknowledged of
    # its file (else the file's creation).
    waiting = [f.last_write_time if f.offset_reached and f.last_write_time else f.name_time
               for f in files if not drained(f)]
    oldest = min((w for w in waiting if w is not None), default=None)
    return 0 if not waiting else (None if oldest is None else max(0, now - oldest))


def _server_status(server: str, files: list[WalFileRecord], gaps: list[GapStatus],
                   now: int) -> ServerStatus:
    times = [f.last_write_time for f in files if f.last_write_time is not None]
    newest = max(times) if times else None
    return ServerStatus(
        server=server,
        newest_replayed_write_time=newest,
        lag=replay_lag(files, now),
        pending={s.value: sum(f.status is s for f in files) for s in PENDING},
        replayed=sum(f.status is WalStatus.REPLAYED for f in files),
        gaps=sum(g.server == server for g in gaps),
    )


def is_archived(path: str) -> bool:
    """Whether ``path`` lies in HBase's archive folder ``oldWALs/``."""
    return "/oldWALs/" in f"/{path}"


def _retention_warnings(files: list[WalFileRecord], now: int, archive_ttl: int,
                        warn_fraction: float) -> list[RetentionWarning]:
    warnings = [
        RetentionWarning(f.server, f.path, f.status.value, f.name_time, f.first_seen,
                         deadline=f.first_seen + archive_ttl,
                         remaining=f.first_seen + archive_ttl - now)
        for f in files
        if f.status in PENDING and is_archived(f.path)
        and now - f.first_seen >= warn_fraction * archive_ttl
    ]
    return sorted(warnings, key=lambda w: (w.deadline, w.path))


def _retention(ledger: Ledger, migration_id: int) -> dict[str, Any] | None:
    """The archived-WAL retention the newest replay run saw (pinned, ttl or at-risk)."""
    for step in reversed(ledger.steps(migration_id, "replay")):
        found = step.metrics.get("retention")
        if found:
            return dict(found)
    return None


def _last_validation(ledger: Ledger, migration_id: int) -> ValidationStatus | None:
    ranges = ledger.last_validations(migration_id)
    if not ranges:
        return None
    mismatched = sum(r.final_verdict is Verdict.MISMATCH for r in ranges)
    return ValidationStatus(
        step_id=ranges[0].step_id,
        validated_at=max(r.recompared_at or r.validated_at for r in ranges),
        ranges=len(ranges), mismatched=mismatched,
        verdict=(Verdict.MISMATCH if mismatched else Verdict.MATCH).value,
    )
