"""The native client's writes (:class:`MultiWriter`): a batch of row mutations, each row's
in order, grouped once into calls (``cluster.waves``: runs of puts and of deletes, each row
once per call); a call is cut into stages of about ``max_multi_bytes``, a stage's rows become
one MutationProto each, grouped per region server and region. Several Multis are in
flight to each server at once (``multis_per_server``, HBase's
``hbase.client.max.perserver.tasks``, 2, across the client's threads): a server's share of
a stage is cut into that many Multis along its regions (a server applies a Multi's regions
one after the other, each with a WAL sync of its own, and Multis side by side; see
``_parts``), every server's first sent before any second, so servers work while the next
Multi is encoded. The actions that fail are retried alone, within the stage, until the
client's retry (``Judge``) gives up loudly.

The ordering rule, which keeps two mutations of one row, column and timestamp (puts, or a put
and a delete, at equal timestamps) in the order given, whatever order replies come back in:
**a row is in at most one Multi in flight**. Within a stage each row is one MutationProto in
exactly one Multi (its retry is sent only after that Multi was answered), and a stage is sent
only once every action of the stage before it was acknowledged; a row's later cells (its
next run, or the rest of a run a stage's end cut) are therefore sent after its earlier ones
were applied. (HBase's AsyncProcess is stricter: one task in flight per region,
``hbase.client.max.perregion.tasks``.)
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import NamedTuple, Protocol

from hbase_migrate.cluster.retry import Kind, classify
from hbase_migrate.cluster.waves import RowCells, row_calls, stages
from hbase_migrate.rpc.codec import encode_cell_block
from hbase_migrate.rpc.connection import PendingCall, Pool
from hbase_migrate.rpc.errors import (
    CALL_FAILURES,
    MALFORMED,
    RegionNotFoundError,
    RemoteError,
    RpcConnectionError,
)
from hbase_migrate.rpc.locate import Region, RegionLocator
from hbase_migrate.rpc.multi import all_done, decode_multi_response, mutate_type, row_multi
from hbase_migrate.wal.model import Cell

MIN_PART_ROWS = 64  # a server's share of a round is cut into Multis of at least this
_Row = tuple[bytes, Sequence[Cell]]  # a row and its cells: one MutationProto
_ROW_KEY = itemgetter(0)  # a _Row's row
_Server = tuple[str, int]
_Batch = dict[bytes, tuple[Region, list[_Row]]]  # one Multi: region name -> its rows
_Failure = tuple[Exception, "Region | None"]


class Judge(Protocol):
    """A call's retry (the client's): after a failed attempt, forget what it proved stale
    and back off, or raise when retrying cannot help or the attempts are spent."""

    def judge(self, exc: Exception, region: Region | None) -> None: ...


class MultiWriter:
    """Cells written as Multis to the servers ``locator`` finds, over ``pool``'s
    connections; ``retry`` (table, call) gives the retry of one stage; at most
    ``multis_per_server`` Multis in flight to one server (across threads), a stage of
    about ``max_multi_bytes``; ``tags``: cells go with their tags."""

    def __init__(self, pool: Pool, locator: RegionLocator, retry: Callable[[str, str], Judge],
                 max_multi_bytes: int, multis_per_server: int, tags: bool) -> None:
        self.pool, self.locator, self.retry = pool, locator, retry
        self.max_multi_bytes, self.multis_per_server = max_multi_bytes, multis_per_server
        self.tags = tags
        self.slots = _Slots(multis_per_server)

    def write(self, table: str, batch: Sequence[RowCells]) -> int:
        """Write a batch of row mutations exactly, each row's in order; the number of Multi
        rounds sent."""
        rounds = 0
        for call in row_calls(batch):
            for stage in stages(call, self.max_multi_bytes):
                rounds += self._multi(table, stage)
        return rounds

    def _multi(self, table: str, pending: list[_Row]) -> int:
        """Send one stage (a row once each, all puts or all deletes): one MutationProto per
        row, Multis to every server (several to each) per round; the rows that failed go
        again after the retry's ``judge``."""
        retry = self.retry(table, "Multi")
        rounds = 0
        while pending:
            batches: dict[_Server, _Batch] = {}
            failed: list[_Row] = []
            failures: list[_Failure] = []
            region: Region | None = None
            for item in pending:
                try:  # rows come in key order: most are in the region of the row before
                    if region is None or not region.contains(item[0]):
                        region = self.locator.locate(table, item[0])
                except (RemoteError, RpcConnectionError, RegionNotFoundError) as exc:
                    region = None
                    failed.append(item)
                    failures.append((exc, None))
                    continue
                batch = batches.setdefault((region.host, region.port), {})
                batch.setdefault(region.name, (region, []))[1].append(item)
            rounds += 1
            rows, errs = self._send_round(batches)
            failed += rows
            failures += errs
            if failures:
                for error, where in failures[1:]:
                    if isinstance(error, RemoteError) and error.kind is Kind.RELOCATE:
                        self.locator.invalidate(table, where)
                final = [f for f in failures if isinstance(f[0], MALFORMED)
                         or (isinstance(f[0], RemoteError) and not f[0].retryable)]
                retry.judge(*(final or failures)[0])  # raises when it is final
            pending = failed
        return rounds

    def _send_round(self, batches: dict[_Server, _Batch]
                    ) -> tuple[list[_Row], list[_Failure]]:
        """Every server's rows as Multis, taking turns between the servers, at most
        ``multis_per_server`` in flight to one server (across the client's threads): the
        rows to send again, and why."""
        failed: list[_Row] = []
        failures: list[_Failure] = []
        in_flight: dict[_Server, deque[_Sent]] = {}

        def settle(sent: _Sent) -> None:
            try:
                rows, errs = self._outcome(sent)
            finally:
                self.slots.release(sent.server)
            failed.extend(rows)
            failures.extend(errs)

        def settle_all() -> None:
            for queue in in_flight.values():
                while queue:
                    settle(queue.popleft())

        try:
            for server, part in _parts(batches, self.multis_per_server):
                mine = in_flight.setdefault(server, deque())
                while not self.slots.take(server, wait=False):
                    if mine:
                        settle(mine.popleft())
                    else:  # every slot is another thread's: wait holding none
                        settle_all()
                        self.slots.take(server, wait=True)
                        break
                mine.append(self._start(server, part))
            settle_all()
        finally:  # an unexpected error: the calls still in flight give their slots back
            for queue in in_flight.values():
                for sent in queue:
                    self.slots.release(sent.server)
        return failed, failures

    def _start(self, server: _Server, batch: _Batch) -> _Sent:
        """Encode and send one Multi, not waiting for its reply. Each region's rows go in
        key order (each row is there once): HBase's server applies a region's puts or
        deletes sorted by row and answers them in that order (HBASE-17924), so only a Multi
        sent sorted gets the reply :func:`all_done` reads without decoding it."""
        for _, rows in batch.values():
            rows.sort(key=_ROW_KEY)  # in place: the batch's lists, retried as sent
        regions = [(name, rows) for name, (_, rows) in batch.items()]
        by_index = [item for _, rows in regions for item in rows]
        block = [cell for _, cells in by_index for cell in cells]
        kind = mutate_type(by_index[0][1])  # a stage's: all the same
        try:
            call = self.pool.get(*server).start("Multi", row_multi(regions, kind),
                                                encode_cell_block(block, self.tags))
        except CALL_FAILURES as exc:
            return _Sent(server, batch, by_index, None, exc)
        return _Sent(server, batch, by_index, call, None)

    def _outcome(self, sent: _Sent) -> tuple[list[_Row], list[_Failure]]:
        """A Multi's reply: the rows to send again, and why."""
        batch, by_index = sent.batch, sent.by_index
        try:
            if sent.call is None:
                assert sent.error is not None
                raise sent.error
            reply = sent.call.result()
            if all_done(reply.response or b"", [len(rows) for _, rows in batch.values()]):
                return [], []  # the usual reply: every action done
            results = decode_multi_response(reply.response or b"")
        except CALL_FAILURES as exc:
            return list(by_index), [(exc, next(iter(batch.values()))[0])]
        failed: list[_Row] = []
        failures: list[_Failure] = []
        for (region, rows), result in zip(batch.values(), results, strict=True):
            if result.exception is not None:
                failed += rows
                failures.append((_remote(result.exception, region), region))
                continue
            for action in result.results:
                if action.exception is not None:
                    failed.append(by_index[action.action])
                    failures.append((_remote(action.exception, region), region))
        return failed, failures


