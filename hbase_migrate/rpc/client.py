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

Writes: the Multi pipeline of :mod:`hbase_migrate.rpc.writes`.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Self, TypeVar

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.cluster.retry import Kind, Retry
from hbase_migrate.cluster.scanning import pieces_of, resumed_batches
from hbase_migrate.cluster.sizing import DEFAULT_MULTIS_PER_SERVER
from hbase_migrate.cluster.waves import RowCells, rows_of
from hbase_migrate.rpc.codec import KEYVALUE_CODEC, KEYVALUE_CODEC_WITH_TAGS
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
from hbase_migrate.rpc.multi import RegionResult, decode_get_results, get_multi
from hbase_migrate.rpc.registry import RpcRegistry
from hbase_migrate.rpc.scan import (
    Scan,
)
from hbase_migrate.rpc.scanner import NativeScanner, ScanSeam
from hbase_migrate.rpc.writes import MultiWriter
from hbase_migrate.wal.model import Cell

log = logging.getLogger(__name__)

GETS_PER_MULTI = 1_000  # rows asked of a region server in one Multi of Gets
_T = TypeVar("_T")
ROWS_PER_CALL = 0x7FFFFFFF  # as HBase's client: a scan call is bounded by bytes alone
MAX_RESULT_BYTES = 4 << 20
MAX_MULTI_BYTES = 4 << 20
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
                 registry: RpcRegistry | None = None,
                 locator: RegionLocator | None = None) -> None:
        """``registry``: meta found through HBase's RPC registry, not ZooKeeper.
        ``tags``: cells travel with their tags both ways (KeyValueCodecWithTags);
        without, HBase's default KeyValueCodec leaves them out. ``security`` (of the
        cluster named ``cluster``): SASL on ZooKeeper and every RPC connection when
        Kerberos. ``locator``: where regions are found (default: hbase:meta, found through
        ZooKeeper)."""
        self.tags = tags
        self.pool = Pool(user=user, call_timeout=call_timeout,
                         codec=KEYVALUE_CODEC_WITH_TAGS if tags else KEYVALUE_CODEC,
                         security=security, cluster=cluster)
        self.locator: RegionLocator = Locator(quorum, znode_parent, self.pool,
                                              registry=registry) if locator is None else locator
        self.attempts = attempts
        self.max_backoff = max_backoff
        self.rows_per_call = rows_per_call
        self.max_result_bytes = max_result_bytes
        self.max_multi_bytes = max_multi_bytes
        self.multis_per_server = multis_per_server
        self.writes = MultiWriter(self.pool, self.locator,
                                  lambda table, call: _Retry(self, table, call),
                                  max_multi_bytes, multis_per_server, tags)
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

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        """Each of ``rows``' cells (every version kept), in their order: the rows of one
        region server asked in one Multi of Gets (at most ``GETS_PER_MULTI``), the Multis
        of every server sent before the first reply is read (at most ``multis_per_server``
        in flight to each); a Get the server refused (a region moved, split, busy) is
        asked again alone, retried as :meth:`get` is. A row inside the region found for
        the row before it is not looked up again (rows asked in order cost a lookup per
        region)."""
        found: list[list[Cell] | None] = [None] * len(rows)
        by_server: dict[tuple[str, int], dict[bytes, list[tuple[int, bytes]]]] = {}
        region: Region | None = None
        held: list[tuple[int, bytes]] = []
        for i, row in enumerate(rows):
            if region is None or not region.contains(row):
                region = self.locate(table, row)
                held = by_server.setdefault((region.host, region.port), {}).setdefault(
                    region.name, [])
            held.append((i, row))
        each = []
        for server, regions in by_server.items():
            asked = [(name, i, row) for name, kept in regions.items() for i, row in kept]
            each.append([(server, asked[at:at + GETS_PER_MULTI])
                         for at in range(0, len(asked), GETS_PER_MULTI)])
        window = max(1, self.multis_per_server) * len(by_server)
        sent: deque[tuple[list[tuple[int, bytes]], PendingCall | None]] = deque()
        for batch in itertools.chain.from_iterable(itertools.zip_longest(*each)):
            if batch is None:
                continue
            if len(sent) >= window:
                self._got_rows(table, *sent.popleft(), found)
            sent.append(self._ask_rows(*batch))
        while sent:
            self._got_rows(table, *sent.popleft(), found)
        return [cells if cells is not None else [] for cells in found]

    def _ask_rows(self, server: tuple[str, int], asked: Sequence[tuple[bytes, int, bytes]]
                  ) -> tuple[list[tuple[int, bytes]], PendingCall | None]:
        """One Multi of Gets sent to ``server``: ``(region name, index, row)`` each; the
        rows in the order of its actions, and the call (None: it could not be sent)."""
        regions: dict[bytes, list[tuple[int, bytes]]] = {}
        for name, i, row in asked:
            regions.setdefault(name, []).append((i, row))
        order = [(i, row) for kept in regions.values() for i, row in kept]
        try:
            return order, self.pool.get(*server).start("Multi", get_multi(
                [(name, [Get(row, max_versions=ALL_VERSIONS) for _, row in kept])
                 for name, kept in regions.items()]))
        except CALL_FAILURES:
            return order, None  # every row is got alone, with the retry loop

    def _got_rows(self, table: str, order: Sequence[tuple[int, bytes]],
                  call: PendingCall | None, found: list[list[Cell] | None]) -> None:
        """The reply to :meth:`_ask_rows`: the cells of row ``index`` put in
        ``found[index]``; what it could not read is got alone."""
        answers: tuple[RegionResult, ...] = ()
        if call is not None:
            try:
                reply = call.result()
                answers = decode_get_results(reply.response or b"", reply.cell_block)
            except CALL_FAILURES:
                pass  # every row is got alone below, with the retry loop
        read = [False] * len(order)
        for region in answers:
            for result in region.results if region.exception is None else ():
                if result.exception is None and result.action < len(order):
                    found[order[result.action][0]] = list(result.cells)
                    read[result.action] = True
        for (i, row), done in zip(order, read, strict=True):
            if not done:
                found[i] = self.get(table, row)

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"",
             time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS,
             raw: bool = False, columns: Sequence[Column] = ()) -> Iterator[list[Cell]]:
        """The rows of ``[start, stop)`` in order, each a list of its cells (``raw``: delete
        markers and deleted cells too), resumed after the last row handed out when a
        region moves, splits or loses its scanner. A consumer that stops early closes the
        generator (or lets it go): the open scanner is closed on the server. The blocks
        read stay out of the region servers' block caches (the scans are of whole ranges:
        copies, validations)."""
        return pieces_of(self.scan_batches(table, start, stop, time_range, max_versions, raw,
                                           columns))

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"",
                     time_range: TimeRange | None = None, max_versions: int = ALL_VERSIONS,
                     raw: bool = False, columns: Sequence[Column] = ()
                     ) -> Iterator[list[list[Cell]]]:
        """:meth:`scan`'s rows, a reply's at a time."""
        spec = Scan(start, stop, tuple(columns), time_range, max_versions, raw,
                    caching=self.rows_per_call, max_result_size=self.max_result_bytes,
                    cache_blocks=False)
        retry = _Retry(self, table, "Scan")
        seam = ScanSeam(self.locator.locate, self.pool.get, self.rows_per_call)
        scanner = NativeScanner(seam, table, spec)
        return resumed_batches(scanner, start, retry.loop,
                               lambda exc: retry.kind(exc, scanner.region)
                               if isinstance(exc, CALL_FAILURES) else None)

    # --- writes -------------------------------------------------------------------------

    def write(self, table: str, cells: Sequence[Cell]) -> int:
        """Write cells exactly (puts and every delete type, with their timestamps), each
        row's in order; returns the number of Multi rounds sent."""
        return self.writes.write(table, rows_of(cells))

    def write_rows(self, table: str, batch: Sequence[RowCells]) -> int:
        """:meth:`write` of a batch of row mutations, each row's in the order given."""
        return self.writes.write(table, batch)

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
