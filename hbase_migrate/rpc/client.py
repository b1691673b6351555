"""``NativeClient``: get, scan, write and regions over HBase's own RPC, no gateway.

Failures are judged and retried by the one loop of every transport
(:mod:`hbase_migrate.cluster.retry`), by the remote exception's class: relocate and retry,
back off and retry (capped, doubling), reopen a scanner after its last row, or fail at
once. A call that keeps failing ends in one ``NativeCallError`` line naming table, region,
server and call.

Scans: a :class:`~hbase_migrate.rpc.scanner.NativeScanner` region after region, resumed
after the last row handed out when a region moves, splits or loses its scanner, as every
transport's scan is
(:func:`hbase_migrate.cluster.scanning.resumed`): never a cell twice, never one missed. A
call is bounded by bytes alone (``max_result_bytes``, any number of rows, as HBase's client
sizes it), and the next call goes out before the rows of the last are handed out (the scan
prefetch of HBase's async client): at most two replies of a region are held at once.
Across regions too: once a region's first rows are handed out, the next region's scanner is
opened, and its second call is sent as soon as the open is answered, so that its server
reads while this region is read; not in a region read for longer than half the scanner
lease (an open that cannot be sent then is sent when its rows are wanted, and a scan
stopped early closes the scanners it made).

Writes: each row's cells stay in order (``cluster.waves``: runs of puts and of deletes); a
run is cut into stages of about ``max_multi_bytes``, a stage's rows become one MutationProto
each, grouped per region server and region. Several Multis are in flight to each server at
once (``multis_per_server``, HBase's ``hbase.client.max.perserver.tasks``, 2, across the
client's threads): a server's share of a stage is cut into that many Multis along its
regions (a server applies a Multi's regions one after the other, each with a WAL sync of its
own, and Multis side by side; see ``_parts``), every server's first sent before any second,
so servers work while the next Multi is encoded. The actions
that fail are retried alone, within the stage, until ``_Retry.judge`` gives up loudly.

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
import logging
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import NamedTuple, Self, TypeVar

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.cluster.retry import Kind, Retry, classify
from hbase_migrate.cluster.scanning import resumed
from hbase_migrate.cluster.sizing import CELL_OVERHEAD, DEFAULT_MULTIS_PER_SERVER
from hbase_migrate.cluster.waves import waves
from hbase_migrate.rpc.codec import KEYVALUE_CODEC, KEYVALUE_CODEC_WITH_TAGS, encode_cell_block
from hbase_migrate.rpc.connection import DEFAULT_CALL_TIMEOUT, PendingCall, Pool
from hbase_migrate.rpc.errors import (
    CALL_FAILURES,
    MALFORMED,
    RegionNotFoundError,
    RemoteError,
    RpcConnectionError,
    RpcError,
    RpcTimeoutError,
)
from hbase_migrate.rpc.locate import Locator, Region, RegionLocator
from hbase_migrate.rpc.messages import (
    ALL_VERSIONS,
    Column,
    Get,
    TimeRange,
    decode_get_response,
    get_request,
)
from hbase_migrate.rpc.multi import all_done, decode_multi_response, mutate_type, row_multi
from hbase_migrate.rpc.scan import (
    Scan,
)
from hbase_migrate.rpc.scanner import NativeScanner, ScanSeam
from hbase_migrate.wal.hotloops import compiled_module
from hbase_migrate.wal.model import Cell

log = logging.getLogger(__name__)

_T = TypeVar("_T")
ROWS_PER_CALL = 0x7FFFFFFF  # as HBase's client: a scan call is bounded by bytes alone
MAX_RESULT_BYTES = 4 << 20
MAX_MULTI_BYTES = 4 << 20
MIN_PART_ROWS = 64  # a server's share of a round is cut into Multis of at least this
_Row = tuple[bytes, list[Cell]]  # a row and its cells: one MutationProto
_Server = tuple[str, int]
_Batch = dict[bytes, tuple[Region, list[_Row]]]  # one Multi: region name -> its rows
_Failure = tuple[Exception, "Region | None"]
# what an attempt may end in: judged by _Retry.judge (the last two: a malformed reply)


class NativeCallError(RpcError):
    """A call that failed for good: names table, region, server and call."""

    def __init__(self, table: str, region: Region | None, call: str, reason: str) -> None:
        self.table = table
        self.region = region
        where = (f"region {region.encoded} (start {region.start!r}), server {region.server}"
                 if region else "region not located")
        super().__init__(f"table {table}, {where}, call {call}: {reason}")


class NativeUnreachableError(NativeCallError, ServiceUnreachableError):
    """A call whose every attempt failed to reach a server (refused, broken, timed out):
    an outage, which a long run waits out."""

    service = "region server"


class _Retry:
    """A native call's :class:`~hbase_migrate.cluster.retry.Retry`, forgetting first what
    a failure proved stale (a cached region, a broken connection)."""

    def __init__(self, client: NativeClient, table: str, call: str) -> None:
        self.client = client
        self.table = table
        self.call = call
        self.region: Region | None = None
        self.loop = Retry(f"table {table}, call {call}", self._give_up,
                          attempts=client.attempts, max_backoff=client.max_backoff,
                          counter=client.retried)

    def judge(self, exc: Exception, region: Region | None) -> None:
        """After a failed attempt: forget what it proved stale, then back off; raise
        NativeCallError when retrying cannot help or the attempts are spent."""
        self.loop.failed(exc, self.kind(exc, region))

    def kind(self, exc: Exception, region: Region | None) -> Kind:
        """The kind of a failure in ``region`` (None: not located), what it proved stale
        forgotten."""
        self.region = region
        if isinstance(exc, MALFORMED):  # a reply not understood: never retried
            return Kind.NEVER
        if isinstance(exc, RpcConnectionError):  # the server may be gone; a timeout
            kind = Kind.RELOCATE  # leaves the connection to the calls still in flight on it
            if region is not None and region.host and not isinstance(exc, RpcTimeoutError):
                self.client.pool.drop(region.host, region.port)
        else:
            kind = exc.kind if isinstance(exc, RemoteError | RegionNotFoundError) \
                else Kind.NEVER
        if kind is Kind.RELOCATE:
            self.client.locator.invalidate(self.table, self.region)
        return kind

    def _give_up(self, exc: Exception, kind: Kind, tried: str) -> Exception:
        if isinstance(exc, MALFORMED):
            reason = f"malformed reply: {exc}"
        elif kind is Kind.NEVER:
            reason = str(exc)
        else:
            reason = f"gave up after {self.loop.attempt} attempts: {exc}"
        failed = (NativeUnreachableError if isinstance(exc, RpcConnectionError)
                  else NativeCallError)
        return failed(self.table, self.region, self.call, reason)


class NativeClient:
    """A client of one cluster, found through its ZooKeeper ``quorum`` and
    ``znode_parent``; thread-safe (connections and the region cache are shared)."""

    def __init__(self, quorum: str, znode_parent: str = "/hbase", *, user: str | None = None,
                 call_timeout: float = DEFAULT_CALL_TIMEOUT, attempts: int = 12,
                 max_backoff: float = 5.0, rows_per_call: int = ROWS_PER_CALL,
                 max_result_bytes: int = MAX_RESULT_BYTES,
                 max_multi_bytes: int = MAX_MULTI_BYTES,
                 multis_per_server: int = DEFAULT_MULTIS_PER_SERVER, tags: bool = False,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 locator: RegionLocator | None = None) -> None:
        """``tags``: cells travel with their tags both ways (KeyValueCodecWithTags);
        without, HBase's default KeyValueCodec leaves them out. ``security`` (of the
        cluster named ``cluster``): SASL on ZooKeeper and every RPC connection when
        Kerberos. ``locator``: where regions are found (default: hbase:meta, found through
        ZooKeeper)."""
        self.tags = tags
        self.pool = Pool(user=user, call_timeout=call_timeout,
                         codec=KEYVALUE_CODEC_WITH_TAGS if tags else KEYVALUE_CODEC,
                         security=security, cluster=cluster)
        self.locator: RegionLocator = Locator(quorum, znode_parent, self.pool) \
            if locator is None else locator
        self.attempts = attempts
        self.max_backoff = max_backoff
        self.rows_per_call = rows_per_call
        self.max_result_bytes = max_result_bytes
        self.max_multi_bytes = max_multi_bytes
        self.multis_per_server = multis_per_server
        self._slots = _Slots(multis_per_server)
        self.retried: Counter[Kind] = Counter()  # attempts retried, by what was done

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _at_row(self, table: str, row: bytes, call: str, run: Callable[[Region], _T]) -> _T:
        """``run`` on the region holding ``row``, retried as ``_Retry`` decides."""
        retry = _Retry(self, table, call)
        while True:
            region = None
            try:
                region = self.locator.locate(table, row)
                return run(region)
            except CALL_FAILURES as exc:
                retry.judge(exc, region)

    # --- reads --------------------------------------------------------------------------

    def get(self, table: str, row: bytes, columns: Sequence[Column] = (),
            time_range: TimeRange | None = None,
            max_versions: int = ALL_VERSIONS) -> list[Cell]:
        """The row's cells (every version kept, unless ``max_versions``)."""
        get = Get(row, tuple(columns), time_range, max_versions)

        def run(region: Region) -> list[Cell]:
            reply = self.pool.get(region.host, region.port).call(
                "Get", get_request(region.name, get))
            return list(decode_get_response(reply.response or b"", reply.cell_block))

        return self._at_row(table, row, f"Get row {row!r}", run)

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"",
             time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS,
             raw: bool = False, columns: Sequence[Column] = ()) -> Iterator[list[Cell]]:
        """The rows of ``[start, stop)`` in order, each a list of its cells (``raw``: delete
        markers and deleted cells too), resumed after the last row handed out when a
        region moves, splits or loses its scanner. A consumer that stops early closes the
        generator (or lets it go): the open scanner is closed on the server."""
        spec = Scan(start, stop, tuple(columns), time_range, max_versions, raw,
                    caching=self.rows_per_call, max_result_size=self.max_result_bytes)
        retry = _Retry(self, table, "Scan")
        seam = ScanSeam(self.locator.locate, self.pool.get, self.rows_per_call)
        scanner = NativeScanner(seam, table, spec)
        return resumed(scanner, start, retry.loop,
                       lambda exc: retry.kind(exc, scanner.region)
                       if isinstance(exc, CALL_FAILURES) else None)

    # --- writes -------------------------------------------------------------------------

    def write(self, table: str, cells: Sequence[Cell]) -> int:
        """Write cells exactly (puts and every delete type, with their timestamps), each
        row's in order; returns the number of Multi rounds sent."""
        rounds = 0
        for wave in waves(cells):
            for stage in _stages(wave, self.max_multi_bytes):
                rounds += self._multi(table, stage)
        return rounds

    def _multi(self, table: str, pending: list[_Row]) -> int:
        """Send one stage (a row once each, all puts or all deletes): one MutationProto per
        row, Multis to every server (several to each) per round; the rows that failed go
        again after ``_Retry.judge``."""
        retry = _Retry(self, table, "Multi")
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
                self._slots.release(sent.server)
            failed.extend(rows)
            failures.extend(errs)

        def settle_all() -> None:
            for queue in in_flight.values():
                while queue:
                    settle(queue.popleft())

        try:
            for server, part in _parts(batches, self.multis_per_server):
                mine = in_flight.setdefault(server, deque())
                while not self._slots.take(server, wait=False):
                    if mine:
                        settle(mine.popleft())
                    else:  # every slot is another thread's: wait holding none
                        settle_all()
                        self._slots.take(server, wait=True)
                        break
                mine.append(self._start(server, part))
            settle_all()
        finally:  # an unexpected error: the calls still in flight give their slots back
            for queue in in_flight.values():
                for sent in queue:
                    self._slots.release(sent.server)
        return failed, failures

    def _start(self, server: _Server, batch: _Batch) -> _Sent:
        """Encode and send one Multi, not waiting for its reply."""
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

    # --- regions ------------------------------------------------------------------------

    def locate(self, table: str, row: bytes) -> Region:
        """The region holding ``row`` (a row equal to a split key: the region it starts)."""
        return self._at_row(table, row, f"locate row {row!r}", lambda region: region)

    def regions(self, table: str) -> list[Region]:
        """The table's online regions by start key, with their servers (from hbase:meta)."""
        retry = _Retry(self, table, "list regions")
        while True:
            try:
                return self.locator.regions(table)
            except CALL_FAILURES as exc:
                retry.judge(exc, None)


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


def _stages(cells: Sequence[Cell], max_bytes: int) -> Iterator[list[_Row]]:
    """A run's rows (each row's cells in their order: one MutationProto) in stages of
    about ``max_bytes``; a row a stage's end cuts goes on in the next stage (a cell larger
    than that alone in its stage)."""
    loops = compiled_module()
    if loops is not None:
        made: list[list[_Row]] | None = loops.row_stages(
            cells if type(cells) is list else list(cells), max_bytes, CELL_OVERHEAD)
        if made is not None:
            yield from made
            return
    rows: dict[bytes, list[Cell]] = {}
    size = 0
    for cell in cells:
        weight = (len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value)
                  + CELL_OVERHEAD)  # cell_bytes, inline: once per cell written
        if rows and size + weight > max_bytes:
            yield list(rows.items())
            rows, size = {}, 0
        size += weight
        have = rows.get(cell.row)
        if have is None:
            rows[cell.row] = [cell]
        else:
            have.append(cell)
    if rows:
        yield list(rows.items())


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
