"""The audit ledger's API: migrations, steps, WAL files, validations and gaps.

One transaction per fact, so nothing is half-written. A WAL file's status only moves forward
and its acknowledged offset never decreases; both rules are enforced in the ``WHERE`` clause
of the writing statement itself, so concurrent writers (processes, Spark tasks) cannot race
past them. Times are milliseconds since the epoch; every writer takes ``now`` for tests.

    with Ledger.open("sqlite:///state/orders/ledger.db") as ledger:
        m = ledger.ensure_migration("orders", "source-id", "target-id", spec.tables)
        with ledger.step(m.id, "replay", dag_id="replay", run_id=run_id) as metrics:
            ledger.record_wal_seen(m.id, "source", server, path, size, name_time)
            ...
            metrics["files"] = 3
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

from sqlalchemy import Connection, Engine, and_, case, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite

from hbase_migrate.audit import records as t
from hbase_migrate.audit.engine import open_engine, redact
from hbase_migrate.audit.errors import (
    LedgerError,
    LedgerMissingError,
    MigrationMismatchError,
    MigrationStateError,
    WalStateError,
)
from hbase_migrate.audit.records import (
    PENDING,
    AnchorRecord,
    GapKind,
    GapRecord,
    KeyRangeRecord,
    MigrationRecord,
    MigrationState,
    RepairRecord,
    StepRecord,
    StepStatus,
    ValidationRecord,
    Verdict,
    WalFileRecord,
    WalStatus,
    dump_json,
)
from hbase_migrate.audit.schema import check_not_newer, checked_version, upgrade

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec

log = logging.getLogger(__name__)

DEFAULT_GAP_REMEDY = (
    "re-copy the affected key ranges from the source: validate the migrated tables, then "
    "repair the ranges that differ"
)
# The statuses each change may start from (the forward-only rule).
_REPLAYABLE = (*PENDING, WalStatus.SKIPPED)
_FAILABLE = PENDING
_SKIPPABLE = (WalStatus.SEEN, WalStatus.SKIPPED)


def now_ms() -> int:
    return int(time.time() * 1000)


class TableLike(Protocol):
    """What the ledger needs of a table of a migration spec."""

    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def families(self) -> tuple[str, ...]: ...


class Ledger:
    """An open ledger. Build it with :meth:`open`; close it (or use ``with``) when done."""

    def __init__(self, engine: Engine, schema_version: int) -> None:
        self._engine = engine
        self.schema_version = schema_version

    @classmethod
    def open(cls, url: str, *, upgrade_schema: bool = True) -> Ledger:
        """Connect to ``url`` and bring its schema up to date: what writing commands do (an
        empty database becomes a ledger). ``upgrade_schema=False`` is for reading commands:
        nothing is created or changed, and a missing, empty or foreign database raises. A
        schema newer than this code knows raises before anything is written."""
        engine = open_engine(url, create=upgrade_schema)
        try:
            if upgrade_schema:
                _, version = upgrade(engine)
            else:
                version = checked_version(engine)
                if version == 0:
                    raise LedgerMissingError(
                        f"no ledger at {redact(engine.url)} yet (an empty database); a "
                        "replay or `hbase-migrate ledger upgrade` creates it")
                check_not_newer(version, engine)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, version)

    @property
    def url(self) -> str:
        """The ledger URL with its password masked."""
        return redact(self._engine.url)

    def close(self) -> None:
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _insert(self, table: Any) -> Any:
        dialect = postgresql if self._engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(table)

    # -- migrations -------------------------------------------------------------------------

    def ensure_migration(
        self, name: str, source: str, target: str, tables: Sequence[TableLike], *,
        now: int | None = None,
    ) -> MigrationRecord:
        """The migration ``name``, created when new. A ledger that already holds ``name``
        with another source, target or table list raises :class:`MigrationMismatchError`."""
        now = now_ms() if now is None else now
        tables_json = dump_json(sorted(
            ({"source": x.source, "target": x.target, "families": sorted(x.families)}
             for x in tables), key=lambda d: (d["source"], d["target"])))
        with self._engine.begin() as conn:
            conn.execute(self._insert(t.migrations).values(
                name=name, source=source, target=target, tables=tables_json, state="created",
                created_at=now, updated_at=now).on_conflict_do_nothing(index_elements=["name"]))
            row = conn.execute(select(t.migrations).where(t.migrations.c.name == name)).one()
        record = MigrationRecord.from_row(row._mapping)
        differs = [f"{key} {row._mapping[key]!r} (this definition: {mine!r})"
                   for key, mine in (("source", source), ("target", target),
                                     ("tables", tables_json))
                   if row._mapping[key] != mine]
        if differs:
            raise MigrationMismatchError(
                f"ledger {self.url} already holds migration {name!r} with a different "
                f"definition: {'; '.join(differs)}; use another migration name or ledger"
            )
        return record

    def ensure_spec(self, spec: MigrationSpec, *, now: int | None = None) -> MigrationRecord:
        """:meth:`ensure_migration` for a loaded config, its clusters named by identity."""
        return self.ensure_migration(spec.name, spec.source.identity, spec.target.identity,
                                     spec.tables, now=now)

    def migration(self, name: str) -> MigrationRecord | None:
        with self._engine.begin() as conn:
            row = conn.execute(select(t.migrations).where(t.migrations.c.name == name)).first()
        return MigrationRecord.from_row(row._mapping) if row else None

    def migrations(self) -> list[MigrationRecord]:
        with self._engine.begin() as conn:
            rows = conn.execute(select(t.migrations).order_by(t.migrations.c.name)).all()
        return [MigrationRecord.from_row(r._mapping) for r in rows]

    def update_migration(
        self, migration_id: int, *, state: MigrationState | str | None = None,
        watermark: int | None = None, now: int | None = None,
    ) -> None:
        """Set the migration's lifecycle ``state`` (forward only: a move back raises
        :class:`MigrationStateError`) and/or its watermark ``T0``."""
        values: dict[str, Any] = {"updated_at": now_ms() if now is None else now}
        m = t.migrations
        guard = m.c.id == migration_id
        if state is not None:
            try:
                new = MigrationState(state)
            except ValueError:
                raise MigrationStateError(
                    f"unknown migration state {state!r}; one of "
                    f"{', '.join(s.value for s in MigrationState)}") from None
            values["state"] = new.value
            guard = and_(guard, m.c.state.in_(
                [s.value for s in MigrationState if s.may_become(new)]))
        if watermark is not None:
            values["watermark"] = watermark
        with self._engine.begin() as conn:
            done = conn.execute(update(m).where(guard).values(**values))
            if done.rowcount == 1:
                return
            row = conn.execute(select(m.c.name, m.c.state).where(m.c.id == migration_id)).first()
        if row is None:
            raise LedgerError(f"ledger {self.url}: no migration with id {migration_id}")
        raise MigrationStateError(f"migration {row.name!r} is {row.state}: it cannot move back "
                                  f"to {state} (states only move forward; cut_over is final)")

    # -- steps ------------------------------------------------------------------------------

    def start_step(
        self, migration_id: int, kind: str, *, dag_id: str | None = None,
        run_id: str | None = None, task_id: str | None = None, now: int | None = None,
    ) -> int:
        """Record a running step; returns its id for :meth:`finish_step`."""
        with self._engine.begin() as conn:
            return int(conn.execute(t.steps.insert().values(
                migration_id=migration_id, kind=kind, dag_id=dag_id, run_id=run_id,
                task_id=task_id, started_at=now_ms() if now is None else now,
                status=StepStatus.RUNNING.value).returning(t.steps.c.id)).scalar_one())

    def finish_step(
        self, step_id: int, status: StepStatus | str, metrics: Mapping[str, Any] | None = None,
        error: str | None = None, *, now: int | None = None,
    ) -> None:
        """Close a running step as ``succeeded`` or ``failed``; a step ends once."""
        status = StepStatus(status)
        if status is StepStatus.RUNNING:
            raise ValueError("finish_step: status must be succeeded or failed")
        with self._engine.begin() as conn:
            done = conn.execute(
                update(t.steps).where(and_(t.steps.c.id == step_id,
                                           t.steps.c.status == StepStatus.RUNNING.value))
                .values(status=status.value, ended_at=now_ms() if now is None else now,
                        metrics=dump_json(dict(metrics or {})), error=error))
        if done.rowcount != 1:
            raise LedgerError(f"ledger {self.url}: step {step_id} is unknown or already ended")

    @contextmanager
    def step(
        self, migration_id: int, kind: str, *, dag_id: str | None = None,
        run_id: str | None = None, task_id: str | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Run a block as a step. It yields a metrics dict to fill; an exception marks the step
        failed with its text and propagates."""
        step_id = self.start_step(migration_id, kind, dag_id=dag_id, run_id=run_id,
                                  task_id=task_id)
        metrics: dict[str, Any] = {}
        try:
            yield metrics
        except BaseException as exc:
            self.finish_step(step_id, StepStatus.FAILED, metrics, f"{type(exc).__name__}: {exc}")
            raise
        self.finish_step(step_id, StepStatus.SUCCEEDED, metrics)

    def steps(self, migration_id: int, kind: str | None = None) -> list[StepRecord]:
        query = select(t.steps).where(t.steps.c.migration_id == migration_id)
        if kind is not None:
            query = query.where(t.steps.c.kind == kind)
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(t.steps.c.id)).all()
        return [StepRecord.from_row(r._mapping) for r in rows]

    # -- WAL files --------------------------------------------------------------------------

    def record_wal_seen(
        self, migration_id: int, cluster: str, server: str, path: str, size: int | None,
        name_time: int | None, *, now: int | None = None,
    ) -> int:
        """Record a listing of a WAL file (insert, or update size and ``last_seen``)."""
        now = now_ms() if now is None else now
        w = t.wal_files
        stmt = self._insert(w).values(
            migration_id=migration_id, cluster=cluster, server=server, path=path, size=size,
            name_time=name_time, first_seen=now, last_seen=now, status=WalStatus.SEEN.value,
            updated_at=now)
        newer = stmt.excluded.last_seen >= w.c.last_seen
        stmt = stmt.on_conflict_do_update(
            index_elements=["migration_id", "cluster", "path"],
            set_={"size": case((newer, stmt.excluded.size), else_=w.c.size),
                  "last_seen": case((newer, stmt.excluded.last_seen), else_=w.c.last_seen),
                  "updated_at": stmt.excluded.updated_at},
        ).returning(w.c.id)
        with self._engine.begin() as conn:
            return int(conn.execute(stmt).scalar_one())

    def record_wal_moved(
        self, migration_id: int, cluster: str, old_path: str, new_path: str, *,
        now: int | None = None,
    ) -> None:
        """A WAL file moved (``WALs/`` to ``oldWALs/``): its row, status and offset follow it.
        A row already listed at ``new_path`` with no progress is merged into it."""
        now = now_ms() if now is None else now
        w = t.wal_files
        with self._engine.begin() as conn:
            there = self._find(conn, migration_id, cluster, new_path)
            if there is not None and self._find(conn, migration_id, cluster, old_path) is None:
                return  # moved already: a re-run
            moved = self._wal_row(conn, migration_id, cluster, old_path)
            if there is not None:
                if there.status is not WalStatus.SEEN or there.offset_reached:
                    raise WalStateError(
                        f"WAL file {new_path} ({cluster}, migration #{migration_id}) already "
                        f"has its own progress ({there.status}); cannot merge {old_path} into it")
                conn.execute(w.delete().where(w.c.id == there.id))
            conn.execute(update(w).where(w.c.id == moved.id).values(
                path=new_path, last_seen=now, updated_at=now))

    def mark_wal_replaying(
        self, migration_id: int, cluster: str, path: str, *, now: int | None = None
    ) -> None:
        """The replay of a file starts (or restarts after a failure)."""
        self._transition(migration_id, cluster, path, "start replaying", _REPLAYABLE,
                         {"status": WalStatus.REPLAYING.value}, now)

    def record_wal_progress(
        self, migration_id: int, cluster: str, path: str, *, offset_reached: int,
        entries: int, cells_by_type: Mapping[str, int], markers: Mapping[str, int],
        approximated_deletes: int, last_write_time: int | None, closed: bool,
        now: int | None = None,
    ) -> None:
        """Record progress the target has acknowledged, up to byte ``offset_reached``.

        The counters are totals for the file up to that offset. ``closed`` means the file is
        finished (status ``replayed``, final). A lower offset than recorded, or any progress on
        a replayed file other than repeating its final record, raises :class:`WalStateError`.
        """
        status = WalStatus.REPLAYED if closed else WalStatus.REPLAYING
        values = {"status": status.value, "offset_reached": offset_reached, "entries": entries,
                  "cells_by_type": dump_json(dict(cells_by_type)),
                  "markers": dump_json(dict(markers)),
                  "approximated_deletes": approximated_deletes,
                  "last_write_time": last_write_time, "error": None}
        self._transition(migration_id, cluster, path, f"record progress to offset "
                         f"{offset_reached}", _REPLAYABLE, values, now,
                         offset=offset_reached, closed=closed)

    def mark_wal_failed(
        self, migration_id: int, cluster: str, path: str, error: str, *, now: int | None = None
    ) -> None:
        """The replay of a file failed; its offset stays, a retry starts from it."""
        self._transition(migration_id, cluster, path, "mark failed", _FAILABLE,
                         {"status": WalStatus.FAILED.value, "error": error}, now)

    def mark_wal_skipped(
        self, migration_id: int, cluster: str, path: str, reason: str, *, now: int | None = None,
        unread: bool = False,
    ) -> None:
        """The selection excluded a file (kept in ``error`` as the reason). ``unread``: a file
        nothing was acknowledged of yet, whatever its pending status, found to hold nothing
        to replay."""
        allowed = (*PENDING, WalStatus.SKIPPED) if unread else _SKIPPABLE
        self._transition(migration_id, cluster, path, "mark skipped", allowed,
                         {"status": WalStatus.SKIPPED.value, "error": reason}, now,
                         offset=0 if unread else None)

    def mark_wal_vanished(
        self, migration_id: int, cluster: str, path: str, *, now: int | None = None,
        first_time: int | None = None, remedy: str = DEFAULT_GAP_REMEDY,
    ) -> int | None:
        """A listed file is gone. Before it was replayed, that is a gap: the file becomes
        ``gap`` and a gaps row is written (returns its id); otherwise only ``vanished_at``.

        The gap's time span runs from ``first_time`` (the caller's lower bound of the lost
        edits' write times; default: the newest replayed write time, else the name time) to
        ``now``, an upper bound.
        """
        now = now_ms() if now is None else now
        w = t.wal_files
        key = self._wal_key(migration_id, cluster, path)
        with self._engine.begin() as conn:
            hit = conn.execute(
                update(w).where(and_(key, w.c.status.in_([s.value for s in PENDING])))
                .values(status=WalStatus.GAP.value, vanished_at=now, updated_at=now)
                .returning(w.c.id, w.c.server, w.c.name_time, w.c.last_write_time)).first()
            if hit is not None:
                first = first_time if first_time is not None else (
                    hit.last_write_time or hit.name_time)
                return int(conn.execute(t.gaps.insert().values(
                    migration_id=migration_id, kind=GapKind.VANISHED.value, wal_file_id=hit.id,
                    server=hit.server, first_time=first, last_time=now, detected_at=now,
                    remedy=remedy).returning(t.gaps.c.id)).scalar_one())
            row = self._wal_row(conn, migration_id, cluster, path)
            if row.status is WalStatus.GAP:
                gap_id = conn.execute(select(t.gaps.c.id)
                                      .where(t.gaps.c.wal_file_id == row.id)).scalar_one()
                return int(gap_id)
            conn.execute(update(w).where(and_(w.c.id == row.id, w.c.vanished_at.is_(None)))
                         .values(vanished_at=now, updated_at=now))
            return None

    def record_missing_gap(
        self, migration_id: int, server: str, wal_group: str, first_time: int,
        last_time: int, detail: str, *, now: int | None = None,
        remedy: str = DEFAULT_GAP_REMEDY,
    ) -> int | None:
        """A stretch of a server's WAL chain that no listing saw: edits from ``first_time``
        to ``last_time`` are lost. Recorded once per (server, group, first_time); returns the
        new gap's id, None when it was known."""
        now = now_ms() if now is None else now
        stmt = self._insert(t.gaps).values(
            migration_id=migration_id, kind=GapKind.MISSING.value, wal_file_id=None,
            server=server, wal_group=wal_group, first_time=first_time, last_time=last_time,
            detail=detail, detected_at=now, remedy=remedy,
        ).on_conflict_do_nothing(
            index_elements=["migration_id", "server", "wal_group", "first_time"],
            index_where=t.gaps.c.kind == GapKind.MISSING.value,
        ).returning(t.gaps.c.id)
        with self._engine.begin() as conn:
            new = conn.execute(stmt).scalar()
        return None if new is None else int(new)

    # -- WAL anchors ------------------------------------------------------------------------

    def record_anchor(
        self, migration_id: int, server: str, wal_group: str, path: str,
        name_time: int | None, watermark: int, *, now: int | None = None,
    ) -> None:
        """The WAL file ``server`` was writing when the watermark was fixed ('' for none);
        a later watermark replaces the anchor."""
        now = now_ms() if now is None else now
        stmt = self._insert(t.wal_anchors).values(
            migration_id=migration_id, server=server, wal_group=wal_group, path=path,
            name_time=name_time, watermark=watermark, recorded_at=now)
        stmt = stmt.on_conflict_do_update(
            index_elements=["migration_id", "server", "wal_group"],
            set_={"path": stmt.excluded.path, "name_time": stmt.excluded.name_time,
                  "watermark": stmt.excluded.watermark,
                  "recorded_at": stmt.excluded.recorded_at})
        with self._engine.begin() as conn:
            conn.execute(stmt)

    def anchors(self, migration_id: int) -> list[AnchorRecord]:
        a = t.wal_anchors
        with self._engine.begin() as conn:
            rows = conn.execute(select(a).where(a.c.migration_id == migration_id)
                                .order_by(a.c.server, a.c.wal_group)).all()
        return [AnchorRecord.from_row(r._mapping) for r in rows]

    def wal_file(self, migration_id: int, cluster: str, path: str) -> WalFileRecord | None:
        with self._engine.begin() as conn:
            return self._find(conn, migration_id, cluster, path)

    def wal_files(
        self, migration_id: int, cluster: str | None = None,
        statuses: Sequence[WalStatus] | None = None,
    ) -> list[WalFileRecord]:
        w = t.wal_files
        query = select(w).where(w.c.migration_id == migration_id)
        if cluster is not None:
            query = query.where(w.c.cluster == cluster)
        if statuses is not None:
            query = query.where(w.c.status.in_([WalStatus(s).value for s in statuses]))
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(w.c.server, w.c.name_time, w.c.path)).all()
        return [WalFileRecord.from_row(r._mapping) for r in rows]

    def _wal_key(self, migration_id: int, cluster: str, path: str) -> Any:
        w = t.wal_files
        return and_(w.c.migration_id == migration_id, w.c.cluster == cluster, w.c.path == path)

    def _find(self, conn: Connection, migration_id: int, cluster: str,
              path: str) -> WalFileRecord | None:
        row = conn.execute(select(t.wal_files).where(
            self._wal_key(migration_id, cluster, path))).first()
        return WalFileRecord.from_row(row._mapping) if row else None

    def _wal_row(self, conn: Connection, migration_id: int, cluster: str,
                 path: str) -> WalFileRecord:
        row = self._find(conn, migration_id, cluster, path)
        if row is None:
            raise WalStateError(f"WAL file {path} ({cluster}, migration #{migration_id}) is not "
                                "in the ledger; record it as seen first")
        return row

    def _transition(
        self, migration_id: int, cluster: str, path: str, action: str,
        allowed: Sequence[WalStatus], values: dict[str, Any], now: int | None, *,
        offset: int | None = None, closed: bool = False,
    ) -> None:
        """One guarded UPDATE; when its guard refuses, explain why (or accept a repeat)."""
        w = t.wal_files
        guard = and_(self._wal_key(migration_id, cluster, path),
                     w.c.status.in_([s.value for s in allowed]))
        if offset is not None:
            guard = and_(guard, w.c.offset_reached <= offset)
        with self._engine.begin() as conn:
            done = conn.execute(update(w).where(guard).values(
                updated_at=now_ms() if now is None else now, **values))
            if done.rowcount == 1:
                return
            row = self._wal_row(conn, migration_id, cluster, path)
        where = f"WAL file {path} ({cluster}, migration #{migration_id})"
        if row.status is WalStatus.REPLAYED and closed and offset == row.offset_reached:
            return  # the same final record again: a re-run task, nothing changes
        if row.status in (WalStatus.REPLAYED, WalStatus.GAP):
            raise WalStateError(f"{where}: cannot {action}: its status {row.status} is final")
        if offset is not None and offset < row.offset_reached:
            raise WalStateError(f"{where}: cannot {action}: the acknowledged offset is already "
                                f"{row.offset_reached} and offsets never decrease")
        raise WalStateError(f"{where}: cannot {action} from status {row.status}")

    # -- gaps -------------------------------------------------------------------------------

    def gaps(self, migration_id: int, *, include_resolved: bool = False,
             stream: str | None = None) -> list[GapRecord]:
        """Open gaps (all with ``include_resolved``). With ``stream``, a vanished file's gap
        only when the file is that stream's (``wal_files.cluster``); stretches no listing saw
        (``missing``) concern every stream."""
        g, w = t.gaps, t.wal_files
        query = (select(g, w.c.path).outerjoin(w, w.c.id == g.c.wal_file_id)
                 .where(g.c.migration_id == migration_id))
        if stream is not None:
            query = query.where(or_(g.c.wal_file_id.is_(None), w.c.cluster == stream))
        if not include_resolved:
            query = query.where(g.c.resolved_at.is_(None))
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(g.c.server, g.c.first_time, g.c.id)).all()
        return [GapRecord.from_row(r._mapping) for r in rows]

    def resolve_gap(self, gap_id: int, *, now: int | None = None) -> None:
        """The gap's remedy was applied (its key ranges re-copied and validated)."""
        with self._engine.begin() as conn:
            done = conn.execute(update(t.gaps).where(t.gaps.c.id == gap_id)
                                .values(resolved_at=now_ms() if now is None else now))
        if done.rowcount != 1:
            raise LedgerError(f"ledger {self.url}: no gap with id {gap_id}")

    # -- validations ------------------------------------------------------------------------

    def record_validation(
        self, migration_id: int, step_id: int | None, table_name: str, range_start: bytes,
        range_end: bytes, *, source_rows: int | None, target_rows: int | None,
        source_cells: int | None, target_cells: int | None, source_digest: str | None,
        target_digest: str | None, verdict: Verdict | str, now: int | None = None,
        gx_result: str | None = None, data_docs: str | None = None,
        differences: Sequence[str] = (),
    ) -> int:
        """Record one compared key range ``[range_start, range_end)``; returns its id.
        ``gx_result`` and ``data_docs`` locate the Great Expectations artifacts of the run
        that judged it, ``differences`` lists its first differing cells."""
        with self._engine.begin() as conn:
            return int(conn.execute(t.validations.insert().values(
                migration_id=migration_id, step_id=step_id, table_name=table_name,
                range_start=range_start.hex(), range_end=range_end.hex(),
                source_rows=source_rows, target_rows=target_rows, source_cells=source_cells,
                target_cells=target_cells, source_digest=source_digest,
                target_digest=target_digest, verdict=Verdict(verdict).value,
                validated_at=now_ms() if now is None else now, gx_result=gx_result,
                data_docs=data_docs, differences=dump_json(list(differences)),
            ).returning(t.validations.c.id)).scalar_one())

    def record_recompare(
        self, validation_id: int, verdict: Verdict | str, *, now: int | None = None
    ) -> None:
        """The verdict of comparing a mismatching range again after replay caught up."""
        with self._engine.begin() as conn:
            done = conn.execute(update(t.validations).where(t.validations.c.id == validation_id)
                                .values(recompare_verdict=Verdict(verdict).value,
                                        recompared_at=now_ms() if now is None else now))
        if done.rowcount != 1:
            raise LedgerError(f"ledger {self.url}: no validation with id {validation_id}")

    def validations(self, migration_id: int, step_id: int | None = None) -> list[ValidationRecord]:
        v = t.validations
        query = select(v).where(v.c.migration_id == migration_id)
        if step_id is not None:
            query = query.where(v.c.step_id == step_id)
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(v.c.id)).all()
        return [ValidationRecord.from_row(r._mapping) for r in rows]

    def last_validations(self, migration_id: int) -> list[ValidationRecord]:
        """The ranges of the newest validation run: the newest step that recorded any
        (or, for ranges recorded without a step, the newest ``validated_at``)."""
        v = t.validations
        with self._engine.begin() as conn:
            newest = conn.execute(
                select(v.c.step_id, v.c.validated_at).where(v.c.migration_id == migration_id)
                .order_by(v.c.validated_at.desc(), v.c.id.desc()).limit(1)).first()
        if newest is None:
            return []
        if newest.step_id is not None:
            return self.validations(migration_id, newest.step_id)
        return [r for r in self.validations(migration_id)
                if r.step_id is None and r.validated_at == newest.validated_at]

    # -- key ranges and repairs -------------------------------------------------------------

    def plan_key_ranges(self, migration_id: int, table_name: str,
                        ranges: Sequence[tuple[bytes, bytes, int]], *,
                        now: int | None = None) -> list[KeyRangeRecord]:
        """Record the planned ranges ``(start, stop, cells)`` of a table unless a plan is
        recorded already (the first plan stays: reruns meet the same ranges); returns the
        table's ranges."""
        now = now_ms() if now is None else now
        with self._engine.begin() as conn:
            exists = conn.execute(select(t.key_ranges.c.id).where(and_(
                t.key_ranges.c.migration_id == migration_id,
                t.key_ranges.c.table_name == table_name)).limit(1)).first()
            if exists is None and ranges:
                conn.execute(self._insert(t.key_ranges).values([
                    {"migration_id": migration_id, "table_name": table_name,
                     "range_start": start.hex(), "range_end": stop.hex(),
                     "planned_cells": cells, "planned_at": now}
                    for start, stop, cells in ranges]).on_conflict_do_nothing())
        return self.key_ranges(migration_id, table_name)

    def key_ranges(self, migration_id: int, table_name: str | None = None
                   ) -> list[KeyRangeRecord]:
        """The planned ranges of a migration (of one source table), in key order."""
        k = t.key_ranges
        query = select(k).where(k.c.migration_id == migration_id)
        if table_name is not None:
            query = query.where(k.c.table_name == table_name)
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(k.c.table_name, k.c.range_start)).all()
        return [KeyRangeRecord.from_row(r._mapping) for r in rows]

    def record_range_copied(self, migration_id: int, table_name: str, range_start: bytes,
                            step_id: int | None, rows: int, cells: int, *,
                            now: int | None = None) -> None:
        """A planned range was copied in full (safe to call again: the newest copy counts)."""
        k = t.key_ranges
        with self._engine.begin() as conn:
            done = conn.execute(update(k).where(and_(
                k.c.migration_id == migration_id, k.c.table_name == table_name,
                k.c.range_start == range_start.hex())).values(
                    copy_step_id=step_id, copied_rows=rows, copied_cells=cells,
                    copied_at=now_ms() if now is None else now))
        if done.rowcount != 1:
            raise LedgerError(f"ledger {self.url}: no planned key range of table {table_name} "
                              f"starting at {range_start.hex()!r} (hex)")

    def record_repair(self, migration_id: int, step_id: int | None, table_name: str,
                      range_start: bytes, range_end: bytes, *, reason: str, puts: int,
                      deletes: int, verdict: Verdict | str | None,
                      detail: Mapping[str, Any] | None = None,
                      now: int | None = None) -> int:
        """One range rewritten on the target from the source; returns its id."""
        with self._engine.begin() as conn:
            return int(conn.execute(t.repairs.insert().values(
                migration_id=migration_id, step_id=step_id, table_name=table_name,
                range_start=range_start.hex(), range_end=range_end.hex(), reason=reason,
                puts=puts, deletes=deletes,
                verdict=Verdict(verdict).value if verdict is not None else None,
                detail=dump_json(dict(detail or {})),
                repaired_at=now_ms() if now is None else now,
            ).returning(t.repairs.c.id)).scalar_one())

    def repairs(self, migration_id: int) -> list[RepairRecord]:
        r = t.repairs
        with self._engine.begin() as conn:
            rows = conn.execute(select(r).where(r.c.migration_id == migration_id)
                                .order_by(r.c.id)).all()
        return [RepairRecord.from_row(x._mapping) for x in rows]

    # -- leases ------------------------------------------------------------------------------

    def take_lease(self, name: str, holder: str, ttl_ms: int, *, steal_from: str | None = None,
                   now: int | None = None) -> tuple[str, int]:
        """Take (or renew) the lease ``name`` for ``holder`` when it is free, expired, already
        ``holder``'s or ``steal_from``'s; returns the lease's (holder, expires_at) after the
        attempt: ``holder`` got it when the first is ``holder``. One guarded statement."""
        now = now_ms() if now is None else now
        le = t.leases
        stmt = self._insert(le).values(name=name, holder=holder, acquired_at=now,
                                       expires_at=now + ttl_ms)
        takeable = (le.c.expires_at < now) | (le.c.holder == holder)
        if steal_from is not None:
            takeable = takeable | (le.c.holder == steal_from)
        stmt = stmt.on_conflict_do_update(
            index_elements=["name"], where=takeable,
            set_={"holder": stmt.excluded.holder, "acquired_at": stmt.excluded.acquired_at,
                  "expires_at": stmt.excluded.expires_at})
        with self._engine.begin() as conn:
            conn.execute(stmt)
            row = conn.execute(select(le.c.holder, le.c.expires_at)
                               .where(le.c.name == name)).one()
        return str(row.holder), int(row.expires_at)

    def release_lease(self, name: str, holder: str) -> None:
        """Give the lease up (nothing happens when ``holder`` no longer has it)."""
        with self._engine.begin() as conn:
            conn.execute(t.leases.delete().where(
                and_(t.leases.c.name == name, t.leases.c.holder == holder)))

    def counts(self, migration_id: int) -> dict[str, int]:
        """WAL files of a migration by status."""
        w = t.wal_files
        with self._engine.begin() as conn:
            rows = conn.execute(select(w.c.status, func.count()).where(
                w.c.migration_id == migration_id).group_by(w.c.status)).all()
        return {str(status): int(n) for status, n in rows}
