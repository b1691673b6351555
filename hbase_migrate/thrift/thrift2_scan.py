"""A Thrift2 scanner sized by bytes: the :class:`~hbase_migrate.cluster.scanning.Scanner` of
``Thrift2Client.scan``.

Each ``getScannerRows`` call asks for as many Results as the byte budget allows given the
sizes seen (:class:`~hbase_migrate.cluster.sizing.ScanSizer`), and the scanner is opened
with a ``batchSize`` so that a row wider than the budget comes as several Results. The
Results of one row are joined again up to the budget: the scanner gives *pieces*, each a
list of cells of one row in HBase's order; a row is one piece unless it holds more than the
budget, then it is several consecutive pieces (callers counting rows count a change of row
key).

A call that fails (on the transport, a timeout above all; or the gateway lost the scanner)
raises an error carrying its kind, and the scan resumes above the transport
(:func:`~hbase_migrate.cluster.scanning.resumed`); after a transport failure the next calls
ask for less (half the Results, then smaller Results). After ``timeout_retries`` failures in
a row without progress the scan fails with :class:`ScanFailedError`, one line naming the
table, the range, the row reached and what to change.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.retry import Kind, first_line
from hbase_migrate.cluster.scanning import cell_key, range_text
from hbase_migrate.cluster.sizing import ScanSizer, cell_bytes, format_bytes
from hbase_migrate.wal.model import Cell

log = logging.getLogger(__name__)


class Gateway(Protocol):
    """The calls of a Thrift2 client a scanner makes."""

    endpoint: str
    timeout: float
    max_result_bytes: int
    timeout_retries: int

    def open_scanner(self, table: str, tscan: Any) -> int: ...

    def scanner_rows(self, table: str, scanner_id: int, rows: int) -> list[Any]: ...

    def close_scanner(self, scanner_id: int) -> None: ...


class ScanFailedError(ClusterError):
    """A scan call kept failing (timed out, or the gateway lost the scanner) at the same
    place, even asked for less: the message names the table, the range, the row reached
    and what to change."""


class Thrift2Scanner:
    """One scan of ``[start, stop)`` over a Thrift2 gateway. ``make_tscan(start_row,
    batch)`` builds the TScan, ``cells_of(result)`` turns a TResult into cells."""

    def __init__(self, client: Gateway, table: str, start: bytes, stop: bytes,
                 make_tscan: Callable[[bytes, int], Any],
                 cells_of: Callable[[Any], list[Cell]], max_rows: int) -> None:
        self.client, self.table, self.start, self.stop = client, table, start, stop
        self.make_tscan, self.cells_of = make_tscan, cells_of
        self.sizer = ScanSizer(client.max_result_bytes, max_rows)
        self.resume_row = start
        self.last_cell: Cell | None = None  # cells of resume_row up to this one were given
        self.scanner_id: int | None = None
        self.opened = False
        self.done = False
        self.calls = 0
        self.reopens = 0
        self.largest_call = 0  # bytes of the largest call answered
        self.last_cells_per_result = 1
        self.buffer: list[Cell] = []  # cells of one row received, not yet given
        self.buffer_bytes = 0
        self.reopened_at: tuple[bytes, Cell | None] | None = None  # for a smaller batch
        self.sizes: list[int] = []  # of the Results of the latest call
        self.split = False  # a Result of the latest call was a part of a row

    # --- Scanner ------------------------------------------------------------------------

    def open(self, start: bytes, after: Cell | None) -> None:
        if self.opened:
            self.reopens += 1
        self.opened = True
        self.resume_row, self.last_cell = start, after
        self.buffer, self.buffer_bytes, self.done = [], 0, False
        self.scanner_id = self.client.open_scanner(
            self.table, self.make_tscan(start, self.sizer.batch))

    def next(self) -> list[list[Cell]] | None:
        """The pieces one call completes (an empty list: none yet), None at the end."""
        if self.done:
            return None
        assert self.scanner_id is not None
        try:
            results = self.client.scanner_rows(self.table, self.scanner_id, self.sizer.rows)
        except ClusterError as exc:
            if getattr(exc, "kind", None) is Kind.OUTAGE and self.sizer.shrink(
                    self.last_cells_per_result):
                log.warning("%s: scan %s %s at %s: asking %d Result(s) of at most %d "
                            "cell(s) from now on", self.client.endpoint, self.table,
                            range_text(self.start, self.stop), self.row_reached(),
                            self.sizer.rows, self.sizer.batch)
            raise
        self.calls += 1
        if not results:
            self.done = True
            return list(self._emit())
        pieces = list(self._read(results))
        if self._resized():  # the same scan, in Results of another size from here
            self.close()
            self.open(self.resume_row, self.last_cell)
        return pieces

    def close(self) -> None:
        if self.scanner_id is not None:
            scanner_id, self.scanner_id = self.scanner_id, None
            self.client.close_scanner(scanner_id)

    # --- joining Results into pieces ----------------------------------------------------

    def _read(self, results: list[Any]) -> Iterator[list[Cell]]:
        """The pieces of one call's Results. The usual Result (a row of its own, within
        the budget) is handled inline: this loop runs per row."""
        cells_of, max_bytes = self.cells_of, self.sizer.max_bytes
        batch = self.sizer.batch
        self.sizes = []
        largest_cell, self.split = 0, False
        for result in results:
            cells = cells_of(result)
            if not cells:
                continue
            weights = list(map(cell_bytes, cells))
            size = sum(weights)
            self.sizes.append(size)
            largest_cell = max(largest_cell, *weights)
            self.split = self.split or len(cells) >= batch > 0
            self.last_cells_per_result = len(cells)
            row, buffer = cells[0].row, self.buffer
            if row == self.resume_row and self.last_cell is not None:
                yield from self._take(cells)  # more of a row partly given
                continue
            if buffer and row != buffer[0].row:
                yield from self._emit()
                buffer = self.buffer
            if buffer:
                buffer += cells
            else:
                self.buffer = cells
            self.buffer_bytes += size
            if self.buffer_bytes >= max_bytes:
                yield from self._emit()
        self.largest_call = max(self.largest_call, sum(self.sizes))
        self.sizer.observe(self.sizes, largest_cell)

    def _resized(self) -> bool:
        """Whether the Results should be of another size from here (the scanner is then
        opened again at the resume point)."""
        batch = self.sizer.batch
        wanted = self.sizer.wants_batch(self.split, max(self.sizes, default=0))
        here = (self.resume_row, self.last_cell)
        if wanted is None or here == self.reopened_at:
            # only once the resume point moved: a reopen re-reads from there, and the
            # same cells must not make the same decision again and again
            return False
        log.debug("scan %s: %d cells per Result from now on (was %d)", self.table, wanted,
                  batch)
        if wanted < batch:
            self.sizer.batch_ceiling = wanted  # no growing back: no flapping
        self.sizer.batch = wanted
        self.reopened_at = here
        return True

    def _take(self, cells: list[Cell]) -> Iterator[list[Cell]]:
        """Add one Result's cells to the row being joined (cells already given before a
        reopen dropped); yield what is complete or over the budget."""
        if self.last_cell is not None and cells[0].row == self.resume_row:
            skip_to = cell_key(self.last_cell)
            cells = [c for c in cells if cell_key(c) > skip_to]
            if not cells:
                return
        if self.buffer and cells[0].row != self.buffer[0].row:
            yield from self._emit()
        self.buffer += cells
        self.buffer_bytes += sum(map(cell_bytes, cells))
        if self.buffer_bytes >= self.sizer.max_bytes:
            yield from self._emit()

    def _emit(self) -> Iterator[list[Cell]]:
        """Yield the buffered cells as one piece; the resume point moves past them."""
        if self.buffer:
            piece, self.buffer, self.buffer_bytes = self.buffer, [], 0
            self.resume_row, self.last_cell = piece[0].row, piece[-1]
            yield piece

    # --- the final error ----------------------------------------------------------------

    def row_reached(self) -> str:
        """``row R`` (the last row read from, or the start row when nothing was read)."""
        if self.last_cell is not None:
            return f"row {short_binary(self.resume_row)}"
        if self.start:
            return f"row {short_binary(self.start)} (nothing read yet)"
        return "its first row (nothing read yet)"

    def give_up(self, exc: Exception, kind: Kind, tried: str) -> Exception:
        """The scan's final error: a failure retrying cannot help as it is, one that kept
        coming back as :class:`ScanFailedError` saying what to change."""
        if kind is Kind.NEVER:
            return exc
        c, sizer = self.client, self.sizer
        asked = f"{sizer.rows} Result(s) of at most {sizer.batch} cell(s)"
        if sizer.result_est > 0:
            asked += f", about {format_bytes(sizer.rows * sizer.result_est)}"
        cause = exc.__cause__
        if isinstance(cause, TimeoutError):
            what = "timed out"
            fix = (f"raise [gateway] call_timeout (now {c.timeout:g} s) or lower "
                   f"[gateway] max_result_bytes (now {format_bytes(c.max_result_bytes)})")
        elif kind is Kind.SCANNER:
            what = f"the gateway lost the scanner ({first_line(cause or exc)})"
            fix = ("lower [gateway] max_result_bytes (now "
                   f"{format_bytes(c.max_result_bytes)}) or raise the gateway's "
                   "hbase.client.scanner.timeout.period")
        else:
            what = f"interrupted ({first_line(cause or exc)})"
            fix = "check the gateway and rerun (the copied ranges are kept)"
        failures = c.timeout_retries + 1
        return ScanFailedError(
            f"thrift2 gateway {c.endpoint}: scan of table {self.table} range "
            f"{range_text(self.start, self.stop)} failed at {self.row_reached()}: "
            f"{failures} calls in a row {what} (the last asked for {asked}); {fix}")
