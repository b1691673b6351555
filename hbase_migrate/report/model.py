"""What the report shows, read from the ledger alone (opened read-only), and the facts derived
from it: who ran each step, the replay runs' lag and throughput, bulk loads, artifacts."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol

from hbase_migrate.audit.errors import LedgerError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import (
    AnchorRecord,
    GapRecord,
    MigrationRecord,
    StepRecord,
    ValidationRecord,
    WalFileRecord,
)
from hbase_migrate.audit.status import CDC, StreamFigures, stream_figures

SOURCE = "source"
CUTOVER_KIND = "cutover-check"
REPLAY_KINDS = ("replay", "backfill")
# Names under which a step or a validation row may point at a kept artifact (GX results,
# Data Docs): a key holding one of these words and a path.
_ARTIFACT_WORDS = ("artifact", "gx", "great_expectations", "data_docs", "docs", "result")
_ARTIFACT_SUFFIXES = (".json", ".html", ".htm")


class RepairLike(Protocol):
    """A key range rewritten on the target from the source, as a ledger whose schema keeps
    repairs (``Ledger.repairs``) records it."""

    @property
    def step_id(self) -> int | None: ...
    @property
    def table_name(self) -> str: ...
    @property
    def range_start(self) -> bytes: ...
    @property
    def range_end(self) -> bytes: ...
    @property
    def reason(self) -> str: ...
    @property
    def puts(self) -> int: ...
    @property
    def deletes(self) -> int: ...
    @property
    def verdict(self) -> Any: ...
    @property
    def repaired_at(self) -> int: ...


@dataclass(frozen=True)
class ReportData:
    """Everything the ledger holds about one migration, as of ``now``."""

    now: int
    ledger_url: str
    schema_version: int
    migration: MigrationRecord
    steps: list[StepRecord]
    files: list[WalFileRecord]  # the source's WAL files, by server and name time
    gaps: list[GapRecord]  # open and resolved
    validations: list[ValidationRecord]  # every row recorded, oldest first
    # the validation runs (parts together, newest row per range), oldest first; the last is
    # the newest run, read as ``status`` reads it (``Ledger.last_validations``)
    validation_runs: list[list[ValidationRecord]]
    anchors: list[AnchorRecord]
    repairs: list[RepairLike]
    cdc: StreamFigures | None = None  # the CDC stream's figures, when it ran
    # source and target as reached (reached_as: Bigtable, ZooKeeper, RPC URI, gateways), from
    # the newest definition; None for a migration recorded before definitions were kept
    sides: tuple[str, str] | None = None


def reached_as(section: dict[str, Any]) -> str:
    """How a definition's cluster section is reached, as its user wrote it: ``bigtable:
    projects/p/instances/i``, ``native: ZooKeeper zk:2181/hbase``, ``native:
    hbase+rpc://rs:16020`` (HBase's RPC registry, no ZooKeeper) or ``thrift:
    gw:9090,gw:9091``; never an empty name."""
    if section.get("kind") == "bigtable":
        emulator = section.get("emulator_host")
        at = f" (emulator {emulator})" if emulator else ""
        return f"bigtable: projects/{section.get('project')}/instances/" \
               f"{section.get('instance')}{at}"
    zookeeper = section.get("zookeeper")
    where = (f"ZooKeeper {zookeeper}{section.get('znode_parent') or '/hbase'}" if zookeeper
             else str(section.get("uri") or section.get("name") or "(no address recorded)"))
    if section.get("client") == "native":
        return f"native: {where}"
    gateways = ",".join(str(section[k]) for k in ("thrift", "thrift2") if section.get(k))
    return f"thrift: {gateways}" if gateways else f"native: {where}"


def _cdc(ledger: Ledger, migration_id: int, now: int) -> StreamFigures | None:
    """The CDC stream's figures, as ``status`` gives them, when the stream ran."""
    if CDC not in ledger.streams(migration_id):
        return None
    return stream_figures(ledger, migration_id, CDC, now)


def load(ledger: Ledger, name: str, now: int) -> ReportData:
    """The migration ``name`` of an open ledger; :class:`LedgerError` when it holds none."""
    record = ledger.migration(name)
    if record is None:
        known = ", ".join(m.name for m in ledger.migrations()) or "none"
        raise LedgerError(f"ledger {ledger.url} holds no migration {name!r} (it holds: "
                          f"{known})")
    return ReportData(
        now=now, ledger_url=ledger.url, schema_version=ledger.schema_version, migration=record,
        steps=ledger.steps(record.id), files=ledger.wal_files(record.id, SOURCE),
        gaps=ledger.gaps(record.id, include_resolved=True),
        validations=ledger.validations(record.id),
        validation_runs=_validation_runs(ledger, record.id), anchors=ledger.anchors(record.id),
        repairs=_repairs(ledger, record.id), cdc=_cdc(ledger, record.id, now),
        sides=_sides(ledger.definition(name)))


def _sides(definition: dict[str, Any] | None) -> tuple[str, str] | None:
    if definition is None:
        return None
    return reached_as(definition["source"]), reached_as(definition["target"])


def _validation_runs(ledger: Ledger, migration_id: int) -> list[list[ValidationRecord]]:
    """Every validation run, the newest as ``status`` reads it."""
    runs = ledger.validation_runs(migration_id)
    return [*runs[:-1], ledger.last_validations(migration_id)] if runs else []


