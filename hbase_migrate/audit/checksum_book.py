"""The ledger's range checksums: each range of a validation recorded as it finishes, so a
stopped validation continues where it stopped (:mod:`hbase_migrate.validate.resume`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, select

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.records import ChecksumRecord, _load_json, dump_json


class ChecksumBook(LedgerBook):
    """Range checksums of validations."""

    def record_checksum(self, migration_id: int, step_id: int, plan_key: str,
                        plan: Mapping[str, Any], table_name: str, range_start: bytes,
                        range_end: bytes, *, rows: tuple[int, int], cells: tuple[int, int],
                        digests: tuple[str, str], reads: tuple[str, str],
                        resumed_from: int | None = None, now: int | None = None) -> None:
        """One range's checksums, (source, target) each, read by step ``step_id`` under
        ``plan`` (or carried over from the stopped step ``resumed_from``, read at ``now``)."""
        with self._engine.begin() as conn:
            conn.execute(self._insert(t.range_checksums).values(
                migration_id=migration_id, step_id=step_id, plan_key=plan_key,
                plan=dump_json(dict(plan)), table_name=table_name,
                range_start=range_start.hex(), range_end=range_end.hex(),
                source_rows=rows[0], target_rows=rows[1], source_cells=cells[0],
                target_cells=cells[1], source_digest=digests[0], target_digest=digests[1],
                source_read=reads[0], target_read=reads[1], resumed_from=resumed_from,
                recorded_at=now_ms() if now is None else now).on_conflict_do_nothing())

    def checksums(self, migration_id: int, step_id: int) -> list[ChecksumRecord]:
        """The ranges step ``step_id`` recorded, in the order it recorded them."""
        c = t.range_checksums
        with self._engine.begin() as conn:
            rows = conn.execute(select(c).where(and_(
                c.c.migration_id == migration_id, c.c.step_id == step_id)).order_by(c.c.id)
            ).all()
        return [ChecksumRecord.from_row(r._mapping) for r in rows]

    def checksum_steps(self, migration_id: int) -> dict[int, tuple[dict[str, Any], bool]]:
        """The validation steps that recorded range checksums, newest first: step id ->
        (its plan, whether it went on to record its verdict: ``validations`` rows)."""
        c, v = t.range_checksums, t.validations
        with self._engine.begin() as conn:
            judged = set(conn.execute(select(v.c.step_id).distinct().where(
                v.c.migration_id == migration_id)).scalars())
            rows = conn.execute(select(c.c.id, c.c.step_id, c.c.plan).where(
                c.c.migration_id == migration_id).order_by(c.c.step_id.desc(), c.c.id)).all()
        steps: dict[int, tuple[dict[str, Any], bool]] = {}
        for row in rows:
            if row.step_id not in steps:
                plan = _load_json(row.plan, "range_checksums", row._mapping, "plan")
                steps[row.step_id] = (plan, row.step_id in judged)
        return steps
