"""The ledger's exported snapshot files: one row per file of a snapshot, upserted each time a
task copies or checks it (:meth:`SnapshotBook.record_snapshot_file`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import and_, select

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.records import SnapshotFileRecord, dump_json


class SnapshotBook(LedgerBook):
    """Exported snapshot files."""

    def record_snapshot_file(self, migration_id: int, snapshot: str, path: str, *,
                             source_path: str, size: int, status: str,
                             checksum: Mapping[str, Any], step_id: int | None,
                             now: int | None = None) -> None:
        """A file of ``snapshot`` equal on both sides, ``status`` ``copied`` now or ``kept``
        as it was (or a table ``cloned`` from it: ``path`` ``clone:<table>``)."""
        when = now_ms() if now is None else now
        sf = t.snapshot_files
        stmt = self._insert(sf).values(
            migration_id=migration_id, snapshot=snapshot, path=path, source_path=source_path,
            size=size, status=status, checksum=dump_json(dict(checksum)),
            copies=int(status == "copied"), step_id=step_id, recorded_at=when)
        stmt = stmt.on_conflict_do_update(
            index_elements=["migration_id", "snapshot", "path"],
            set_={"source_path": stmt.excluded.source_path, "size": stmt.excluded.size,
                  "status": stmt.excluded.status, "checksum": stmt.excluded.checksum,
                  "copies": sf.c.copies + stmt.excluded.copies,
                  "step_id": stmt.excluded.step_id, "recorded_at": stmt.excluded.recorded_at})
        with self._engine.begin() as conn:
            conn.execute(stmt)

    def snapshot_files(self, migration_id: int, snapshot: str | None = None
                       ) -> list[SnapshotFileRecord]:
        """The files recorded (of one ``snapshot``, or all), by snapshot and path."""
        sf = t.snapshot_files
        where = sf.c.migration_id == migration_id
        if snapshot is not None:
            where = and_(where, sf.c.snapshot == snapshot)
        with self._engine.begin() as conn:
            rows = conn.execute(select(sf).where(where).order_by(sf.c.snapshot, sf.c.path)).all()
        return [SnapshotFileRecord.from_row(r._mapping) for r in rows]
