"""A seeded application workload that writes to a cluster like a real application would.

Operations go through both gateways: Thrift1 (happybase: puts with and without timestamps,
column, family and whole-row deletes, timestamped deletes, counters) and Thrift2 (puts of
several versions with per-cell timestamps, and every delete type with its exact timestamp).
Row keys mix readable and binary keys (``\\x00``, ``\\xff``). The same seed gives the same
sequence of operations, keys and values; timestamps the server assigns differ by run.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from thriftpy2.transport import TTransportException

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, parse_host_port
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.errors import ConfigError
from hbase_migrate.tablename import normalize_table_name
from hbase_migrate.thrift.thrift1 import open_connection
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType

log = logging.getLogger(__name__)

FAMILIES = (FamilyDescriptor(b"d", max_versions=3), FamilyDescriptor(b"m", max_versions=5))
QUALIFIERS = (b"a", b"b", b"c", b"")
SPLITS = (b"g", b"p", b"row-00500")


@dataclass(frozen=True)
class WorkloadSpec:
    table: str
    seed: int = 0
    ops: int | None = 1000
    duration: float | None = None  # seconds; when set, runs until then instead of ``ops``
    rate: float | None = None  # operations per second; None = as fast as possible
    key_space: int = 300
    # client timestamps at the start of the current second: the same cell is often written
    # again at one timestamp with another value (the later write must win everywhere)
    same_second: bool = False


@dataclass
class WorkloadReport:
    ops: Counter[str] = field(default_factory=Counter)
    cells_sent: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"ops": dict(sorted(self.ops.items())), "total_ops": sum(self.ops.values()),
                "cells_sent": self.cells_sent, "seconds": round(self.seconds, 3)}


class Workload:
    """Runs :class:`WorkloadSpec` against one cluster's Thrift1 and Thrift2 gateways."""

    def __init__(self, endpoints: ClusterEndpoints, spec: WorkloadSpec) -> None:
        if endpoints.thrift2 is None:
            raise ConfigError(f"cluster {endpoints.name!r} has no Thrift2 endpoint")
        if normalize_table_name(spec.table).startswith("hbase:"):
            raise ConfigError(f"workload table {spec.table!r}: a system table; the workload "
                              "writes user tables only")
        self.spec = spec
        self.rng = random.Random(spec.seed)
        host, port = parse_host_port(endpoints.thrift, "thrift")
        try:
            self.t1 = open_connection(host=host, port=port, transport=endpoints.transport,
                                      protocol=endpoints.protocol, autoconnect=True,
                                      **endpoints.client_auth)
        except (OSError, TTransportException) as exc:
            detail = getattr(exc, "message", None) or exc
            raise ClusterError(f"cluster {endpoints.name!r}: its thrift gateway {host}:{port} "
                               f"does not answer ({detail}): is the cluster running?") from None
        self.t2 = Thrift2Client(endpoints.thrift2, endpoints.transport, endpoints.protocol,
                                **endpoints.client_auth)
        self.table = self.t1.table(spec.table)
        self.keys = [self._make_key(i) for i in range(spec.key_space)]
        self.report = WorkloadReport()
        self._written: dict[bytes, list[tuple[bytes, bytes, int]]] = {}
        self._ops: list[tuple[str, int, Callable[[], int]]] = [
            ("t1_put", 20, self._t1_put), ("t1_put_ts", 10, self._t1_put_ts),
            ("t1_delete_column", 4, self._t1_delete_column),
            ("t1_delete_family", 2, self._t1_delete_family),
            ("t1_delete_row", 2, self._t1_delete_row),
            ("t1_delete_ts", 3, self._t1_delete_ts), ("t1_increment", 6, self._t1_increment),
            ("t2_put_versions", 20, self._t2_put_versions),
            ("t2_delete_version", 5, self._t2_delete_version),
            ("t2_delete_family_version", 3, self._t2_delete_family_version),
            ("t2_delete_column", 3, self._t2_delete_column),
            ("t2_delete_family", 2, self._t2_delete_family),
        ]

    def close(self) -> None:
        self.t1.close()
        self.t2.close()

    def _make_key(self, i: int) -> bytes:
        if i % 5 == 4:  # binary keys, including the extremes of the byte range
            return bytes([0x00, 0xFF][i % 2:]) + self.rng.randbytes(4) + b"%d" % i
        return b"row-%05d" % (i * 7 % 1000)

    def ensure_table(self) -> None:
        """Create the table (two families, split points) when the cluster lacks it."""
        if not self.t2.table_exists(self.spec.table):
            self.t2.create_table(TableDescriptor(self.spec.table, FAMILIES), SPLITS)

    # --- one operation each; returns the number of cells sent -----------------------------

    def _row(self) -> bytes:
        return self.rng.choice(self.keys)

    def _value(self) -> bytes:
        return self.rng.randbytes(self.rng.randint(0, 24))

    def _column(self) -> tuple[bytes, bytes]:
        return self.rng.choice(FAMILIES).name, self.rng.choice(QUALIFIERS)

    def _ts(self) -> int:
        if self.spec.same_second:
            return int(time.time()) * 1000
        return int(time.time() * 1000) - self.rng.randint(0, 5000)

    def _remember(self, row: bytes, family: bytes, qualifier: bytes, ts: int) -> None:
        self._written.setdefault(row, []).append((family, qualifier, ts))

    def _t1_put(self) -> int:
        data = {b"%s:%s" % self._column(): self._value() for _ in range(self.rng.randint(1, 3))}
        self.table.put(self._row(), data)
        return len(data)

    def _t1_put_ts(self) -> int:
        row, (fam, qual), ts = self._row(), self._column(), self._ts()
        self.table.put(row, {fam + b":" + qual: self._value()}, timestamp=ts)
        self._remember(row, fam, qual, ts)
        return 1

    def _t1_delete_column(self) -> int:
        fam, qual = self._column()
        self.table.delete(self._row(), columns=[fam + b":" + qual])
        return 1

    def _t1_delete_family(self) -> int:
        self.table.delete(self._row(), columns=[self.rng.choice(FAMILIES).name])
        return 1

    def _t1_delete_row(self) -> int:
        self.table.delete(self._row())
        return len(FAMILIES)

    def _t1_delete_ts(self) -> int:
        fam, qual = self._column()
        self.table.delete(self._row(), columns=[fam + b":" + qual], timestamp=self._ts())
        return 1

    def _t1_increment(self) -> int:
        self.table.counter_inc(self._row(), b"m:counter", self.rng.randint(1, 10))
        return 1

    def _t2_put_versions(self) -> int:
        row, (fam, qual) = self._row(), self._column()
        base = self._ts()
        cells = [Cell(row, fam, qual, base - 10 * v, CellType.PUT, self._value())
                 for v in range(self.rng.randint(1, 4))]
        self.t2.put_cells(self.spec.table, cells)
        for c in cells:
            self._remember(row, fam, qual, c.timestamp)
        return len(cells)

    def _pick_written(self) -> tuple[bytes, bytes, bytes, int] | None:
        if not self._written:
            return None
        row = self.rng.choice(sorted(self._written))
        fam, qual, ts = self.rng.choice(self._written[row])
        return row, fam, qual, ts

    def _t2_delete_version(self) -> int:
        picked = self._pick_written()
        if picked is None:
            return self._t2_put_versions()
        row, fam, qual, ts = picked
        self.t2.write_cells(self.spec.table, [Cell(row, fam, qual, ts, CellType.DELETE)])
        return 1

    def _t2_delete_family_version(self) -> int:
        picked = self._pick_written()
        if picked is None:
            return self._t2_put_versions()
        row, fam, _, ts = picked
        cell = Cell(row, fam, b"", ts, CellType.DELETE_FAMILY_VERSION)
        self.t2.write_cells(self.spec.table, [cell])
        return 1

    def _t2_delete_column(self) -> int:
        row, (fam, qual) = self._row(), self._column()
        self.t2.write_cells(self.spec.table,
                             [Cell(row, fam, qual, self._ts(), CellType.DELETE_COLUMN)])
        return 1

    def _t2_delete_family(self) -> int:
        cell = Cell(self._row(), self.rng.choice(FAMILIES).name, b"", self._ts(),
                    CellType.DELETE_FAMILY)
        self.t2.write_cells(self.spec.table, [cell])
        return 1

    # --- the loop --------------------------------------------------------------------------

    def run(self, on_op: Callable[[int], None] | None = None,
            stop: threading.Event | None = None) -> WorkloadReport:
        """Run until ``ops`` operations were sent, ``duration`` seconds passed or ``stop``
        is set."""
        names = [name for name, _, _ in self._ops]
        weights = [weight for _, weight, _ in self._ops]
        funcs = {name: func for name, _, func in self._ops}
        started = time.monotonic()
        done = 0
        while not self._finished(done, started) and not (stop and stop.is_set()):
            name = self.rng.choices(names, weights)[0]
            self.report.cells_sent += funcs[name]()
            self.report.ops[name] += 1
            done += 1
            if on_op is not None:
                on_op(done)
            if self.spec.rate:
                pause = started + done / self.spec.rate - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
        self.report.seconds = time.monotonic() - started
        return self.report

    def _finished(self, done: int, started: float) -> bool:
        if self.spec.duration is not None:
            return time.monotonic() - started >= self.spec.duration
        return done >= (self.spec.ops or 0)


def run_workload(endpoints: ClusterEndpoints, spec: WorkloadSpec) -> WorkloadReport:
    """``spec`` run once on the cluster ``endpoints`` name, its table created when missing."""
    runner = Workload(endpoints, spec)
    try:
        runner.ensure_table()
        return runner.run()
    finally:
        runner.close()
