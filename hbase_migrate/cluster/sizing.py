"""How big a client's calls may be (:class:`ClientSettings`, over HBase's own RPC and the
Thrift2 gateway alike): the byte budget of a scan call and of a put call, the call timeout,
and how often a call that timed out is retried smaller.

HBase's own client bounds a scan call by bytes (``hbase.client.scanner.max.result.size``,
2 MB) on the region server. Thrift2's ``TScan`` has no such field: it has ``caching`` and
``batchSize`` (cells per Result: a wider row comes as several consecutive Results), and
``getScannerRows`` takes a number of Results. So the budget is kept on the client side
(:class:`ScanSizer`): the number of Results asked for per call follows the sizes seen
(starting at one, at most doubling from call to call), and ``batchSize`` follows the largest
cell seen, so one Result holds about a budget of bytes whatever the row's width. A call
then carries about ``max_result_bytes``, or one cell when a single cell is larger (HBase
caps a cell at ``hbase.server.keyvalue.maxsize``, 10 MB by default).

The sizes are learnt from the data, since the gateway cannot be told a byte limit: where the
data changes shape at once (rows of tiny cells, then a row of large ones) one call can
carry more than the budget, and the next calls are sized again (a Result over twice the
budget reopens the scanner with smaller Results). A call the gateway cannot answer within
the call timeout is retried smaller (:meth:`ScanSizer.shrink`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hbase_migrate.wal.hotloops import compiled_module
from hbase_migrate.wal.model import Cell

MiB = 1024 * 1024
DEFAULT_MAX_RESULT_BYTES = 4 * MiB
DEFAULT_MAX_PUT_BYTES = 4 * MiB
DEFAULT_CALL_TIMEOUT = 30.0  # seconds
DEFAULT_TIMEOUT_RETRIES = 4
DEFAULT_REGION_WAIT = 60.0  # seconds a region listing in transition is read again
DEFAULT_MULTIS_PER_SERVER = 2  # HBase's hbase.client.max.perserver.tasks
DEFAULT_MAX_ROWS = 1000  # Results per scan call, at most
MAX_BATCH = 10_000  # cells per Result, at most
CELL_OVERHEAD = 24  # timestamp, type and the Thrift struct's field headers, roughly


def cell_bytes(cell: Cell) -> int:
    """What one cell weighs on the wire (keys, value and a fixed overhead)."""
    return len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value) + \
        CELL_OVERHEAD


def cells_bytes(cells: Sequence[Cell]) -> int:
    """What ``cells`` weigh together (:func:`cell_bytes` each)."""
    loops = compiled_module()
    if loops is not None:
        weight: int | None = loops.cells_weight(cells, CELL_OVERHEAD)
        if weight is not None:
            return weight
    return sum(cell_bytes(c) for c in cells)


def format_bytes(n: float) -> str:
    """``4 MiB``, ``512 KiB``, ``37 B``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", MiB), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} B"


@dataclass(frozen=True)
class ClientSettings:
    """How every client of a migration sizes and times its calls, over Thrift2 or HBase's
    own RPC alike: the range tasks' (copy, plan, checksums, repair) and the replay
    target's. Read from the ``[gateway]`` section, which keeps its name (configs and
    ledger definitions written before hold it) though it sizes native calls too."""

    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES  # per scan call
    max_put_bytes: int = DEFAULT_MAX_PUT_BYTES  # per putMultiple call
    call_timeout: float = DEFAULT_CALL_TIMEOUT  # seconds, per gateway call
    timeout_retries: int = DEFAULT_TIMEOUT_RETRIES  # smaller retries of a timed-out call
    region_wait: float = DEFAULT_REGION_WAIT  # seconds, a region list in transition
    multis_per_server: int = DEFAULT_MULTIS_PER_SERVER  # native RPC: Multis in flight

    def to_dict(self) -> dict[str, int]:
        return {"max_result_bytes": self.max_result_bytes,
                "max_put_bytes": self.max_put_bytes,
                "call_timeout": round(self.call_timeout * 1000),
                "timeout_retries": self.timeout_retries,
                "region_wait": round(self.region_wait * 1000),
                "multis_per_server": self.multis_per_server}


class ScanSizer:
    """The adaptive size of one scan's calls: Results per call (``rows``) and cells per
    Result (``batch``), from the sizes of the Results seen so far.

    It starts at one Result of one cell (nothing is known yet); after each call the largest
    cell and the largest Result seen (decaying by half per call, so a stretch of small rows
    after large ones is read in bigger calls again) give the next sizes: ``batch`` =
    budget / largest cell, ``rows`` = budget / largest Result, ``rows`` at most doubling
    per call. A call that timed out lowers a ceiling on ``rows`` (halved), then, at one
    Result per call, ``batch`` (halved): :meth:`shrink`.
    """

    def __init__(self, max_bytes: int, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if max_bytes < 1:
            raise ValueError(f"the byte budget of a scan call must be >= 1, got {max_bytes}")
        self.max_bytes = max_bytes
        self.max_rows = max(1, max_rows)
        self.rows = 1
        self.batch = 1
        self.ceiling = self.max_rows  # lowered by timeouts
        self.batch_ceiling = MAX_BATCH
        self.cell_est = 0.0  # the largest cell seen (decaying)
        self.result_est = 0.0  # the largest Result seen (decaying)

    def ideal_batch(self) -> int:
        if self.cell_est <= 0:
            return self.batch
        return max(1, min(self.batch_ceiling, int(self.max_bytes // self.cell_est)))

    def observe(self, result_sizes: Sequence[int], max_cell: int) -> None:
        """A call returned Results of these sizes (bytes) whose largest cell was
        ``max_cell`` bytes: choose the next call's ``rows``."""
        if not result_sizes:
            return
        self.cell_est = max(float(max_cell), self.cell_est / 2)
        self.result_est = max(float(max(result_sizes)), self.result_est / 2)
        fit = max(1, int(self.max_bytes // max(self.result_est, 1.0)))
        self.rows = max(1, min(fit, self.rows * 2, self.ceiling))

    def wants_batch(self, split: bool, largest_result: int) -> int | None:
        """A new ``batch`` worth reopening the scanner for, or None: when a row was split
        into Results of ``batch`` cells and ``batch`` could be 4 times larger, or when a
        Result exceeded twice the budget and ``batch`` could be 2 times smaller."""
        ideal = self.ideal_batch()
        if split and ideal >= 4 * self.batch:
            return ideal
        if largest_result > 2 * self.max_bytes and self.batch >= 2 * ideal and self.batch > 1:
            return ideal
        return None

    def shrink(self, cells_per_result: int) -> bool:
        """A call timed out: ask for less next time. False when nothing smaller can be
        asked for (one Result of one cell per call)."""
        if self.rows > 1:
            self.rows = max(1, self.rows // 2)
            self.ceiling = self.rows
            return True
        current = min(self.batch, max(cells_per_result, 1))
        if current > 1:
            self.batch = max(1, current // 2)
            self.batch_ceiling = self.batch
            return True
        return False
