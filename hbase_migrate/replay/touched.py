"""The rows a replay wrote, per target table: what the validation of its round compares
(:mod:`hbase_migrate.validate.rounds`).

Every mutation handed to the target counts, put or delete, acknowledged or not (a row whose
write failed is compared too). A table keeps at most ``ROWS_CAP`` rows; past that it is only
named (``None``), and its round reads it whole, range by range, as a full validation does:
memory stays bounded whatever a round wrote.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import itemgetter

from hbase_migrate.replay.mutations import RowMutation

ROWS_CAP = 100_000
# The steps that write the target and record their round's rows (not the CDC stream's).
ROUND_STEPS = ("replay", "backfill")
_ROW = itemgetter(0)  # RowMutation.row

# target table -> its rows written, None when more than could be listed
Touched = Mapping[str, frozenset[bytes] | None]


class TouchedRows:
    """Rows written so far, by target table (at most ``cap`` a table)."""

    def __init__(self, cap: int = ROWS_CAP) -> None:
        self.cap = cap
        self.rows: dict[str, set[bytes] | None] = {}

    def add(self, table: str, mutations: Iterable[RowMutation]) -> None:
        """The rows of ``mutations`` handed to ``table``."""
        self.add_rows(table, map(_ROW, mutations))

    def merge(self, touched: Touched) -> None:
        """Add another file's (or run's) rows."""
        for table, rows in touched.items():
            if rows is None:
                self.rows[table] = None
            else:
                self.add_rows(table, rows)

    def add_rows(self, table: str, rows: Iterable[bytes]) -> None:
        mine = self.rows.setdefault(table, set())
        if mine is not None:
            mine.update(rows)
            if len(mine) > self.cap:
                self.rows[table] = None

    def frozen(self) -> dict[str, frozenset[bytes] | None]:
        return {t: None if r is None else frozenset(r) for t, r in self.rows.items()}
