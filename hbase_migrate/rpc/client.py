"""``NativeClient``: get, scan, write and regions over HBase's own RPC, no gateway.

Failures are judged and retried by the one loop of every transport
(:mod:`hbase_migrate.cluster.retry`), by the remote exception's class: relocate and retry,
back off and retry (capped, doubling), reopen a scanner after its last row, or fail at
once. A call that keeps failing ends in one ``NativeCallError`` line naming table, region,
server and call.

Scans: a :class:`NativeScanner` region after region, resumed after the last row handed out
when a region moves, splits or loses its scanner, as every transport's scan is
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
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from operator import itemgetter
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
    RegionNotFoundError,
    RemoteError,
    RpcConnectionError,
    RpcError,
    RpcTimeoutError,
)
from hbase_migrate.rpc.locate import Locator, Region
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
    ScanResponse,
    decode_scan_response,
    next_scan_request,
    open_scan_request,
    region_done,
    whole_rows,
)
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.hotloops import compiled_module
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import ProtobufError

log = logging.getLogger(__name__)

_T = TypeVar("_T")
ROWS_PER_CALL = 0x7FFFFFFF  # as HBase's client: a scan call is bounded by bytes alone
MAX_RESULT_BYTES = 4 << 20
MAX_MULTI_BYTES = 4 << 20
DEFAULT_LEASE_MS = 60_000  # hbase.client.scanner.timeout.period, when a reply has no ttl
MIN_PART_ROWS = 64  # a server's share of a round is cut into Multis of at least this
_Row = tuple[bytes, list[Cell]]  # a row and its cells: one MutationProto
_Server = tuple[str, int]
_ROW_KEY = itemgetter(0)  # a _Row's row
_Batch = dict[bytes, tuple[Region, list[_Row]]]  # one Multi: region name -> its rows
_Failure = tuple[Exception, "Region | None"]
# what an attempt may end in: judged by _Retry.judge (the last two: a malformed reply)
_MALFORMED = (ProtobufError, CellCorruptError)
_FAILURES = (RemoteError, RpcConnectionError, RegionNotFoundError, *_MALFORMED)


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
        if isinstance(exc, _MALFORMED):  # a reply not understood: never retried
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
        if isinstance(exc, _MALFORMED):
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
                 security: ClusterSecurity | None = None, cluster: str = "") -> None:
        """``tags``: cells travel with their tags both ways (KeyValueCodecWithTags);
        without, HBase's default KeyValueCodec leaves them out. ``security`` (of the
        cluster named ``cluster``): SASL on ZooKeeper and every RPC connection when
        Kerberos."""
        self.tags = tags
        self.pool = Pool(user=user, call_timeout=call_timeout,
                         codec=KEYVALUE_CODEC_WITH_TAGS if tags else KEYVALUE_CODEC,
                         security=security, cluster=cluster)
        self.locator = Locator(quorum, znode_parent, self.pool)
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
            except _FAILURES as exc:
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
        scanner = NativeScanner(self, table, spec)
        return resumed(scanner, start, retry.loop,
                       lambda exc: retry.kind(exc, scanner.region)
                       if isinstance(exc, _FAILURES) else None)

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
                final = [f for f in failures if isinstance(f[0], _MALFORMED)
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
        except _FAILURES as exc:
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
        except _FAILURES as exc:
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
            except _FAILURES as exc:
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



class NativeScanner:
    """A scan's :class:`~hbase_migrate.cluster.scanning.Scanner` over HBase's RPC
    (``AsyncClientScanner`` / ``ClientScanner`` of HBase's client): a scanner in the region
    holding the next row, ``next`` called until the region is done, then on at its end key.
    Rows are handed out whole (the parts of a row the server sends as partial Results are
    joined first), so a scan reopens right after the last row handed out; the region's
    ``mvcc_read_point`` is kept when its scanner is reopened, reset for the next region.

    The next region's scanner is opened once the current region's first rows are handed
    out, and its second call is sent as soon as the open is answered (looked at while the
    current region's reply is awaited): the next region's server reads ahead while this one
    is read and its rows consumed, two regions' scanners and at most four replies at once.
    Only while the current region is younger than half its scanner lease: a next region's
    scanner held longer is closed (before its lease ends), and opened again when its rows
    are wanted."""

    def __init__(self, client: NativeClient, table: str, spec: Scan) -> None:
        self.client = client
        self.table = table
        self.spec = spec
        self.mvcc = 0
        self.region: Region | None = None
        self.current: _RegionScanner | None = None
        # the next region's open, sent early; once answered, its scanner
        self.following: _Opening | _RegionScanner | None = None

    def open(self, start: bytes, after: Cell | None) -> None:
        self._open_at(start, after is None)

    def _open_at(self, row: bytes, inclusive: bool) -> None:
        self.region = None
        following, self.following = self.following, None
        if following is not None and (following.row, inclusive) != (row, True):
            self._drop(following)  # a reopen after a failure: not the open sent early
            following = None
        if isinstance(following, _RegionScanner):
            self.region = following.region
            self.mvcc = following.mvcc or self.mvcc
            self.current = following
            return
        opening = following or self._send_open(row, inclusive)
        self.region = opening.region
        self.current = self._opened(opening)
        self.mvcc = self.current.mvcc or self.mvcc

    def _opened(self, opening: _Opening) -> _RegionScanner:
        """The scanner of an open sent (waits for its answer)."""
        reply = opening.call.result()
        return _RegionScanner(self.client, opening.row, opening.region,
                              decode_scan_response(reply.response or b"", reply.cell_block))

    def _send_open(self, row: bytes, inclusive: bool) -> _Opening:
        region = self.client.locator.locate(self.table, row)
        self.region = region
        scan = self.spec._replace(start=row, include_start_row=inclusive,
                                  mvcc_read_point=self.mvcc)
        call = self.client.pool.get(region.host, region.port).start(
            "Scan", open_scan_request(region.name, scan, self.client.rows_per_call))
        return _Opening(row, region, call)

    def _after(self, current: _RegionScanner) -> bytes | None:
        """Where the scan goes on once ``current`` is done (None: it ends there)."""
        region, stop = current.region, self.spec.stop
        if current.scan_done or not region.end or (stop and region.end >= stop):
            return None
        return region.end

    def next(self) -> list[list[Cell]] | None:
        while self.current is not None:
            self._ask_ahead(self.current.awaited())
            rows = self.current.next()
            if rows is not None:
                self._read_ahead(self.current)
                return rows
            after = self._after(self.current)
            self.current = None
            if after is None:
                return None
            self.mvcc = 0
            self._open_at(after, True)
        return None

    def _read_ahead(self, current: _RegionScanner) -> None:
        """Open the next region early while ``current`` is young; drop a next region's
        scanner held beyond half its lease (a long region: its rows are read when wanted,
        as they were before, not after a lost scanner)."""
        following = self.following
        if isinstance(following, _RegionScanner) and following.held():
            self.following = None
            self._drop(following)
        elif following is None and not current.held():
            self._open_early(current)
        self._ask_ahead(None)

    def _open_early(self, current: _RegionScanner) -> None:
        """Send the next region's open (the prefetch, across regions). One that cannot be
        sent now is left to be sent when its rows are wanted, where a failure is judged as
        any open's."""
        after = self._after(current)
        if after is None:
            return
        mvcc, self.mvcc = self.mvcc, 0
        try:
            self.following = self._send_open(after, True)
        except _FAILURES as exc:
            log.debug("table %s: the open at %r not sent early: %s", self.table, after, exc)
        finally:
            self.mvcc = mvcc
            self.region = current.region

    def _ask_ahead(self, awaited: PendingCall | None) -> None:
        """When the open sent early has been answered, send its scanner's next call; with
        the current region's call ``awaited``, wait for whichever answer comes first. A
        failed open is left to fail again, and be judged, when its rows are wanted."""
        opening = self.following
        if not isinstance(opening, _Opening):
            return
        if awaited is not None and not opening.call.done():
            wait((awaited.future, opening.call.future), awaited.remaining(),
                 FIRST_COMPLETED)
        if not opening.call.done():
            return
        try:
            self.following = following = self._opened(opening)
            following.ask_ahead()
        except (*_FAILURES, RpcError) as exc:
            log.debug("table %s: the open at %r sent early: %s", self.table, opening.row, exc)

    def _drop(self, following: _Opening | _RegionScanner) -> None:
        """Close the scanner an open sent early made (its rows never wanted)."""
        if isinstance(following, _Opening):
            try:
                following = self._opened(following)
            except (*_FAILURES, RpcError) as exc:
                log.debug("table %s: the open at %r sent early: %s", self.table,
                          following.row, exc)
                return
        following.close()

    def close(self) -> None:
        if self.following is not None:
            following, self.following = self.following, None
            self._drop(following)
        if self.current is not None:
            self.current.close()
            self.current = None


class _Opening(NamedTuple):
    """A region's scanner open, sent: the row it starts at, the region, the call."""

    row: bytes
    region: Region
    call: PendingCall


class _RegionScanner:
    """One region's scanner from its first reply on: ``next()`` gives the whole rows of a
    reply (partial Results joined), None once the region is done. ``scan_done``: the
    server said the whole scan is over. ``row``: where it was opened; ``mvcc``: the read
    point of its first reply; ``held()``: whether it is older than half its lease."""

    def __init__(self, client: NativeClient, row: bytes, region: Region,
                 first: ScanResponse) -> None:
        self.client = client
        self.row = row
        self.region = region
        self.resp: ScanResponse | None = first
        self.conn = client.pool.get(region.host, region.port)
        self.scanner = first.scanner_id
        self.mvcc = first.mvcc_read_point
        self.since = time.monotonic()
        self.hold = (first.ttl or DEFAULT_LEASE_MS) / 2000  # seconds
        self.live = not region_done(first)  # else the server closed it already
        self.seq = 0
        self.part: list[Cell] = []
        self.finished = False
        self.scan_done = False
        self.ahead: PendingCall | None = None

    def next(self) -> list[list[Cell]] | None:
        if self.resp is None:
            if self.finished:
                return None
            self.resp = self._next_reply()
        resp, self.resp = self.resp, None
        if region_done(resp):
            self.live, self.finished = False, True
            self.scan_done = resp.more_results is False
        else:
            self.ask_ahead()  # before this reply's rows are handed out: the prefetch
        rows, self.part = whole_rows(resp, self.part)
        return rows

    def held(self) -> bool:
        return time.monotonic() - self.since > self.hold

    def awaited(self) -> PendingCall | None:
        """The call whose reply ``next()`` would wait for, if any."""
        return self.ahead if self.resp is None else None

    def ask_ahead(self) -> None:
        """Send the next call, unless one is in flight or the region is done."""
        if self.ahead is not None or self.finished or (
                self.resp is not None and region_done(self.resp)):
            return
        if self.scanner is None:
            raise RemoteError("java.io.IOException", "a ScanResponse without scanner_id",
                              server=self.region.server, call="Scan")
        self.ahead = self.conn.start("Scan", next_scan_request(
            self.scanner, self.client.rows_per_call, self.seq))

    def _next_reply(self) -> ScanResponse:
        call, self.ahead = self.ahead, None
        assert call is not None, "a region scanner's next reply was never asked for"
        try:
            reply = call.result()
        except RpcError:
            self.live = False  # a failed next leaves nothing to close (or it is gone)
            raise
        self.seq += 1
        return decode_scan_response(reply.response or b"", reply.cell_block)

    def close(self) -> None:
        if self.ahead is not None:  # the consumer stopped with a call in flight
            call, self.ahead = self.ahead, None
            try:
                call.result()
                self.seq += 1
            except RpcError:
                self.live = False
        if self.live and self.scanner is not None and not self.conn.closed:
            self.live = False
            try:
                self.conn.call("Scan", next_scan_request(self.scanner, 0, self.seq,
                                                         close=True))
            except RpcError as exc:
                log.debug("closing scanner %d on %s: %s", self.scanner, self.region.server,
                          exc)
