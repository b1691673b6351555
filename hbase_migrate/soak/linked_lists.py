"""Linked lists that expose any lost write, in the manner of HBase's
IntegrationTestBigLinkedList.

The writer keeps a few lists open at once and appends to them in random turns: each node is
a row under a random 16-byte key (so nodes fall into every region), holding the key of its
predecessor (``l:prev``) and its list's number (``l:list``). A list is closed by giving its
first node the last node as predecessor, so a closed list is a ring in which every node is
referenced exactly once. Closed lists are deleted whole (a row delete per node) and some
deleted lists are written again later, under the same keys at newer timestamps, so that a
copy must apply puts and delete markers in the right order to end equal.

The verifier scans one cluster on its own and counts, as HBase's ``Verify`` does, the nodes
that are defined and referenced (REFERENCED), defined and never referenced (UNREFERENCED:
a lost successor, or a deleted list that came back in part) and the references to nodes that
are not there (UNDEFINED: a lost node). Deleted lists leave no row, so they count nowhere.
A copy is complete when its REFERENCED equals the source's and the other two are 0.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.wal.model import Cell, CellType

log = logging.getLogger(__name__)

FAMILY = b"l"
PREV = b"prev"
LIST = b"list"
KEY_BYTES = 16
REGIONS = 8  # the table is pre-split into this many regions over the key space
SPLITS = tuple(bytes([256 * i // REGIONS]) for i in range(1, REGIONS))


def table_descriptor(table: str) -> TableDescriptor:
    return TableDescriptor(table, (FamilyDescriptor(FAMILY, max_versions=1),))


@dataclass(frozen=True)
class ListSpec:
    table: str
    seed: int = 0
    length: int = 25  # nodes per list
    open_lists: int = 4  # lists appended to at once, in random turns
    rate: float | None = None  # nodes per second; None: as fast as the cluster takes them
    delete_every: int = 6  # about one closed list in this many is deleted
    rewrite_every: int = 2  # about one deleted list in this many is written again
    retry_for: float = 180.0  # seconds a refused write is tried again before the writer fails


@dataclass
class ListCounts:
    """What the writer did, and the nodes it left (its expectation for a verify)."""

    nodes_written: int = 0
    lists_closed: int = 0
    lists_deleted: int = 0
    lists_rewritten: int = 0
    live_nodes: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


class LinkedListWriter:
    """Writes linked lists to ``table`` through one client, from one thread."""

    def __init__(self, client: Client, spec: ListSpec,
                 clock: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        self.client, self.spec, self.clock = client, spec, clock
        self.rng = random.Random(spec.seed)
        self.counts = ListCounts()
        self._open: dict[int, list[bytes]] = {}
        self._closed: dict[int, list[bytes]] = {}
        self._deleted: dict[int, list[bytes]] = {}
        self._next_list = 0
        self._last_ts = 0

    def ensure_table(self) -> None:
        if not self.client.table_exists(self.spec.table):
            self.client.create_table(table_descriptor(self.spec.table), SPLITS)

    def _ts(self) -> int:
        """Strictly increasing: a rewrite is newer than the delete before it."""
        self._last_ts = max(self.clock(), self._last_ts + 1)
        return self._last_ts

    def _node(self, key: bytes, list_id: int, prev: bytes | None, ts: int) -> list[Cell]:
        cells = [Cell(key, FAMILY, LIST, ts, CellType.PUT, b"%d" % list_id)]
        if prev is not None:
            cells.insert(0, Cell(key, FAMILY, PREV, ts, CellType.PUT, prev))
        return cells

    def step(self) -> None:
        """One write: append a node to an open list (closing it when full), or delete or
        rewrite a whole list."""
        roll = self.rng.random()
        if self._closed and roll < 1 / (self.spec.length * self.spec.delete_every):
            self._delete(self.rng.choice(sorted(self._closed)))
        elif self._deleted and roll > 1 - 1 / (self.spec.length * self.spec.delete_every
                                                * self.spec.rewrite_every):
            self._rewrite(self.rng.choice(sorted(self._deleted)))
        else:
            self._append()

    def _append(self) -> None:
        while len(self._open) < self.spec.open_lists:
            self._open[self._next_list] = []
            self._next_list += 1
        list_id = self.rng.choice(sorted(self._open))
        nodes = self._open[list_id]
        key = self.rng.randbytes(KEY_BYTES)
        self.client.put_cells(self.spec.table,
                              self._node(key, list_id, nodes[-1] if nodes else None, self._ts()))
        nodes.append(key)
        self.counts.nodes_written += 1
        self.counts.live_nodes += 1
        if len(nodes) >= self.spec.length:
            self._close(list_id)

    # Each write comes first and the lists change only once it was acknowledged: a write
    # that failed leaves them as they were (its step is done again, puts being idempotent).

    def _close(self, list_id: int) -> None:
        nodes = self._open[list_id]
        self.client.put_cells(self.spec.table, [Cell(nodes[0], FAMILY, PREV, self._ts(),
                                                     CellType.PUT, nodes[-1])])
        self._closed[list_id] = self._open.pop(list_id)
        self.counts.lists_closed += 1

    def _delete(self, list_id: int) -> None:
        nodes = self._closed[list_id]
        ts = self._ts()
        self.client.write_cells(self.spec.table, [
            Cell(key, FAMILY, b"", ts, CellType.DELETE_FAMILY) for key in nodes])
        self._deleted[list_id] = self._closed.pop(list_id)
        self.counts.lists_deleted += 1
        self.counts.live_nodes -= len(nodes)

    def _rewrite(self, list_id: int) -> None:
        nodes = self._deleted[list_id]
        ts = self._ts()
        cells = [c for i, key in enumerate(nodes)
                 for c in self._node(key, list_id, nodes[i - 1], ts)]
        self.client.put_cells(self.spec.table, cells)
        self._closed[list_id] = self._deleted.pop(list_id)
        self.counts.lists_rewritten += 1
        self.counts.nodes_written += len(nodes)
        self.counts.live_nodes += len(nodes)

    def close_open_lists(self) -> None:
        """Close every open list as it stands, so that every live node is referenced."""
        for list_id in sorted(self._open):
            if self._open[list_id]:
                self._retried(partial(self._close, list_id))
            else:
                del self._open[list_id]

    def _retried(self, write: Callable[[], None]) -> None:
        """``write``, again while the cluster refuses it (a region server died and its
        regions are not yet open elsewhere), for at most ``retry_for`` seconds."""
        deadline, pause = time.monotonic() + self.spec.retry_for, 0.5
        while True:
            try:
                write()
                return
            except ClusterError as exc:
                if time.monotonic() > deadline:
                    raise
                log.warning("linked lists: %s; writing again in %.1f s", exc, pause)
                time.sleep(pause)
                pause = min(pause * 2, 8.0)

    def run(self, stop: threading.Event, on_step: Callable[[ListCounts], None] | None = None
            ) -> ListCounts:
        """Write until ``stop`` is set, then close the open lists."""
        started, done = time.monotonic(), 0
        while not stop.is_set():
            self._retried(self.step)
            done += 1
            if on_step is not None:
                on_step(self.counts)
            if self.spec.rate:
                pause = started + done / self.spec.rate - time.monotonic()
                if pause > 0:
                    stop.wait(pause)
        self.close_open_lists()
        return self.counts


@dataclass
class VerifyCounts:
    referenced: int = 0
    unreferenced: int = 0
    undefined: int = 0
    examples: list[str] = field(default_factory=list)  # a few keys behind the faults

    @property
    def ok(self) -> bool:
        return self.unreferenced == 0 and self.undefined == 0

    def to_json(self) -> dict[str, object]:
        return {"REFERENCED": self.referenced, "UNREFERENCED": self.unreferenced,
                "UNDEFINED": self.undefined, "examples": self.examples}

    def lines(self, where: str) -> list[str]:
        """The counts as HBase's verifier prints its counters."""
        return [f"Verify counts of {where}:", f"\tREFERENCED={self.referenced}",
                f"\tUNREFERENCED={self.unreferenced}", f"\tUNDEFINED={self.undefined}",
                *(f"\t{e}" for e in self.examples)]


def verify(client: Client, table: str, examples: int = 5) -> VerifyCounts:
    """Scan ``table`` through ``client`` and count its nodes (module docstring)."""
    defined: set[bytes] = set()
    referenced: dict[bytes, bytes] = {}  # a referenced key -> a node naming it
    for piece in client.scan(table, columns=[(FAMILY, None)], max_versions=1):
        for cell in piece:
            defined.add(cell.row)  # a first node of a list still open has no l:prev yet
            if cell.qualifier == PREV:
                referenced[cell.value] = cell.row
    counts = VerifyCounts()
    counts.referenced = len(defined & referenced.keys())
    unreferenced = sorted(defined - referenced.keys())
    undefined = sorted(referenced.keys() - defined)
    counts.unreferenced, counts.undefined = len(unreferenced), len(undefined)
    counts.examples = [f"UNDEFINED {to_string_binary(k)} (named by "
                       f"{to_string_binary(referenced[k])})" for k in undefined[:examples]]
    counts.examples += [f"UNREFERENCED {to_string_binary(k)}"
                        for k in unreferenced[:examples]]
    return counts
