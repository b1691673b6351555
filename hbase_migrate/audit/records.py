"""Values read from the ledger, the status vocabularies, and the tables as SQLAlchemy Core
clauses (names only: the DDL in ``sql/`` is the single definition of types and keys)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import column, table
from sqlalchemy.engine import RowMapping

from hbase_migrate.audit.errors import LedgerError


class WalStatus(StrEnum):
    """A WAL file's status; it moves forward only: seen -> replaying -> replayed.

    ``failed`` may return to ``replaying`` on a retry; ``replayed`` and ``gap`` are final;
    ``skipped`` marks a file the selection excluded.
    """

    SEEN = "seen"
    REPLAYING = "replaying"
    REPLAYED = "replayed"
    FAILED = "failed"
    GAP = "gap"
    SKIPPED = "skipped"


PENDING = (WalStatus.SEEN, WalStatus.REPLAYING, WalStatus.FAILED)


class MigrationState(StrEnum):
    """A migration's lifecycle state; it moves forward only, in this order.

    ``failed`` can be reached from any state (a step could not finish), and a retried step
    moves on from ``failed`` to its own state; ``cut_over`` is final.
    """

    CREATED = "created"
    SCHEMA_READY = "schema_ready"
    COPYING = "copying"
    COPIED = "copied"
    REPLAYING = "replaying"
    VALIDATED = "validated"
    CUT_OVER = "cut_over"
    FAILED = "failed"

    @property
    def rank(self) -> int:
        return _STATE_ORDER.index(self) if self in _STATE_ORDER else -1

    def may_become(self, new: MigrationState) -> bool:
        """Whether the move ``self -> new`` is allowed (staying put is)."""
        if self is MigrationState.CUT_OVER:
            return new is MigrationState.CUT_OVER
        if new is MigrationState.FAILED or self is MigrationState.FAILED:
            return True
        return new.rank >= self.rank


_STATE_ORDER = (MigrationState.CREATED, MigrationState.SCHEMA_READY, MigrationState.COPYING,
                MigrationState.COPIED, MigrationState.REPLAYING, MigrationState.VALIDATED,
                MigrationState.CUT_OVER)


@dataclass(frozen=True)
class Provenance:
    """Who runs a step: the Airflow DAG run and task, or nobody (the command line); and
    where (``host``: an Airflow worker's host name; None: this machine's)."""

    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    host: str | None = None


class StepStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class GapKind(StrEnum):
    """How a gap was found: a listed file ``vanished`` before it was replayed, or a stretch of
    a server's WAL chain is ``missing`` (no listing ever saw its files)."""

    VANISHED = "vanished"
    MISSING = "missing"


class Verdict(StrEnum):
    """A validation's verdict on a range, a table or a migration."""

    MATCH = "match"
    MISMATCH = "mismatch"


class GateVerdict(StrEnum):
    """The cutover gate's verdict."""

    GO = "go"
    NO_GO = "no-go"


# Verdicts that fail the step recording them (unless the step only observes: live mode).
NEGATIVE_VERDICTS = (Verdict.MISMATCH, GateVerdict.NO_GO)


def _cols(name: str, *names: str) -> Any:
    return table(name, *(column(n) for n in names))


migrations = _cols("migrations", "id", "name", "source", "target", "tables", "watermark",
                   "state", "created_at", "updated_at")
steps = _cols("steps", "id", "migration_id", "kind", "dag_id", "run_id", "task_id",
              "started_at", "ended_at", "status", "metrics", "error", "host", "pid",
              "heartbeat_at")
wal_files = _cols("wal_files", "id", "migration_id", "cluster", "server", "path", "size",
                  "name_time", "first_seen", "last_seen", "vanished_at", "status",
                  "offset_reached", "entries", "cells_by_type", "markers",
                  "approximated_deletes", "error", "last_write_time", "updated_at")
validations = _cols("validations", "id", "migration_id", "step_id", "table_name", "range_start",
                    "range_end", "source_rows", "target_rows", "source_cells", "target_cells",
                    "source_digest", "target_digest", "verdict", "validated_at",
                    "recompare_verdict", "recompared_at", "gx_result", "data_docs",
                    "differences", "run_key")
key_ranges = _cols("key_ranges", "id", "migration_id", "table_name", "range_start", "range_end",
                   "planned_cells", "planned_at", "copy_step_id", "copied_rows", "copied_cells",
                   "copied_at")
repairs = _cols("repairs", "id", "migration_id", "step_id", "table_name", "range_start",
                "range_end", "reason", "puts", "deletes", "verdict", "detail", "repaired_at")
gaps = _cols("gaps", "id", "migration_id", "kind", "wal_file_id", "server", "wal_group",
             "first_time", "last_time", "detail", "detected_at", "remedy", "resolved_at")
wal_anchors = _cols("wal_anchors", "id", "migration_id", "server", "wal_group", "path",
                    "name_time", "watermark", "recorded_at")
wal_watch = _cols("wal_watch", "id", "migration_id", "stream", "server", "wal_group",
                  "seen_from", "seen_to")
