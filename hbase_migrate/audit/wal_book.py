"""The ledger's WAL files (status forward only, acknowledged offsets never decreasing, both
enforced in the writing statement), the watermark's WAL anchors, and gaps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, and_, case, func, or_, select, update

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.errors import LedgerError, WalStateError
from hbase_migrate.audit.records import (
    PENDING,
    AnchorRecord,
    ChainHead,
    GapKind,
    GapRecord,
    WalFileRecord,
    WalStatus,
    dump_json,
)

DEFAULT_GAP_REMEDY = (
    "re-copy the affected key ranges from the source: validate the migrated tables, then "
    "repair the ranges that differ"
)
_NOTHING_SEEN = 1 << 62  # a head's older_seen_from when its listing recorded no file
# The statuses each change may start from (the forward-only rule).
_REPLAYABLE = (*PENDING, WalStatus.SKIPPED)
_FAILABLE = PENDING
_SKIPPABLE = (WalStatus.SEEN, WalStatus.SKIPPED)


class WalBook(LedgerBook):
    """WAL files, anchors and gaps."""

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

    # -- what the listings watched ----------------------------------------------------------

    def record_listing(self, migration_id: int, stream: str, started: int, ended: int,
                       archive_ttl: int, live_heads: Mapping[tuple[str, str], int] | None = None,
                       *, files_recorded: bool = True) -> None:
        """A listing of the source's WAL folders ran from ``started`` to ``ended``: every
        file that appeared in ``[ended - archive_ttl, started]`` was still there, so it was
        seen (a stretch of every chain, joined with the newest one it meets). Per live chain
        (server, group), the creation time of the newest file it saw in the live folder
        (``live_heads``) is a :class:`ChainHead` (``sql/011_wal_heads.sql``). A listing whose
        files were not recorded as seen (``files_recorded=False``) proves only that no file
        newer than each head had appeared by ``started``."""
        older_seen_from = ended - archive_ttl if files_recorded else _NOTHING_SEEN
        with self._engine.begin() as conn:
            if files_recorded and ended - archive_ttl <= started:  # else it proves nothing
                self._watch(conn, migration_id, stream, "", "", ended - archive_ttl, started)
            for (server, group), head_time in (live_heads or {}).items():
                self._head(conn, migration_id, stream, server, group, head_time,
                           older_seen_from, started)

    def _head(self, conn: Connection, migration_id: int, stream: str, server: str,
              group: str, head_time: int, older_seen_from: int, newer_after: int) -> None:
        h = t.wal_heads
        stmt = self._insert(h).values(
            migration_id=migration_id, stream=stream, server=server, wal_group=group,
            head_time=head_time, older_seen_from=older_seen_from, newer_after=newer_after)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=["migration_id", "stream", "server", "wal_group", "head_time"],
            set_={"older_seen_from": case(
                      (h.c.older_seen_from <= stmt.excluded.older_seen_from,
                       h.c.older_seen_from), else_=stmt.excluded.older_seen_from),
                  "newer_after": case((h.c.newer_after >= stmt.excluded.newer_after,
                                       h.c.newer_after), else_=stmt.excluded.newer_after)}))

    def heads(self, migration_id: int, stream: str) -> dict[tuple[str, str], list[ChainHead]]:
        """Per chain (server, group), what listings proved through its heads, oldest head
        first (:meth:`record_listing`)."""
        h = t.wal_heads
        with self._engine.begin() as conn:
            rows = conn.execute(select(h.c.server, h.c.wal_group, h.c.head_time,
                                       h.c.older_seen_from, h.c.newer_after)
                                .where(and_(h.c.migration_id == migration_id,
                                            h.c.stream == stream))
                                .order_by(h.c.head_time)).all()
        found: dict[tuple[str, str], list[ChainHead]] = {}
        for r in rows:
            found.setdefault((str(r.server), str(r.wal_group)), []).append(ChainHead(
                int(r.head_time), int(r.older_seen_from), int(r.newer_after)))
        return found

    def _watch(self, conn: Connection, migration_id: int, stream: str, server: str,
               group: str, seen_from: int, seen_to: int) -> None:
        w = t.wal_watch
        last = conn.execute(select(w.c.id, w.c.seen_from, w.c.seen_to).where(and_(
            w.c.migration_id == migration_id, w.c.stream == stream, w.c.server == server,
            w.c.wal_group == group)).order_by(w.c.seen_to.desc()).limit(1)).first()
        if last is not None and last.seen_to >= seen_from and last.seen_from <= seen_to:
            conn.execute(update(w).where(w.c.id == last.id).values(
                seen_from=min(last.seen_from, seen_from), seen_to=max(last.seen_to, seen_to)))
        else:
            conn.execute(self._insert(w).values(
                migration_id=migration_id, stream=stream, server=server, wal_group=group,
                seen_from=seen_from, seen_to=seen_to))

    def watched(self, migration_id: int, stream: str) -> list[tuple[int, int]]:
        """The stretches ``(seen_from, seen_to)`` in which every WAL file that appeared was
        listed (:meth:`record_listing`), oldest first. (Stretches of one chain that ledgers
        before version 11 wrote claimed files older than the chain's head they could have
        missed: they are left out.)"""
        w = t.wal_watch
        with self._engine.begin() as conn:
            rows = conn.execute(select(w.c.seen_from, w.c.seen_to)
                                .where(and_(w.c.migration_id == migration_id,
                                            w.c.stream == stream, w.c.server == "",
                                            w.c.wal_group == ""))
                                .order_by(w.c.seen_from)).all()
        return [(int(r.seen_from), int(r.seen_to)) for r in rows]

    def wal_file(self, migration_id: int, cluster: str, path: str) -> WalFileRecord | None:
        with self._engine.begin() as conn:
            return self._find(conn, migration_id, cluster, path)

    def streams(self, migration_id: int) -> list[str]:
        """The streams with WAL-file rows (``source``: replay; ``cdc``), sorted."""
        w = t.wal_files
        with self._engine.begin() as conn:
            rows = conn.execute(select(w.c.cluster).distinct()
                                .where(w.c.migration_id == migration_id)).all()
        return sorted(str(r.cluster) for r in rows)

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


    def counts(self, migration_id: int) -> dict[str, int]:
        """WAL files of a migration by status."""
        w = t.wal_files
        with self._engine.begin() as conn:
            rows = conn.execute(select(w.c.status, func.count()).where(
                w.c.migration_id == migration_id).group_by(w.c.status)).all()
        return {str(status): int(n) for status, n in rows}