class _Sent(NamedTuple):
    """A Multi sent (``call``) or that could not be (``error``), with what it carries."""

    server: _Server
    batch: _Batch
    by_index: list[_Row]  # the rows by action index
    call: PendingCall | None
    error: Exception | None


class _Slots:
    """The Multis in flight to each server, from every thread of one client: at most
    ``limit`` (HBase's ``hbase.client.max.perserver.tasks``)."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"Multis in flight per server must be >= 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._servers: dict[_Server, threading.BoundedSemaphore] = {}
        self._taken: Counter[_Server] = Counter()
        self.peak = 0  # the most Multis seen in flight to one server at once

    def _of(self, server: _Server) -> threading.BoundedSemaphore:
        with self._lock:
            slots = self._servers.get(server)
            if slots is None:
                slots = self._servers[server] = threading.BoundedSemaphore(self.limit)
            return slots

    def take(self, server: _Server, *, wait: bool) -> bool:
        if not self._of(server).acquire(blocking=wait):
            return False
        with self._lock:
            self._taken[server] += 1
            self.peak = max(self.peak, self._taken[server])
        return True

    def release(self, server: _Server) -> None:
        with self._lock:
            self._taken[server] -= 1
        self._of(server).release()


def _parts(batches: dict[_Server, _Batch], per_server: int) -> list[tuple[_Server, _Batch]]:
    """Each server's rows of a round as up to ``per_server`` Multis, in the order to send
    them: every server's first, then every server's second... A Multi holds whole regions
    where it can: a server applies a Multi's regions one after the other, each with its own
    WAL sync, while Multis in flight run side by side (and their syncs are shared). With
    fewer regions than Multis, the largest region's rows are halved (parts of at least
    ``MIN_PART_ROWS`` rows); with more, regions go to the lightest Multi, largest first."""
    cut = []
    for server, batch in batches.items():
        pieces = [(region, rows) for region, rows in batch.values()]
        while len(pieces) < per_server:
            largest = max(range(len(pieces)), key=lambda i: len(pieces[i][1]))
            region, rows = pieces[largest]
            if len(rows) < 2 * MIN_PART_ROWS:
                break
            half = len(rows) // 2
            pieces[largest:largest + 1] = [(region, rows[:half]), (region, rows[half:])]
        bins: list[tuple[int, _Batch]] = [(0, {}) for _ in range(min(per_server, len(pieces)))]
        for region, rows in sorted(pieces, key=lambda p: -len(p[1])):
            k = min(range(len(bins)), key=lambda i: bins[i][0])
            size, piece = bins[k]
            piece.setdefault(region.name, (region, []))[1].extend(rows)
            bins[k] = (size + len(rows), piece)
        cut.append([(server, piece) for _, piece in bins])
    return [p for turn in itertools.zip_longest(*cut) for p in turn if p is not None]


def _remote(pair: tuple[str, str], region: Region) -> RemoteError:
    """An action's exception (a NameBytesPair carries no do_not_retry flag)."""
    return RemoteError(pair[0], pair[1], do_not_retry=classify(pair[0]) is Kind.NEVER,
                       server=region.server, call=f"Multi, region {region.encoded}")
