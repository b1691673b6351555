"""A Thrift2 scan sized by bytes, resumable cell for cell (what ``Thrift2Client.scan`` runs).

Each ``getScannerRows`` call asks for as many Results as the byte budget allows given the
sizes seen (:class:`~hbase_migrate.cluster.sizing.ScanSizer`), and the scanner is opened
with a ``batchSize`` so that a row wider than the budget comes as several Results. The
Results of one row are joined again up to the budget: the scan yields *pieces*, each a list
of cells of one row in HBase's order; a row is one piece unless it holds more than the
budget, then it is several consecutive pieces (callers counting rows count a change of row
key).

A call that fails on the transport (a timeout above all) leaves the gateway's scanner in an
unknown state: the scanner is reopened at the last row yielded, inclusive, and the cells of
that row up to the last one yielded are dropped, so no cell is yielded twice or missed. The
next call asks for less (half the Results, then smaller Results); after ``timeout_retries``
failures in a row without progress the scan fails with :class:`ScanFailedError`, one line
naming the table, the range, the row reached and what to change. A scanner the gateway lost
(HBase's ``OutOfOrderScannerNextException``, ``UnknownScannerException``, an expired lease,
an unknown scanner id) is reopened the same way, also a bounded number of times.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.sizing import ScanSizer, cell_bytes, format_bytes
from hbase_migrate.wal.model import Cell

if TYPE_CHECKING:
    from hbase_migrate.cluster.thrift2 import Thrift2Client

log = logging.getLogger(__name__)

CellKey = tuple[bytes, bytes, bytes, int, int]
# Messages of a scanner the gateway no longer holds in the state the client expects.
LOST_SCANNER = ("OutOfOrderScannerNextException", "UnknownScannerException",
                "LeaseException", "lease expired", "Invalid scanner Id",
                "ScannerResetException")


def cell_key(cell: Cell) -> CellKey:
    """HBase's order of cells within a row (family, qualifier; timestamp and type
    descending), with the row first."""
    return (cell.row, cell.family, cell.qualifier, -cell.timestamp, -cell.type)


def lost_scanner(message: str | None) -> str | None:
    """The name of the lost-scanner condition ``message`` reports, or None."""
    for marker in LOST_SCANNER:
        if marker.lower() in (message or "").lower():
            return marker
    return None


def range_text(start: bytes, stop: bytes) -> str:
    return f"[{start.hex() or '-inf'}, {stop.hex() or '+inf'})"


class AdaptiveScan:
    """One scan of ``[start, stop)``; iterate :meth:`pieces`. ``make_tscan(start_row,
    batch)`` builds the TScan, ``cells_of(result)`` turns a TResult into cells."""

    def __init__(self, client: Thrift2Client, table: str, start: bytes, stop: bytes,
                 make_tscan: Callable[[bytes, int], Any],
                 cells_of: Callable[[Any], list[Cell]], max_rows: int) -> None:
        self.client, self.table, self.start, self.stop = client, table, start, stop
        self.make_tscan, self.cells_of = make_tscan, cells_of
        self.sizer = ScanSizer(client.max_result_bytes, max_rows)
        self.resume_row = start
        self.last_cell: Cell | None = None  # cells of resume_row up to this one were yielded
        self.failures = 0
        self.calls = 0
        self.reopens = 0
        self.largest_call = 0  # bytes of the largest call answered
        self.last_cells_per_result = 1
        self.buffer: list[Cell] = []  # cells of one row received, not yet yielded
        self.buffer_bytes = 0
        self.reopened_at: tuple[bytes, Cell | None] | None = None  # for a smaller batch

    # --- the loop -----------------------------------------------------------------------

    def pieces(self) -> Iterator[list[Cell]]:
        while True:
            scanner_id = self._open()
            try:
                outcome = yield from self._read(scanner_id)
            finally:
                self.client._close_scanner(scanner_id)
            if outcome == "done":
                yield from self._emit()
                return
            self.buffer, self.buffer_bytes = [], 0  # read again after the resume point
            self.reopens += 1

    def _open(self) -> int:
        tscan = self.make_tscan(self.resume_row, self.sizer.batch)
        table = self.table.encode()
        return int(self.client._call(f"openScanner {self.table}",
                                     lambda c: c.openScanner(table, tscan), idempotent=True))

    def _read(self, scanner_id: int) -> Generator[list[Cell], None, str]:
        """Pieces from one open scanner; returns "done" at the end of the range, "reopen"
        when the scanner must be opened again (at the resume point). The usual Result (a
        row of its own, within the budget) is handled inline: this loop runs per row."""
        cells_of, max_bytes = self.cells_of, self.sizer.max_bytes
        while True:
            results = self._fetch(scanner_id)
            if results is None:
                return "reopen"
            if not results:
                return "done"
            batch = self.sizer.batch
            sizes: list[int] = []
            largest_cell, split = 0, False
            for result in results:
                cells = cells_of(result)
                if not cells:
                    continue
                weights = list(map(cell_bytes, cells))
                size = sum(weights)
                sizes.append(size)
                largest_cell = max(largest_cell, *weights)
                split = split or len(cells) >= batch > 0
                self.last_cells_per_result = len(cells)
                row, buffer = cells[0].row, self.buffer
                if row == self.resume_row and self.last_cell is not None:
                    yield from self._take(cells)  # more of a row partly yielded
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
            self.largest_call = max(self.largest_call, sum(sizes))
            self.sizer.observe(sizes, largest_cell)
            wanted = self.sizer.wants_batch(split, max(sizes, default=0))
            here = (self.resume_row, self.last_cell)
            if wanted is not None and here != self.reopened_at:
                # only once the resume point moved: a reopen re-reads from there, and the
                # same cells must not make the same decision again and again
                log.debug("scan %s: %d cells per Result from now on (was %d)", self.table,
                          wanted, batch)
                if wanted < batch:
                    self.sizer.batch_ceiling = wanted  # no growing back: no flapping
                self.sizer.batch = wanted
                self.reopened_at = here
                return "reopen"

    def _fetch(self, scanner_id: int) -> list[Any] | None:
        """One ``getScannerRows`` call; None when it failed and the scanner must be
        reopened (counted: :meth:`_failed` raises once there were too many)."""
        from hbase_migrate.cluster.thrift2 import TRANSPORT_ERRORS
        from hbase_migrate.cluster.thrift2_idl import hbase2

        try:
            results: list[Any] = self.client._connect().getScannerRows(scanner_id,
                                                                       self.sizer.rows)
        except (hbase2.TIOError, hbase2.TIllegalArgument) as exc:
            lost = lost_scanner(exc.message)
            if lost is None:
                raise self.client.server_error(f"scan {self.table}", exc) from exc
            self._failed(f"the gateway lost the scanner ({lost})", exc)
            return None
        except TRANSPORT_ERRORS as exc:
            self.client.close()
            timed_out = isinstance(exc, TimeoutError)
            self._failed("timed out" if timed_out else f"interrupted ({exc})", exc,
                         shrink=True)
            return None
        self.failures = 0
        self.calls += 1
        return results

    def _take(self, cells: list[Cell]) -> Iterator[list[Cell]]:
        """Add one Result's cells to the row being joined (cells already yielded before a
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

    def _failed(self, what: str, exc: BaseException, shrink: bool = False) -> None:
        self.failures += 1
        sizer = self.sizer
        asked = f"{sizer.rows} Result(s) of at most {sizer.batch} cell(s)"
        if sizer.result_est > 0:
            asked += f", about {format_bytes(sizer.rows * sizer.result_est)}"
        if self.failures > self.client.timeout_retries:
            raise ScanFailedError(self._message(what, asked)) from exc
        smaller = sizer.shrink(self.last_cells_per_result) if shrink else False
        log.warning("%s: scan %s %s at %s: call %s (%d of %d); reopening from there%s",
                    self.client.endpoint, self.table, range_text(self.start, self.stop),
                    self._row(), what, self.failures, self.client.timeout_retries,
                    f", asking {sizer.rows} Result(s) of at most {sizer.batch} cell(s)"
                    if smaller else "")

    def _row(self) -> str:
        """``row R`` (the last row read from, or the start row when nothing was read)."""
        if self.last_cell is not None:
            return f"row {to_string_binary(self.resume_row)}"
        if self.start:
            return f"row {to_string_binary(self.start)} (nothing read yet)"
        return "its first row (nothing read yet)"

    def _message(self, what: str, asked: str) -> str:
        c = self.client
        if what == "timed out":
            fix = (f"raise [gateway] call_timeout (now {c.timeout:g} s) or lower "
                   f"[gateway] max_result_bytes (now {format_bytes(c.max_result_bytes)})")
        elif what.startswith("the gateway lost"):
            fix = ("lower [gateway] max_result_bytes (now "
                   f"{format_bytes(c.max_result_bytes)}) or raise the gateway's "
                   "hbase.client.scanner.timeout.period")
        else:
            fix = "check the gateway and rerun (the copied ranges are kept)"
        return (f"thrift2 gateway {c.endpoint}: scan of table {self.table} range "
                f"{range_text(self.start, self.stop)} failed at {self._row()}: "
                f"{self.failures} calls in a row {what} (the last asked for {asked}); {fix}")


class ScanFailedError(ClusterError):
    """A scan call kept failing (timed out, or the gateway lost the scanner) at the same
    place, even asked for less: the message names the table, the range, the row reached
    and what to change."""
