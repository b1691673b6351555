"""The ledger's validations (per range, with recompares), planned key ranges and their copy,
and repairs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import and_, select, update

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.errors import LedgerError
from hbase_migrate.audit.records import (
    KeyRangeRecord,
    RepairRecord,
    ValidationRecord,
    Verdict,
    dump_json,
)


class RangeBook(LedgerBook):
    """Validations, key ranges and repairs."""

    # -- validations ------------------------------------------------------------------------

    def record_validation(
        self, migration_id: int, step_id: int | None, table_name: str, range_start: bytes,
        range_end: bytes, *, source_rows: int | None, target_rows: int | None,
        source_cells: int | None, target_cells: int | None, source_digest: str | None,
        target_digest: str | None, verdict: Verdict | str, now: int | None = None,
        gx_result: str | None = None, data_docs: str | None = None,
        differences: Sequence[str] = (), run_key: str | None = None,
    ) -> int:
        """Record one compared key range ``[range_start, range_end)``; returns its id.
        ``gx_result`` and ``data_docs`` locate the Great Expectations artifacts of the run
        that judged it, ``differences`` lists its first differing cells; ``run_key`` names
        the validation run it belongs to (default: the step's own, ``step-<id>``)."""
        if run_key is None and step_id is not None:
            run_key = f"step-{step_id}"
        with self._engine.begin() as conn:
            return int(conn.execute(t.validations.insert().values(
                migration_id=migration_id, step_id=step_id, table_name=table_name,
                range_start=range_start.hex(), range_end=range_end.hex(),
                source_rows=source_rows, target_rows=target_rows, source_cells=source_cells,
                target_cells=target_cells, source_digest=source_digest,
                target_digest=target_digest, verdict=Verdict(verdict).value,
                validated_at=now_ms() if now is None else now, gx_result=gx_result,
                data_docs=data_docs, differences=dump_json(list(differences)), run_key=run_key,
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

    def record_artifacts(self, validation_ids: Sequence[int], gx_result: str,
                         data_docs: str | None) -> None:
        """The Great Expectations artifacts of the judge that validated these rows (the
        ranges of a validation run made in parts, recorded by the parts without GX)."""
        v = t.validations
        with self._engine.begin() as conn:
            done = conn.execute(update(v).where(v.c.id.in_(list(validation_ids)))
                                .values(gx_result=gx_result, data_docs=data_docs))
        if done.rowcount != len(set(validation_ids)):
            raise LedgerError(f"ledger {self.url}: {len(set(validation_ids))} validations to "
                              f"mark judged, {done.rowcount} found")

    def validations(self, migration_id: int, step_id: int | None = None) -> list[ValidationRecord]:
        v = t.validations
        query = select(v).where(v.c.migration_id == migration_id)
        if step_id is not None:
            query = query.where(v.c.step_id == step_id)
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(v.c.id)).all()
        return [ValidationRecord.from_row(r._mapping) for r in rows]

    def run_validations(self, migration_id: int, run_key: str) -> list[ValidationRecord]:
        """The ranges of the validation run ``run_key`` (its parts together): the newest
        row of each range (a retried part records its ranges again), in key order."""
        v = t.validations
        with self._engine.begin() as conn:
            rows = conn.execute(select(v).where(and_(
                v.c.migration_id == migration_id, v.c.run_key == run_key)).order_by(v.c.id)
            ).all()
        return _newest_per_range(ValidationRecord.from_row(x._mapping) for x in rows)

    def validation_runs(self, migration_id: int) -> list[list[ValidationRecord]]:
        """Every validation run, oldest first (by its newest row): each as
        :meth:`run_validations` gives it, its parts together; ranges recorded without a run
        make one run per ``validated_at``. The last is :meth:`last_validations`."""
        runs: dict[str | int, list[ValidationRecord]] = {}
        for row in self.validations(migration_id):
            key = row.run_key if row.run_key is not None else row.validated_at
            runs.setdefault(key, []).append(row)
        ordered = sorted(runs.values(), key=lambda rows: max((r.validated_at, r.id)
                                                              for r in rows))
        return [_newest_per_range(rows) for rows in ordered]

    def last_validations(self, migration_id: int) -> list[ValidationRecord]:
        """The ranges of the newest validation run: the run of the newest row recorded (its
        parts together, see :meth:`run_validations`; for ranges recorded without a step or
        run, the newest ``validated_at``). Whether it covers every planned range is the
        caller's to check. ``status`` and the report both read the newest run here."""
        v = t.validations
        with self._engine.begin() as conn:
            newest = conn.execute(
                select(v.c.run_key, v.c.validated_at).where(v.c.migration_id == migration_id)
                .order_by(v.c.validated_at.desc(), v.c.id.desc()).limit(1)).first()
        if newest is None:
            return []
        if newest.run_key is not None:
            return self.run_validations(migration_id, newest.run_key)
        return [r for r in self.validations(migration_id)
                if r.run_key is None and r.validated_at == newest.validated_at]

    # -- key ranges and repairs -------------------------------------------------------------

    def plan_key_ranges(self, migration_id: int, table_name: str,
                        ranges: Sequence[tuple[bytes, bytes, int]], *,
                        now: int | None = None) -> list[KeyRangeRecord]:
        """Record the planned ranges ``(start, stop, cells)`` of a table that overlap no
        range recorded already (the first plan stays: reruns meet the same ranges; a plan
        left with holes by a stopped copy gets them filled); returns the table's ranges."""
        now = now_ms() if now is None else now
        k = t.key_ranges
        with self._engine.begin() as conn:
            recorded = [(bytes.fromhex(r.range_start), bytes.fromhex(r.range_end))
                        for r in conn.execute(select(k.c.range_start, k.c.range_end).where(
                            and_(k.c.migration_id == migration_id,
                                 k.c.table_name == table_name)))]
            new = [(start, stop, cells) for start, stop, cells in ranges
                   if not any(_overlap((start, stop), r) for r in recorded)]
            if new:
                conn.execute(self._insert(k).values([
                    {"migration_id": migration_id, "table_name": table_name,
                     "range_start": start.hex(), "range_end": stop.hex(),
                     "planned_cells": cells, "planned_at": now}
                    for start, stop, cells in new]).on_conflict_do_nothing())
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


def _overlap(a: tuple[bytes, bytes], b: tuple[bytes, bytes]) -> bool:
    """Whether two key ranges ``[start, stop)`` (``b""`` open) share a key."""
    return (not a[1] or b[0] < a[1]) and (not b[1] or a[0] < b[1])


def _newest_per_range(rows: Iterable[ValidationRecord]) -> list[ValidationRecord]:
    """The newest row of each range (a retried part records its ranges again), in key
    order; ``rows`` oldest first."""
    newest = {(r.table_name, r.range_start, r.range_end): r for r in rows}
    return sorted(newest.values(), key=lambda r: (r.table_name, r.range_start))
