"""The ledger's migrations (their state, forward only) and steps (who ran what, when, with
what result)."""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy import and_, func, select, update
from sqlalchemy.exc import IntegrityError

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.errors import LedgerError, MigrationMismatchError, MigrationStateError
from hbase_migrate.audit.liveness import ABANDONED, Heartbeat, abandoned
from hbase_migrate.audit.records import (
    MigrationRecord,
    MigrationState,
    Provenance,
    StepRecord,
    StepStatus,
    WalStatus,
    dump_json,
)
from hbase_migrate.audit.step_faults import StepEnd

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec

log = logging.getLogger(__name__)
# Steps whose success means cells reached the target tables (a copy at T0).
_COPY_STEPS = ("snapshot", "snapshot-part")


class TableLike(Protocol):
    """What the ledger needs of a table of a migration spec."""

    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def families(self) -> tuple[str, ...]: ...


@dataclass
class OpenStep:
    """A step being recorded: its id, the metrics it will be closed with, and its outcome."""

    id: int
    metrics: dict[str, Any] = field(default_factory=dict)
    status: StepStatus = StepStatus.SUCCEEDED
    error: str | None = None

    def fail(self, error: str | None = None) -> None:
        self.status, self.error = StepStatus.FAILED, error


class MigrationBook(LedgerBook):
    """Migrations and their steps."""

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
        """The migration of a loaded spec, created with its definition when new (its
        clusters' endpoints resolved: :mod:`~hbase_migrate.audit.definitions`). A spec whose
        identity (source, target, tables) differs from the recorded one corrects it in place
        while nothing is copied (the old definition stays in the history, a warning says
        what changed) and is refused after (:class:`MigrationMismatchError` naming what
        differs and how to start over); other settings are recorded as the newest."""
        from hbase_migrate.audit.definitions import definition_of

        definition = definition_of(spec)
        legacy = {"source": spec.source.identity, "target": spec.target.identity}
        for _ in range(5):  # another process may record the same change at once
            try:
                return self._ensure_definition(spec.name, definition, legacy,
                                               now_ms() if now is None else now)
            except IntegrityError:
                continue
        raise LedgerError(f"ledger {self.url}: migration {spec.name!r}: its definition kept "
                          "changing under concurrent writers; run the step again")

    def _ensure_definition(self, name: str, definition: dict[str, Any],
                           legacy: Mapping[str, str], now: int) -> MigrationRecord:
        from hbase_migrate.audit import definitions as d

        mine = d.identity(definition)
        m, h = t.migrations, t.migration_definitions
        with self._engine.begin() as conn:
            created = conn.execute(self._insert(m).values(
                name=name, source=mine["source"], target=mine["target"], tables=mine["tables"],
                state="created", created_at=now, updated_at=now,
            ).on_conflict_do_nothing(index_elements=["name"]).returning(m.c.id)
            ).first() is not None
            row = conn.execute(select(m).where(m.c.name == name)).one()._mapping
            latest = conn.execute(select(h).where(h.c.migration_id == row["id"])
                                  .order_by(h.c.seq.desc()).limit(1)).first()
        if latest is None:  # new, or recorded before definitions were kept
            old: dict[str, Any] | None = None
            recorded = {k: str(row[k]) for k in d.IDENTITY_KEYS}
            for side in ("source", "target"):  # then a cluster_json was named by its path
                if recorded[side] == legacy[side]:
                    recorded[side] = mine[side]
        else:
            old = json.loads(latest.definition)
            recorded = d.identity(old)
        changed = d.identity_changes(recorded, mine)
        settings = d.setting_changes(old, definition) if old is not None else []
        if latest is not None and not changed and not settings:
            return MigrationRecord.from_row(row)
        if changed:
            copied = self.copied(int(row["id"]))
            if copied:
                raise MigrationMismatchError(
                    f"ledger {self.url}: migration {name!r} has copied data ({copied}) under "
                    f"another definition: {'; '.join(changed)}; a migration keeps its "
                    "definition once anything is copied: to start over with this one, give "
                    "it another name ([migration] name in the config, or the migration "
                    "Param) and run `hbase-migrate prepare` with it (this leaves "
                    f"{name!r} and its target tables as they are; `hbase-migrate config "
                    f"show {name} --ledger {self.url}` prints its definition)")
        if latest is not None:
            change: str | None = "; ".join([*changed, *settings])
        elif created:
            change = None
        else:
            change = "; ".join(["recorded for a migration made before schema 8", *changed])
        with self._engine.begin() as conn:
            conn.execute(h.insert().values(
                migration_id=row["id"], seq=1 if latest is None else latest.seq + 1,
                definition=dump_json(definition), change=change, recorded_at=now))
            if any(mine[k] != row[k] for k in d.IDENTITY_KEYS):
                conn.execute(update(m).where(m.c.id == row["id"]).values(
                    source=mine["source"], target=mine["target"], tables=mine["tables"],
                    updated_at=now))
            row = conn.execute(select(m).where(m.c.id == row["id"])).one()._mapping
        if changed:
            log.warning("ledger %s: migration %r corrected before anything was copied: %s "
                        "(the earlier definition stays in its history)",
                        self.url, name, "; ".join(changed))
        elif settings:
            log.info("ledger %s: migration %r: settings changed: %s",
                     self.url, name, "; ".join(settings))
        return MigrationRecord.from_row(row)

    def copied(self, migration_id: int) -> str:
        """What the migration has written to its target so far, for people (``3 key ranges
        copied``); empty when nothing: no range copied, no snapshot step succeeded, no WAL
        file replayed."""
        s, k, w = t.steps, t.key_ranges, t.wal_files
        with self._engine.begin() as conn:
            ranges = conn.execute(select(func.count()).select_from(k).where(
                and_(k.c.migration_id == migration_id, k.c.copied_at.is_not(None)))).scalar()
            snapshots = conn.execute(select(func.count()).select_from(s).where(and_(
                s.c.migration_id == migration_id, s.c.kind.in_(_COPY_STEPS),
                s.c.status == StepStatus.SUCCEEDED.value))).scalar()
            replayed = conn.execute(select(func.count()).select_from(w).where(and_(
                w.c.migration_id == migration_id, w.c.cluster == "source",
                w.c.status == WalStatus.REPLAYED.value))).scalar()
        found = [f"{n} {what}" for n, what in ((ranges, "key ranges copied"),
                                               (snapshots, "snapshot steps succeeded"),
                                               (replayed, "WAL files replayed")) if n]
        return ", ".join(found)

    def definition(self, name: str) -> dict[str, Any] | None:
        """The newest definition recorded for the migration ``name`` (the tree
        ``MigrationSpec.from_dict`` reads); None for an unknown migration or one recorded
        before definitions were kept."""
        m, h = t.migrations, t.migration_definitions
        with self._engine.begin() as conn:
            text = conn.execute(
                select(h.c.definition).join(m, m.c.id == h.c.migration_id)
                .where(m.c.name == name).order_by(h.c.seq.desc()).limit(1)).scalar()
        return None if text is None else dict(json.loads(text))

    def definitions(self, migration_id: int) -> list[tuple[int, dict[str, Any], str | None]]:
        """The migration's definitions, oldest first: ``(recorded_at, definition,
        change)``, the change said in one line (None for the first)."""
        h = t.migration_definitions
        with self._engine.begin() as conn:
            rows = conn.execute(select(h).where(h.c.migration_id == migration_id)
                                .order_by(h.c.seq)).all()
        return [(r.recorded_at, json.loads(r.definition), r.change) for r in rows]

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
        metrics: Mapping[str, Any] | None = None, host: str | None = None,
        heartbeat: bool = False,
    ) -> int:
        """Record a running step (with what is known of it so far, ``metrics``) of this
        process on ``host`` (default: this machine's name); returns its id for
        :meth:`finish_step`. Its migration's abandoned steps are marked failed first
        (:mod:`~hbase_migrate.audit.liveness`); ``heartbeat``: the step will beat (its first
        beat is now)."""
        self.reap_steps(migration_id)
        started = now_ms() if now is None else now
        with self._engine.begin() as conn:
            return int(conn.execute(t.steps.insert().values(
                migration_id=migration_id, kind=kind, dag_id=dag_id, run_id=run_id,
                task_id=task_id, host=host or socket.gethostname(), pid=os.getpid(),
                started_at=started, heartbeat_at=started if heartbeat else None,
                status=StepStatus.RUNNING.value,
                metrics=None if metrics is None else dump_json(dict(metrics)),
            ).returning(t.steps.c.id)).scalar_one())

    def beat(self, step_id: int) -> bool:
        """Record that running step ``step_id`` lives; False when it is no longer running
        (ended, or marked abandoned)."""
        with self._engine.begin() as conn:
            done = conn.execute(update(t.steps).where(and_(
                t.steps.c.id == step_id, t.steps.c.status == StepStatus.RUNNING.value))
                .values(heartbeat_at=now_ms()))
        return done.rowcount == 1

    def reap_steps(self, migration_id: int, now: int | None = None) -> list[int]:
        """Mark the migration's abandoned running steps failed (ended at their last sign of
        life, the reason as their error); returns their ids."""
        now = now_ms() if now is None else now
        with self._engine.begin() as conn:
            rows = conn.execute(select(t.steps).where(and_(
                t.steps.c.migration_id == migration_id,
                t.steps.c.status == StepStatus.RUNNING.value))).all()
        reaped = []
        for step in (StepRecord.from_row(r._mapping) for r in rows):
            why = abandoned(step, now)
            if why is None:
                continue
            with self._engine.begin() as conn:
                done = conn.execute(update(t.steps).where(and_(
                    t.steps.c.id == step.id, t.steps.c.status == StepStatus.RUNNING.value))
                    .values(status=StepStatus.FAILED.value,
                            ended_at=step.heartbeat_at or step.started_at,
                            error=f"{ABANDONED} {why}"))
            if done.rowcount == 1:
                log.warning("ledger: %s step %d of migration %d marked failed: %s", step.kind,
                            step.id, migration_id, why)
                reaped.append(step.id)
        return reaped

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
            with self._engine.begin() as conn:
                error = conn.execute(select(t.steps.c.error)
                                     .where(t.steps.c.id == step_id)).scalar_one_or_none()
            if error and error.startswith(ABANDONED):
                raise LedgerError(f"ledger {self.url}: step {step_id} was marked failed while "
                                  f"this process was silent ({error}); its outcome is not "
                                  "recorded: run the step again")
            raise LedgerError(f"ledger {self.url}: step {step_id} is unknown or already ended")

    @contextmanager
    def step(self, migration_id: int, kind: str, provenance: Provenance | None = None, *,
             record_wait: float = 0.0) -> Iterator[OpenStep]:
        """Run a block as the step ``kind`` (by ``provenance``): the one way a step is
        recorded. The block fills the step's ``metrics`` and may :meth:`OpenStep.fail` it
        (a result that is no exception: a negative verdict, files that failed); an exception
        fails it with its text and propagates. ``record_wait``: an exception from a ledger
        that stopped answering is recorded once it answers again within so many seconds (a
        database restarting), else propagates with the step left to the next reader, which
        finds its process gone; a full disk gives the step's spare up to record it
        (:mod:`~hbase_migrate.audit.step_faults`)."""
        who = provenance or Provenance()
        self._spare.keep()  # room to record this step's end should the disk fill
        step = OpenStep(self.start_step(migration_id, kind, dag_id=who.dag_id,
                                        run_id=who.run_id, task_id=who.task_id,
                                        host=who.host, heartbeat=True))
        what = f"{kind} step {step.id}"
        end = StepEnd(partial(self.finish_step, step.id), self._spare, what, self.url)
        heart = Heartbeat(partial(self.beat, step.id), what)
        try:
            yield step
        except BaseException as exc:
            heart.stop()
            end.failed(exc, step.metrics, record_wait)
            raise
        heart.stop()
        end.record(step.status, step.metrics, step.error)

    def steps(self, migration_id: int, kind: str | None = None) -> list[StepRecord]:
        query = select(t.steps).where(t.steps.c.migration_id == migration_id)
        if kind is not None:
            query = query.where(t.steps.c.kind == kind)
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(t.steps.c.id)).all()
        return [StepRecord.from_row(r._mapping) for r in rows]
