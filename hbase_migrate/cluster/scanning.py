"""A scan above its transport: the one place a scan resumes after the last row handed out.

Each transport implements :class:`Scanner`, one server-side scanner at a time:
``open(start, after)`` opens it at row ``start`` (inclusive; ``after``: the last cell of that
row already handed out, or None), ``next()`` gives the next *pieces* (lists of cells of one
row in HBase's order; a row wider than a transport's budget may come as consecutive pieces)
or None when the range is done, ``close()`` closes it (never raising).

:func:`resumed` reads a scanner through. When a call fails with a kind the one retry loop
(:mod:`hbase_migrate.cluster.retry`) allows (a lost scanner, a region that moved, a busy or
unreachable server), it reopens the scanner at the last row handed out, and drops the cells
of that row already handed out: never a cell twice, never one missed. A failure retrying
cannot help, or one more than the attempts allow without progress, ends the scan with the
transport's one-line error.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Protocol

from hbase_migrate.cluster.retry import Kind, Retry
from hbase_migrate.wal.model import Cell

CellKey = tuple[bytes, bytes, bytes, int, int]


class Scanner(Protocol):
    """One scan's server-side scanner, opened again where the scan resumes."""

    def open(self, start: bytes, after: Cell | None) -> None: ...

    def next(self) -> list[list[Cell]] | None: ...

    def close(self) -> None: ...


def cell_key(cell: Cell) -> CellKey:
    """HBase's order of cells within a row (family, qualifier; timestamp and type
    descending), with the row first."""
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type)


def range_text(start: bytes, stop: bytes) -> str:
    return f"[{start.hex() or '-inf'}, {stop.hex() or '+inf'})"


def kind_of(exc: Exception) -> Kind | None:
    """The kind an error carries (None: not a failure of a call, raised as it is)."""
    kind = getattr(exc, "kind", None)
    return kind if isinstance(kind, Kind) else None


def resumed(scanner: Scanner, start: bytes, retry: Retry,
            judge: Callable[[Exception], Kind | None] = kind_of
            ) -> Generator[list[Cell], None, None]:
    """The pieces of a scan from ``start``, ``scanner`` reopened after each failure
    ``judge`` gives a kind (``retry`` decides whether to go on). A consumer that stops
    early closes the generator: the scanner is closed on the server."""
    row, last = start, None
    while True:
        try:
            scanner.open(row, last)
            while (pieces := scanner.next()) is not None:
                for got in pieces:
                    piece = got
                    if last is not None and got and got[0].row == row:
                        seen = cell_key(last)
                        piece = [c for c in got if cell_key(c) > seen]
                    if piece:
                        yield piece
                        row, last = piece[0].row, piece[-1]
                        retry.progressed()
            return
        except Exception as exc:
            kind = judge(exc)
            if kind is None:
                raise
            retry.failed(exc, kind)  # raises when it is final
        finally:
            scanner.close()
