"""The ledger's replay rounds: the rows each replay run wrote to the target, for the live
validation of its round (:mod:`hbase_migrate.validate.rounds`)."""

from __future__ import annotations

import base64
import struct
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import and_, select, update

from hbase_migrate.audit import records as t
from hbase_migrate.audit.book import LedgerBook, now_ms
from hbase_migrate.audit.errors import LedgerError

_LENGTH = struct.Struct(">I")


@dataclass(frozen=True)
class ReplayRound:
    """One replay run's round: ``rows`` by target table (None: more than could be listed),
    or ``rows_known`` False when its step ended without recording them (killed)."""

    step_id: int
    started_at: int
    rows_known: bool
    rows: Mapping[str, frozenset[bytes] | None]


def pack_rows(rows: Iterable[bytes]) -> str:
    """Row keys sorted, length-prefixed, compressed: one ledger value."""
    return base64.b64encode(zlib.compress(b"".join(
        _LENGTH.pack(len(r)) + r for r in sorted(rows)), 6)).decode("ascii")


def unpack_rows(packed: str, where: str) -> frozenset[bytes]:
    """:func:`pack_rows` undone; ``where`` names the ledger row in an error."""
    try:
        data = zlib.decompress(base64.b64decode(packed))
    except (ValueError, zlib.error) as exc:
        raise LedgerError(f"{where}: row keys unreadable ({exc})") from exc
    rows, at = [], 0
    while at < len(data):
        if at + 4 > len(data):
            raise LedgerError(f"{where}: row keys cut short at byte {at}")
        (size,), at = _LENGTH.unpack_from(data, at), at + 4
        rows.append(data[at:at + size])
        at += size
    if at != len(data):
        raise LedgerError(f"{where}: row keys cut short at byte {len(data)}")
    return frozenset(rows)


class RoundBook(LedgerBook):
    """Replay rounds and their rows."""

    def begin_round(self, migration_id: int, step_id: int, now: int | None = None) -> None:
        """Replay step ``step_id`` begins a round: its rows are unknown until it records them."""
        with self._engine.begin() as conn:
            conn.execute(self._insert(t.replay_rounds).values(
                step_id=step_id, migration_id=migration_id,
                started_at=now_ms() if now is None else now, rows_known=False,
                validated_by=None).on_conflict_do_nothing())

    def record_round(self, step_id: int, rows: Mapping[str, frozenset[bytes] | None]) -> None:
        """The rows replay step ``step_id`` wrote, by target table (None: too many to list)."""
        with self._engine.begin() as conn:
            for table, keys in rows.items():
                conn.execute(self._insert(t.round_rows).values(
                    step_id=step_id, table_name=table,
                    row_count=None if keys is None else len(keys),
                    row_keys=None if keys is None else pack_rows(keys)
                ).on_conflict_do_nothing())
            conn.execute(update(t.replay_rounds).where(
                t.replay_rounds.c.step_id == step_id).values(rows_known=True))

    def open_rounds(self, migration_id: int) -> list[ReplayRound]:
        """The rounds no validation compared yet, oldest first, with their rows."""
        r, k = t.replay_rounds, t.round_rows
        with self._engine.begin() as conn:
            rounds = conn.execute(select(r).where(and_(
                r.c.migration_id == migration_id, r.c.validated_by.is_(None))
            ).order_by(r.c.step_id)).all()
            ids = [x.step_id for x in rounds]
            found = conn.execute(select(k).where(k.c.step_id.in_(ids))).all() if ids else []
        rows: dict[int, dict[str, frozenset[bytes] | None]] = {i: {} for i in ids}
        for x in found:
            rows[x.step_id][x.table_name] = None if x.row_keys is None else unpack_rows(
                x.row_keys, f"round_rows of step {x.step_id}, table {x.table_name}")
        return [ReplayRound(x.step_id, x.started_at, bool(x.rows_known), rows[x.step_id])
                for x in rounds]

    def round_steps(self, migration_id: int) -> set[int]:
        """The replay steps that began a round (recorded or not, compared or not)."""
        r = t.replay_rounds
        with self._engine.begin() as conn:
            return set(conn.execute(select(r.c.step_id).where(
                r.c.migration_id == migration_id)).scalars())

    def close_rounds(self, step_ids: Iterable[int], validated_by: int) -> None:
        """Rounds ``step_ids`` were compared by validation step ``validated_by``."""
        ids = list(step_ids)
        if not ids:
            return
        with self._engine.begin() as conn:
            conn.execute(update(t.replay_rounds).where(and_(
                t.replay_rounds.c.step_id.in_(ids), t.replay_rounds.c.validated_by.is_(None)
            )).values(validated_by=validated_by))
