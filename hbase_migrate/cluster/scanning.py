"""A scan above its transport: the one place a scan resumes after the last row handed out.

Each transport implements :class:`Scanner`, one server-side scanner at a time:
``open(start, after)`` opens it at row ``start`` (inclusive; ``after``: the last cell of that
row already handed out, or None), ``next()`` gives the next *pieces* (lists of cells of one
row in HBase's order; a row wider than a transport's budget may come as consecutive pieces)
or None when the range is done, ``close()`` closes it (never raising).

:func:`resumed_batches` reads a scanner through, a reply's pieces at a time (what a hot
loop wants: its costs per row paid once per reply); :func:`resumed` hands them out one by
one. When a call fails with a kind the one retry loop
(:mod:`hbase_migrate.cluster.retry`) allows (a lost scanner, a region that moved, a busy or
unreachable server), it reopens the scanner at the last row handed out, and drops the cells
of that row already handed out: never a cell twice, never one missed. A failure retrying
cannot help, or one more than the attempts allow without progress, ends the scan with the
transport's one-line error.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Protocol

from hbase_migrate.cluster.retry import Kind, Retry
from hbase_migrate.wal.model import Cell

CellKey = tuple[bytes, bytes, bytes, int, int]
GROUP_CELLS = 10_000  # cells per batch of :func:`grouped`


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
    """The pieces of a scan from ``start``: :func:`resumed_batches`, a piece at a time."""
    return pieces_of(resumed_batches(scanner, start, retry, judge))


def pieces_of(batches: Iterator[list[list[Cell]]]) -> Generator[list[Cell], None, None]:
    """The pieces of ``batches``, one by one; closing this closes ``batches`` (a scan's
    generator: its scanner closed on the server)."""
    try:
        for batch in batches:
            yield from batch
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def resumed_batches(scanner: Scanner, start: bytes, retry: Retry,
                    judge: Callable[[Exception], Kind | None] = kind_of
                    ) -> Generator[list[list[Cell]], None, None]:
    """The pieces of a scan from ``start``, a reply's at a time (never an empty list),
    ``scanner`` reopened after each failure ``judge`` gives a kind (``retry`` decides
    whether to go on). A consumer that stops early closes the generator: the scanner is
    closed on the server. Only the pieces of the row a scan resumed at can repeat cells
    handed out before the reopen: they are dropped."""
    row, last = start, None
    while True:
        try:
            scanner.open(row, last)
            while (pieces := scanner.next()) is not None:
                if last is not None and pieces and pieces[0] and pieces[0][0].row == row:
                    pieces = _after(pieces, row, cell_key(last))
                if not all(pieces):
                    pieces = [p for p in pieces if p]
                if pieces:
                    yield pieces
                    row, last = pieces[-1][0].row, pieces[-1][-1]
                    retry.progressed()
            return
        except Exception as exc:
            kind = judge(exc)
            if kind is None:
                raise
            retry.failed(exc, kind)  # raises when it is final
        finally:
            scanner.close()


def _after(pieces: list[list[Cell]], row: bytes, seen: CellKey) -> list[list[Cell]]:
    """``pieces`` without the cells of ``row`` up to ``seen`` (the leading pieces of a reply
    after a reopen at ``row``; a wide row may come as several)."""
    out: list[list[Cell]] = []
    for i, piece in enumerate(pieces):
        if piece and piece[0].row != row:
            return out + pieces[i:]
        out.append([c for c in piece if cell_key(c) > seen])
    return out


def grouped(pieces: Iterable[list[Cell]], cells: int = GROUP_CELLS
            ) -> Iterator[list[list[Cell]]]:
    """``pieces`` in lists of about ``cells`` cells: the batches of a transport whose
    scan has no replies of its own to batch by."""
    batch: list[list[Cell]] = []
    size = 0
    for piece in pieces:
        batch.append(piece)
        size += len(piece)
        if size >= cells:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