def _repairs(ledger: Ledger, migration_id: int) -> list[RepairLike]:
    """The ranges repaired, where the ledger's schema keeps them (else none)."""
    reader = getattr(ledger, "repairs", None)
    return list(reader(migration_id)) if callable(reader) else []


def caller(step: StepRecord) -> str:
    """Who ran a step: ``CLI`` or the DAG's id."""
    return step.dag_id or "CLI"


def who(step: StepRecord) -> str:
    """Who ran a step, in full: the command line, or DAG run and task."""
    if not step.dag_id:
        return "command line"
    where = f" on {step.host}" if step.host else ""
    return " · ".join(x for x in (step.dag_id, step.run_id, step.task_id) if x) + where


def cells_of(metrics: Mapping[str, Any]) -> int:
    """Cells a step wrote: a ``cells`` count, or the sum of a cells-by-type dict."""
    cells = metrics.get("cells")
    if isinstance(cells, dict):
        return sum(int(v) for v in cells.values() if isinstance(v, (int, float)))
    return int(cells) if isinstance(cells, (int, float)) else 0


@dataclass(frozen=True)
class ReplayRun:
    """One finished replay or backfill step, as the throughput and lag plots see it."""

    step: StepRecord
    cells: int
    entries: int
    lag: int | None

    @property
    def seconds(self) -> float:
        return max(0.001, ((self.step.ended_at or self.step.started_at) - self.step.started_at)
                   / 1000)

    @property
    def rate(self) -> float:
        return self.cells / self.seconds

    @property
    def limit(self) -> float | None:
        """The replay limit in force as the run ended (cells/s; None: unlimited)."""
        limits = self.step.metrics.get("limits") or {}
        value = limits.get("replay_cells_per_second")
        return float(value) if isinstance(value, (int, float)) else None


def replay_runs(data: ReportData) -> list[ReplayRun]:
    out = []
    for step in data.steps:
        if step.kind in REPLAY_KINDS and step.ended_at is not None:
            lag = step.metrics.get("lag")
            out.append(ReplayRun(step, cells_of(step.metrics), int(step.metrics.get(
                "entries") or 0), int(lag) if isinstance(lag, (int, float)) else None))
    return out


def lag_points(data: ReportData) -> list[tuple[int, float]]:
    """(time, lag in ms) as recorded by catch-up runs and cutover checks, in time order."""
    points = []
    for step in data.steps:
        lag = step.metrics.get("lag")
        if step.ended_at is not None and isinstance(lag, (int, float)) and (
                step.kind in ("replay", CUTOVER_KIND)):
            points.append((step.ended_at, float(lag)))
    return sorted(points)


def latest_validation(data: ReportData) -> list[ValidationRecord]:
    """The ranges of the newest validation run (empty when none ran)."""
    return data.validation_runs[-1] if data.validation_runs else []


def latest_cutover(data: ReportData) -> StepRecord | None:
    checks = [s for s in data.steps if s.kind == CUTOVER_KIND and s.ended_at is not None]
    return checks[-1] if checks else None


def bulk_loads(data: ReportData) -> list[dict[str, Any]]:
    """The BULK_LOAD markers replay met (each once), oldest first."""
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for step in data.steps:
        for load_ in step.metrics.get("bulk_loads") or ():
            if isinstance(load_, dict):
                seen.setdefault((load_.get("file"), load_.get("offset"), load_.get("region")),
                                load_)
    return sorted(seen.values(), key=lambda b: (b.get("write_time") or 0))


@dataclass(frozen=True)
class Artifact:
    """A file a step or a validation row points at (GX result JSON, Data Docs)."""

    label: str
    path: str
    where: str  # the step or validation it came from


def _walk(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _walk(item, key)
    elif isinstance(value, str):
        yield key, value


def _is_artifact(key: str, value: str) -> bool:
    name = key.lower()
    looks_like_path = "/" in value or value.lower().endswith(_ARTIFACT_SUFFIXES)
    if not looks_like_path or "\n" in value or len(value) > 1000:
        return False
    if any(word in name for word in _ARTIFACT_WORDS):
        return True
    return value.lower().endswith(_ARTIFACT_SUFFIXES) and "path" in name


def artifacts(data: ReportData) -> list[Artifact]:
    """Paths of kept artifacts the ledger mentions: in the metrics of validation-like steps,
    and in any column of a validation row that names one (each path once)."""
    found: dict[str, Artifact] = {}
    for step in data.steps:
        if step.kind in REPLAY_KINDS:
            continue  # WAL paths, not artifacts
        for key, value in _walk(step.metrics):
            if _is_artifact(key, value):
                found.setdefault(value, Artifact(key, value, f"{step.kind} step #{step.id}"))
    names = [f.name for f in fields(ValidationRecord)]
    for row in data.validations:
        for name in names:
            value = getattr(row, name)
            if isinstance(value, str) and _is_artifact(name, value):
                found.setdefault(value, Artifact(name, value, f"validation #{row.id}"))
    return list(found.values())


def link_for(path: str, report_dir: Path | None) -> str:
    """An href for an artifact: relative to the report's folder when both are local files."""
    if "://" in path:
        return path
    target = Path(path)
    if report_dir is not None and target.is_absolute():
        try:
            return target.relative_to(report_dir.absolute()).as_posix()
        except ValueError:
            return target.as_uri()
    return target.as_posix()