wal_heads = _cols("wal_heads", "id", "migration_id", "stream", "server", "wal_group",
                  "head_time", "older_seen_from", "newer_after")
leases = _cols("leases", "name", "holder", "acquired_at", "expires_at")
migration_definitions = _cols("migration_definitions", "id", "migration_id", "seq",
                                "definition", "change", "recorded_at")
limit_changes = _cols("limit_changes", "id", "migration_id", "name", "value", "set_at")
snapshot_files = _cols("snapshot_files", "id", "migration_id", "snapshot", "path", "source_path",
                       "size", "status", "checksum", "copies", "step_id", "recorded_at")
range_checksums = _cols("range_checksums", "id", "migration_id", "step_id", "plan_key", "plan",
                        "table_name", "range_start", "range_end", "source_rows", "target_rows",
                        "source_cells", "target_cells", "source_digest", "target_digest",
                        "source_read", "target_read", "resumed_from", "recorded_at")
replay_rounds = _cols("replay_rounds", "step_id", "migration_id", "started_at", "rows_known",
                      "validated_by")
round_rows = _cols("round_rows", "step_id", "table_name", "row_count", "row_keys")


def dump_json(value: Any) -> str:
    """The stored form of a JSON column: compact, sorted keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _load_json(text: str | None, table: str, row: RowMapping, column: str) -> Any:
    """A JSON column's value; a value that does not parse names its table, row and column."""
    if not text:
        return {}
    try:
        return json.loads(text)
    except ValueError as exc:
        raise LedgerError(f"ledger table {table}, row id {row['id']}, column {column}: not "
                          f"JSON ({exc}): {text[:80]!r}") from None


@dataclass(frozen=True)
class TableMapping:
    """One migrated table as the ledger stores it."""

    source: str
    target: str
    families: tuple[str, ...] = ()


@dataclass(frozen=True)
class MigrationRecord:
    id: int
    name: str
    source: str
    target: str
    tables: tuple[TableMapping, ...]
    watermark: int | None
    state: str
    created_at: int
    updated_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> MigrationRecord:
        tables = tuple(
            TableMapping(t["source"], t["target"], tuple(t["families"]))
            for t in _load_json(row["tables"], "migrations", row, "tables")
        )
        return cls(row["id"], row["name"], row["source"], row["target"], tables,
                   row["watermark"], row["state"], row["created_at"], row["updated_at"])


@dataclass(frozen=True)
class StepRecord:
    id: int
    migration_id: int
    kind: str
    dag_id: str | None
    run_id: str | None
    task_id: str | None
    started_at: int
    ended_at: int | None
    status: StepStatus
    metrics: dict[str, Any]
    error: str | None
    host: str | None = None  # where it ran
    pid: int | None = None  # the process that ran it there
    heartbeat_at: int | None = None  # when that process last said it runs (audit/liveness.py)

    @classmethod
    def from_row(cls, row: RowMapping) -> StepRecord:
        values = dict(row)
        values["status"] = StepStatus(values["status"])
        values["metrics"] = dict(_load_json(values["metrics"], "steps", row, "metrics"))
        return cls(**values)


@dataclass(frozen=True)
class WalFileRecord:
    id: int
    migration_id: int
    cluster: str
    server: str
    path: str
    size: int | None
    name_time: int | None
    first_seen: int
    last_seen: int
    vanished_at: int | None
    status: WalStatus
    offset_reached: int
    entries: int
    cells_by_type: dict[str, int]
    markers: dict[str, int]
    approximated_deletes: int
    error: str | None
    last_write_time: int | None
    updated_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> WalFileRecord:
        values = dict(row)
        values["status"] = WalStatus(values["status"])
        values["cells_by_type"] = dict(_load_json(values["cells_by_type"], "wal_files", row,
                                                  "cells_by_type"))
        values["markers"] = dict(_load_json(values["markers"], "wal_files", row, "markers"))
        return cls(**values)


@dataclass(frozen=True)
class ValidationRecord:
    """One compared key range; bounds are bytes (``b""`` = open)."""

    id: int
    migration_id: int
    step_id: int | None
    table_name: str
    range_start: bytes
    range_end: bytes
    source_rows: int | None
    target_rows: int | None
    source_cells: int | None
    target_cells: int | None
    source_digest: str | None
    target_digest: str | None
    verdict: Verdict
    validated_at: int
    recompare_verdict: Verdict | None
    recompared_at: int | None
    gx_result: str | None = None  # the GX validation result (JSON file)
    data_docs: str | None = None  # the Data Docs page
    differences: tuple[str, ...] = ()  # the first differing cells
    run_key: str | None = None  # the validation run (its parts share it)

    @property
    def final_verdict(self) -> Verdict:
        """The recompare's verdict when there was one, else the first comparison's."""
        return self.recompare_verdict or self.verdict

    @classmethod
    def from_row(cls, row: RowMapping) -> ValidationRecord:
        values = dict(row)
        values["range_start"] = bytes.fromhex(values["range_start"])
        values["range_end"] = bytes.fromhex(values["range_end"])
        values["verdict"] = Verdict(values["verdict"])
        if values["recompare_verdict"] is not None:
            values["recompare_verdict"] = Verdict(values["recompare_verdict"])
        values["differences"] = tuple(_load_json(values["differences"], "validations", row,
                                                 "differences") or ())
        return cls(**values)


@dataclass(frozen=True)
class KeyRangeRecord:
    """A planned key range of a migrated (source) table and its copy, once done."""

    id: int
    migration_id: int
    table_name: str
    range_start: bytes
    range_end: bytes
    planned_cells: int
    planned_at: int
    copy_step_id: int | None
    copied_rows: int | None
    copied_cells: int | None
    copied_at: int | None

    @classmethod
    def from_row(cls, row: RowMapping) -> KeyRangeRecord:
        values = dict(row)
        values["range_start"] = bytes.fromhex(values["range_start"])
        values["range_end"] = bytes.fromhex(values["range_end"])
        return cls(**values)


@dataclass(frozen=True)
class RepairRecord:
    """A key range rewritten on the target from the source, and the verdict after it."""

    id: int
    migration_id: int
    step_id: int | None
    table_name: str
    range_start: bytes
    range_end: bytes
    reason: str  # "mismatch" or "bulk_load"
    puts: int
    deletes: int
    verdict: Verdict | None
    detail: dict[str, Any]
    repaired_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> RepairRecord:
        values = dict(row)
        values["range_start"] = bytes.fromhex(values["range_start"])
        values["range_end"] = bytes.fromhex(values["range_end"])
        values["verdict"] = Verdict(values["verdict"]) if values["verdict"] else None
        values["detail"] = dict(_load_json(values["detail"], "repairs", row, "detail"))
        return cls(**values)


@dataclass(frozen=True)
class GapRecord:
    """Edits lost for the target: a WAL file that vanished before it was replayed
    (``path`` set), or a stretch of a server's WAL chain no listing ever saw.

    ``first_time``/``last_time`` bound the write times of the lost edits.
    """

    id: int
    migration_id: int
    kind: GapKind
    wal_file_id: int | None
    server: str
    wal_group: str
    first_time: int | None
    last_time: int | None
    detail: str | None
    detected_at: int
    remedy: str
    resolved_at: int | None
    path: str | None

    @classmethod
    def from_row(cls, row: RowMapping) -> GapRecord:
        values = dict(row)
        values["kind"] = GapKind(values["kind"])
        return cls(**values)


@dataclass(frozen=True)
class LimitChange:
    """A ``[limits]`` key set while steps run (``hbase-migrate limits set``)."""

    id: int
    migration_id: int
    name: str
    value: Any  # a number or a bool
    set_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> LimitChange:
        values = dict(row)
        try:
            values["value"] = json.loads(values["value"])
        except ValueError as exc:
            raise LedgerError(f"ledger table limit_changes, row id {row['id']}, column value: "
                              f"not JSON ({exc}): {values['value'][:80]!r}") from None
        return cls(**values)


@dataclass(frozen=True)
class SnapshotFileRecord:
    """A file of an exported snapshot: ``path`` under the target root, ``status`` ``copied``
    or ``kept``, ``checksum`` how both sides compared (``method``, ``source``, ``target``)."""

    id: int
    migration_id: int
    snapshot: str
    path: str
    source_path: str
    size: int
    status: str
    checksum: dict[str, Any]
    copies: int
    step_id: int | None
    recorded_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> SnapshotFileRecord:
        values = dict(row)
        values["checksum"] = _load_json(values["checksum"], "snapshot_files", row, "checksum")
        return cls(**values)


@dataclass(frozen=True)
class ChecksumRecord:
    """One range's checksums on both sides, recorded by validation step ``step_id`` as the
    range finished (``resumed_from``: carried over from that stopped step's row)."""

    id: int
    migration_id: int
    step_id: int
    plan_key: str
    plan: dict[str, Any]
    table_name: str
    range_start: bytes
    range_end: bytes
    source_rows: int
    target_rows: int
    source_cells: int
    target_cells: int
    source_digest: str
    target_digest: str
    source_read: str
    target_read: str
    resumed_from: int | None
    recorded_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> ChecksumRecord:
        return cls(**{**dict(row), "plan": _load_json(row["plan"], "range_checksums", row,
                                                      "plan"),
                      "range_start": bytes.fromhex(row["range_start"]),
                      "range_end": bytes.fromhex(row["range_end"])})


@dataclass(frozen=True)
class AnchorRecord:
    """The WAL file a live source server was writing when the watermark was fixed."""

    id: int
    migration_id: int
    server: str
    wal_group: str
    path: str
    name_time: int | None
    watermark: int
    recorded_at: int

    @classmethod
    def from_row(cls, row: RowMapping) -> AnchorRecord:
        return cls(**dict(row))


@dataclass(frozen=True)
class ChainHead:
    """What listings proved of one WAL chain through its newest live file, named at
    ``head_time`` (``sql/011_wal_heads.sql``): every file of the chain older than it that
    appeared at or after ``older_seen_from`` was listed, and no file newer than it had
    appeared by ``newer_after``."""

    head_time: int
    older_seen_from: int
    newer_after: int
