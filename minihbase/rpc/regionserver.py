"""``ClientService`` and ``AdminService`` of one embedded region server, over the
cluster's data model (``minihbase.cluster``), as ``RSRpcServices`` answers them:

* every call names a region by its full name; a region this server does not hold gets
  ``NotServingRegionException`` (``RegionMovedException`` naming the new server when it
  moved from here), a row outside the region ``WrongRegionException``;
* ``Scan`` opens a scanner (an id, a lease of ``lease_seconds``), returns up to
  ``number_of_rows`` rows and about ``max_result_size`` bytes per call (a row cut at that
  size is sent in partial Results to a client that handles them), and keeps the scanner's
  life as ``RSRpcServices`` does (branch-2.6): the call that reaches the region's last row
  says so (``more_results_in_region`` false: HBase's region scanner peeks at the next stored
  row) and closes it, as does a close request, the scan's row limit, or a filter done with
  nothing returned (``more_results`` false); a closed scanner's id is remembered for a lease
  period after its last mention (``closedScanners``), and a later call on it is answered
  with a response holding only its id (a ``next_call_seq`` other than the one after its
  last is ``OutOfOrderScannerNextException``); an id never issued, or one whose lease ran
  out, gets ``UnknownScannerException`` (do not retry); a ``next_call_seq`` out of step on
  an open scanner gets ``OutOfOrderScannerNextException`` and leaves it open; a scanner
  whose region closed since (moved, split) gets the region's exception and is forgotten.
  A user table's rows are read as HBase's region scanner
  reads them (``minihbase.rpc.reads``: filters, versions, raw, time ranges, store limits),
  in Results of ``batch`` cells, reversed or not, up to the scan's row limit;
* ``Multi``: each RegionAction's mutations are applied together (one WAL edit per region);
  an atomic one (RowMutations) all or none, a failure being the whole region action's,
  a conditional one (checkAndMutate) only if its condition holds;
  an action that cannot be (no such family, a row outside the region) fails alone, with its
  exception in its ResultOrException; its Gets (a client's batch of gets) are read after,
  and its increments and appends applied one by one (``minihbase.rpc.deltas``), each
  answered with its cells; the answers come in HBase's order (a run of puts and deletes
  sorted by row); ``Mutate`` applies one put, delete, increment or append;
  mutations come with their cells in the cell block or inline (``column_value``), read as
  HBase's ``ProtobufUtil`` reads them (``hbase_migrate.rpc.multi``);
* a client that named no codec gets the cells of its results inline;
* the server holding ``hbase:meta`` answers Get and Scan on it (``minihbase.rpc.meta``);
* what would change HBase's answer but is not served (a filter or comparator not served,
  a MultiRequest's own condition) is refused by name, never ignored.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from hbase_migrate.rpc.codec import encode_cell_block
from hbase_migrate.rpc.conditions import decode_condition, decode_mutate_condition
from hbase_migrate.rpc.locate import encoded_name
from hbase_migrate.rpc.messages import (
    Column,
    Get,
    Result,
    decode_get_request,
    decode_region_specifier,
    exists_response,
    get_response,
)
from hbase_migrate.rpc.multi import (
    APPEND,
    DELETE,
    INCREMENT,
    PUT,
    ActionResult,
    GetAction,
    MutationAction,
    RegionActions,
    RegionResult,
    decode_mutate_request,
    decode_region_actions,
    multi_response,
    mutate_response,
)
from hbase_migrate.rpc.region_admin import (
    decode_compact_request,
    decode_flush_request,
    flush_response,
    online_regions_response,
    region_info_response,
    roll_response,
)
from hbase_migrate.rpc.scan import Scan, ScanResponse, decode_scan_request, scan_response
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import Message, encode_varint
from minihbase.cluster import Cluster
from minihbase.model import (
    ClientCell,
    ColumnSelection,
    MiniHBaseError,
    Mutation,
)
from minihbase.regionserver import RegionServers
from minihbase.rpc.checkandmutate import check_and_mutate
from minihbase.rpc.deltas import apply_delta
from minihbase.rpc.listener import (
    DO_NOT_RETRY,
    CallContext,
    H,
    Handler,
    ServiceError,
    service_error,
)
from minihbase.rpc.meta import is_meta, meta_rows, meta_scan
from minihbase.rpc.reads import FilterDone, ReadSpec, RowReader, chunks, read_spec, stored_rows
from minihbase.rpc.refused import check_multi

DEFAULT_RESULT_BYTES = 2 << 20  # hbase.client.scanner.max.result.size
LEASE_SECONDS = 60.0  # hbase.client.scanner.timeout.period
_ids = itertools.count(1)


def _size(cell: Cell) -> int:
    """A cell's size as a scan's byte limit counts it (its KeyValue's length)."""
    return len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value) + 20


def columns_of(columns: tuple[Column, ...]) -> ColumnSelection:
    selection = ColumnSelection()
    for column in columns:
        if column.qualifiers:
            for qualifier in column.qualifiers:
                selection.add_column(column.family, qualifier)
        else:
            selection.add_family(column.family)
    return selection


# A Result's cells, whether more cells of its row follow, and whether anything follows it
# in its region (HBase's ``moreRows``: false once the region scanner's peek finds no row)
Piece = tuple[list[Cell], bool, bool]


@dataclass
class _Scanner:
    """An open scanner: its rows still to send, the cells of a row cut by the byte limit."""

    region: bytes
    rows: Iterator[Piece]
    expires: float
    limit: int  # bytes per call (the scan's max_result_size)
    row_limit: int = 0  # rows of the whole scan still wanted (limit_of_rows), 0: no limit
    whole_rows: bool = False  # a filter of whole rows: no partial rows at the byte limit
    reader: RowReader | None = None  # a user table's: its filter says whether it is done
    next_seq: int = 0  # the next_call_seq the next call brings (counted when sent)
    pending: list[Cell] = field(default_factory=list)
    pending_more: bool = False
    pending_follows: bool = False
    complete: int = 0  # whole rows sent
    done: bool = False  # no row left in the region
    limit_reached: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def filter_done(self) -> bool:
        """HBase's ``isFilterDone``: the scan's filter says nothing more will pass."""
        return self.reader is not None and self.reader.done()


@dataclass
class _Closed:
    """A scanner closed by its region's end, its limit or a close request (``closedScanners``
    of ``RSRpcServices``): the ``next_call_seq`` count it closed at, kept until ``expires``."""

    calls: int
    expires: float


class RegionServerRpc:
    """The calls of region server ``slot`` of ``servers``; ``holds_meta()`` says whether it
    serves ``hbase:meta`` now."""

    def __init__(self, cluster: Cluster, servers: RegionServers, slot: int,
                 holds_meta: Callable[[], bool], lease_seconds: float = LEASE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.cluster = cluster
        self.servers = servers
        self.slot = slot
        self.holds_meta = holds_meta
        self.lease_seconds = lease_seconds
        self.clock = clock  # the leases' time
        self._scanners: dict[int, _Scanner] = {}
        self._closed: dict[int, _Closed] = {}
        self._lock = threading.Lock()

    def services(self) -> dict[str, dict[str, Handler]]:
        return {"ClientService": {"Get": self.get, "Scan": self.scan, "Multi": self.multi,
                                  "Mutate": self.mutate},
                "AdminService": {"GetRegionInfo": self.region_info,
                                 "GetOnlineRegion": self.online_regions,
                                 "FlushRegion": self.flush, "CompactRegion": self.compact,
                                 "RollWALWriter": self.roll}}

    @property
    def server(self) -> str:
        return str(self.servers.servers[self.slot].name)

    # --- regions ------------------------------------------------------------------------

    def _region(self, name: bytes) -> tuple[str, bytes, bytes]:
        """``(table, start, end)`` of a region this server holds, or the exception HBase
        raises for one it does not."""
        if is_meta(name) and self.holds_meta():
            return "hbase:meta", b"", b""
        region = self.servers.hosted(self.slot).get(name)
        if region is not None:
            return region.table, region.start_key, region.end_key
        moved = self.servers.moved_from(self.slot, encoded_name(name))
        if moved is not None:
            raise ServiceError(H + "exceptions.RegionMovedException",
                               f"Region moved to: hostname={moved.host} port={moved.port} "
                               f"startCode={moved.start_code}. As of locationSeqNum=0.",
                               hostname=moved.host, port=moved.port)
        raise ServiceError(H + "NotServingRegionException",
                           f"{name.decode('latin-1')} is not online on {self.server}")

    @staticmethod
    def _check_row(table: str, start: bytes, end: bytes, row: bytes, what: str) -> None:
        if row < start or (end and row >= end):
            raise ServiceError(H + "regionserver.WrongRegionException",
                               f"Requested row out of range for {what} on HRegion {table},"
                               f"{start!r}: row={row!r}", do_not_retry=True)

    # --- Get ------------------------------------------------------------------------------

    def get(self, ctx: CallContext) -> tuple[bytes, bytes]:
        name, get = decode_get_request(ctx.call.request)
        region = self._region(name)
        cells = self._read(*region, get,
                           Message(ctx.call.request, "GetRequest").req_bytes(2, "get"))
        if get.existence_only:
            return exists_response(bool(cells)), b""
        response, block = get_response(cells, ctx.in_block)
        return response, (encode_cell_block(cells, True) if block and ctx.tags else block)

    def _read(self, table: str, start: bytes, end: bytes, get: Get, message: bytes,
              gets: _Gets | None = None) -> list[Cell]:
        """The cells a Get (``message`` as sent) reads of a region this server holds: its
        row's stored cells (those ``gets`` read for a Multi's Gets, else read now) read as
        a region scanner reads one row."""
        if table == "hbase:meta":
            rows = meta_scan([r for r in meta_rows(self.cluster, self.servers)
                              if r[0] == get.row], b"", b"", True, False,
                             columns_of(get.columns))
            return rows[0] if rows else []
        self._check_row(table, start, end, get.row, "Get")
        reader, name = self._reader(table, _Gets.spec(gets, get.row, message))
        stored = gets.stored.get(get.row, []) if gets is not None and gets.stored is not None \
            else self.cluster.store.row_cells(name, get.row)
        try:
            return reader.read(stored)
        except FilterDone:  # the filter ends the region's scan before the row
            return []

    def _reader(self, table: str, spec: ReadSpec) -> tuple[RowReader, str]:
        info, now = self.cluster.readable(table, spec.columns.families)
        return RowReader(spec, {f.name: f for f in info.descriptor.families}, now), info.name

    def _user_rows(self, table: str, reader: RowReader, start: bytes, stop: bytes,
                   reversed_: bool) -> Iterator[tuple[list[Cell], bool]]:
        """The rows of ``[start, stop)`` of a user table a Get or Scan returns, as HBase's
        region scanner reads them (``minihbase.rpc.reads``), each with whether more rows
        follow: a later stored row in the families read (whatever the filter will make of
        it, as ``RegionScannerImpl`` peeks at its store heap's next cell) and the filter not
        done. Rows the filter leaves empty are not returned; when they are the last, the
        scan ends without a row."""
        stored = (r for r in stored_rows(self.cluster.store, table, start, stop, reversed_)
                  if reader.wanted(r))
        following = next(stored, None)
        while following is not None:
            row, following = following, next(stored, None)
            try:
                cells = reader.read(row)
            except FilterDone:
                return
            more = following is not None and not reader.done()
            if cells:
                yield cells, more
            if not more:
                return

    # --- Scan -----------------------------------------------------------------------------

    def scan(self, ctx: CallContext) -> tuple[bytes, bytes]:
        req = decode_scan_request(ctx.call.request)
        message = Message(ctx.call.request, "ScanRequest")
        self._expire()
        if req.scanner_id is None:
            if req.region is None or req.scan is None:
                raise ServiceError(DO_NOT_RETRY, "a ScanRequest needs a scanner id, or a "
                                   "region and a scan", do_not_retry=True)
            scanner_id, scanner = self._open(req.region, req.scan, ctx.call.request)
        else:
            scanner_id, found = req.scanner_id, self._scanner(req.scanner_id,
                                                              req.next_call_seq)
            if found is None:  # closed here a while ago: nothing more, and no error
                return scan_response(ScanResponse(scanner_id), ctx.in_block)
            scanner = found
        rows = message.opt_int(4)
        if rows is None:  # HBase's default: one row, none for a close
            rows = 0 if req.close else 1
        with scanner.lock:  # one call at a time per scanner
            if req.scanner_id is not None:
                self._check_region(scanner_id, scanner)
            self._check_seq(scanner_id, scanner, req.next_call_seq)
            scanner.expires = self.clock() + self.lease_seconds
            if req.renew:  # the lease renewed, nothing read (an opening one: its lease said)
                opening = req.scanner_id is None
                ttl = int(self.lease_seconds * 1000) if opening else None
                return scan_response(ScanResponse(scanner_id, ttl=ttl), ctx.in_block)
            try:
                results, partial = self._next(scanner, rows, bool(message.opt_int(7)))
            except (ServiceError, MiniHBaseError):
                self._close(scanner_id, remember=False)  # as HBase, closed on a failure
                raise
            more_in_region = rows == 0 or not (scanner.done and not scanner.pending)
            more_results = not (scanner.limit_reached or (scanner.filter_done() and not results))
        if req.close or not more_results or not more_in_region:
            self._close(scanner_id)
        resp = ScanResponse(scanner_id, tuple(tuple(r) for r in results), tuple(partial),
                            more_results=more_results, more_results_in_region=more_in_region,
                            ttl=int(self.lease_seconds * 1000))
        response, block = scan_response(resp, ctx.in_block)
        if block and ctx.tags:
            block = encode_cell_block((c for r in results for c in r), True)
        return response, block

    def _scanner(self, scanner_id: int, seq: int | None) -> _Scanner | None:
        """The open scanner ``scanner_id``, or None for one closed here within a lease
        period (its memory renewed by the call); one never issued, or gone with its lease or
        its region, is ``UnknownScannerException``."""
        with self._lock:
            found = self._scanners.get(scanner_id)
            closed = self._closed.get(scanner_id) if found is None else None
            if closed is not None:
                closed.expires = self.clock() + self.lease_seconds
        if found is not None:
            return found
        if closed is not None:
            if seq is not None and seq != closed.calls + 1:  # a retried call, out of step
                raise ServiceError(H + "exceptions.OutOfOrderScannerNextException",
                                   f"closed scanner {scanner_id} takes nextCallSeq "
                                   f"{closed.calls + 1}, the client sent {seq} "
                                   f"({self.server})", do_not_retry=True)
            return None
        raise ServiceError(H + "UnknownScannerException",
                           f"Unknown scanner '{scanner_id}': an id this server never issued, "
                           "or a scanner whose lease ran out, whose region moved or whose "
                           f"server restarted ({self.server})", do_not_retry=True)

    def _check_region(self, scanner_id: int, scanner: _Scanner) -> None:
        """A next call goes on only in a region still here: else the scanner went with it."""
        try:
            self._region(scanner.region)
        except ServiceError:
            self._close(scanner_id, remember=False)
            raise

    def _check_seq(self, scanner_id: int, scanner: _Scanner, seq: int | None) -> None:
        """A call that brings a ``next_call_seq`` must be in step with the scanner's count,
        which it then advances; one out of step is refused and the scanner stays open."""
        if seq is None:
            return
        if seq != scanner.next_seq:
            raise ServiceError(H + "exceptions.OutOfOrderScannerNextException",
                               f"Expected nextCallSeq: {scanner.next_seq} But the nextCallSeq "
                               f"got from client: {seq} (scanner {scanner_id} of "
                               f"{scanner.region.decode('latin-1')})", do_not_retry=True)
        scanner.next_seq += 1

    def _open(self, name: bytes, scan: Scan, request: bytes) -> tuple[int, _Scanner]:
        table, start, end = self._region(name)
        whole_rows = False
        reader: RowReader | None = None
        if table == "hbase:meta":
            found = meta_scan(meta_rows(self.cluster, self.servers), scan.start, scan.stop,
                              scan.include_start_row, scan.reversed, columns_of(scan.columns),
                              scan.include_stop_row)
            rows: Iterator[Piece] = ((r, False, i < len(found) - 1)
                                     for i, r in enumerate(found))
        else:
            m = Message(request, "ScanRequest")
            spec = read_spec(m.req_bytes(2, "scan"), "Scan", scan.raw, scan.reversed)
            whole_rows = spec.filter is not None and spec.filter.has_filter_row()
            if whole_rows and spec.batch:
                raise ServiceError(H + "filter.IncompatibleFilterException", "Filter whose "
                                   "hasFilterRow() returns true is incompatible with scans "
                                   "that must stop mid-row because of a limit",
                                   do_not_retry=True)
            low, high = _bounds(scan)
            low = max(low, start)
            high = min(high, end) if high and end else (high or end)
            reader, stored = self._reader(table, spec)
            rows = _pieces(self._user_rows(stored, reader, low, high, scan.reversed),
                           spec.batch)
        scanner_id = next(_ids)
        scanner = _Scanner(name, rows, self.clock() + self.lease_seconds,
                           scan.max_result_size or DEFAULT_RESULT_BYTES,
                           Message(request, "ScanRequest").opt_int(11) or 0, whole_rows,
                           reader)
        with self._lock:
            self._scanners[scanner_id] = scanner
        return scanner_id, scanner

    @staticmethod
    def _next(scanner: _Scanner, rows: int, partials: bool
              ) -> tuple[list[list[Cell]], list[bool]]:
        """Up to ``rows`` rows and about the scanner's byte limit: whole rows, or with
        ``partials`` the part of a row that reaches the limit (the rest kept for the next
        call); stops at the region's last row or the scan's row limit. The caller holds the
        scanner's lock."""
        results: list[list[Cell]] = []
        flags: list[bool] = []
        size = count = 0
        partials = partials and not scanner.whole_rows
        while (count < rows and size < scanner.limit and not scanner.done
               and not scanner.limit_reached):
            if scanner.pending:
                cells, scanner.pending = scanner.pending, []
                more, follows = scanner.pending_more, scanner.pending_follows
            else:
                item = next(scanner.rows, None)
                if item is None:
                    scanner.done = True
                    break
                cells, more, follows = item
            taken = 0
            for cell in cells:
                taken += 1
                size += _size(cell)
                if partials and size >= scanner.limit:
                    break
            results.append(cells[:taken])
            scanner.pending, scanner.pending_more = cells[taken:], more
            scanner.pending_follows = follows
            flags.append(bool(scanner.pending) or more)
            if not scanner.pending:
                count += 1
                scanner.done = not follows
                if not more:
                    scanner.complete += 1
                    if scanner.row_limit and scanner.complete >= scanner.row_limit:
                        scanner.limit_reached = True
        return results, flags

    def _close(self, scanner_id: int, remember: bool = True) -> None:
        """Forget an open scanner; ``remember``: a call on its id is answered for a lease
        period more (not after a failure, as HBase)."""
        with self._lock:
            scanner = self._scanners.pop(scanner_id, None)
            if scanner is not None and remember:
                self._closed[scanner_id] = _Closed(scanner.next_seq,
                                                   self.clock() + self.lease_seconds)

    def _expire(self) -> None:
        """Drop the scanners whose lease ran out (HBase's lease monitor: not remembered as
        closed) and the closed ones not asked about for a lease period."""
        now = self.clock()
        with self._lock:
            for scanner_id in [i for i, s in self._scanners.items() if s.expires < now]:
                del self._scanners[scanner_id]
            for scanner_id in [i for i, c in self._closed.items() if c.expires < now]:
                del self._closed[scanner_id]

    @property
    def open_scanners(self) -> int:
        with self._lock:
            return len(self._scanners)

    # --- writes ---------------------------------------------------------------------------

    def multi(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """Each RegionAction's actions in HBase's order: a Get read where met, a run of
        puts and deletes applied together where it ends, so a Get does not see the puts of
        its RegionAction's open run (``RSRpcServices.doNonAtomicRegionMutation``); answered
        in HBase's order (:func:`answer_order`; Gets' cells in the cell block)."""
        check_multi(ctx.call.request)
        results = []
        for region_actions in decode_region_actions(ctx.call.request, ctx.call.cell_block):
            try:
                table, start, end = self._region(region_actions.region)
            except ServiceError as exc:
                results.append(RegionResult(exception=(exc.class_name, exc.trace)))
                continue
            actions = region_actions.actions
            if region_actions.condition is not None:
                results.append(self._conditional(table, start, end, region_actions))
                continue
            if region_actions.atomic:
                results.append(self._atomic(table, start, end, actions))
                continue
            done: dict[int, ActionResult] = {}
            gets = self._gets(table, actions)
            run: list[MutationAction] = []
            for action in actions:  # as HBase: a Get read where met, a run of puts and
                # deletes applied as one batch where it ends (an increment, an append, the end)
                if isinstance(action, MutationAction) and action.kind in (PUT, DELETE):
                    run.append(action)
                    continue
                if isinstance(action, MutationAction) and run:
                    done.update((r.action, r) for r in self._apply(table, start, end, run))
                    run = []
                try:
                    done[action.action] = ActionResult(action.action, cells=tuple(
                        self._read(table, start, end, action.get, action.message, gets)
                        if isinstance(action, GetAction)
                        else self._delta(table, start, end, action)))
                except (ServiceError, MiniHBaseError) as exc:
                    done[action.action] = ActionResult(action.action, _pair(service_error(exc)))
            done.update((r.action, r) for r in self._apply(table, start, end, run) if run)
            results.append(RegionResult(tuple(done[a.action]
                                              for a in answer_order(actions))))
        cells = [c for region in results if not region.cells_inline
                 for r in region.results for c in r.cells]
        block = encode_cell_block(cells, ctx.tags) if cells and ctx.in_block else b""
        return multi_response(results, ctx.in_block), block

    def _gets(self, table: str, actions: Sequence[MutationAction | GetAction]) -> _Gets:
        """What the Gets of a RegionAction share: their rows' stored cells read in one go,
        before any of its puts and deletes is applied, when it holds no increment or append
        (which ends a run: each Get then reads its row where met), and their read specs."""
        rows = [a.get.row for a in actions if isinstance(a, GetAction)]
        if len(rows) < 2 or table == "hbase:meta" or any(
                isinstance(a, MutationAction) and a.kind in (INCREMENT, APPEND)
                for a in actions):
            return _Gets()
        try:
            return _Gets(self.cluster.store.rows_cells(self.cluster.table(table).name, rows))
        except MiniHBaseError:  # each Get raises as it would alone
            return _Gets()

    def _apply(self, table: str, start: bytes, end: bytes,
               actions: list[MutationAction]) -> tuple[ActionResult, ...]:
        """Apply a region's mutations together; those that cannot be applied fail alone."""
        outcome: dict[int, ServiceError | None] = {}
        good: list[tuple[int, Mutation]] = []
        families = {f.name for f in self.cluster.table(table).descriptor.families}
        for action in actions:
            try:
                self._check_action(table, start, end, families, action)
                good.append((action.action, _mutation(action)))
            except (ServiceError, MiniHBaseError) as exc:
                outcome[action.action] = service_error(exc)
        try:
            self.cluster.mutate(table, [m for _, m in good])
        except MiniHBaseError:  # one of them is refused: each alone, to say which
            for index, one in good:
                try:
                    self.cluster.mutate(table, [one])
                except MiniHBaseError as exc:
                    outcome[index] = service_error(exc)
        return tuple(ActionResult(a.action, None if outcome.get(a.action) is None else
                                  _pair(outcome[a.action])) for a in actions)

    def _check_action(self, table: str, start: bytes, end: bytes, families: set[bytes],
                      action: MutationAction) -> None:
        """A mutation's row is in the region and its families in the table."""
        self._check_row(table, start, end, action.row, "Multi")
        for cell in action.cells:
            if cell.family not in families:
                raise ServiceError(H + "regionserver.NoSuchColumnFamilyException",
                                   f"Column family {cell.family.decode('latin-1')} does not "
                                   f"exist in region of table {table}", do_not_retry=True)

    def _atomic(self, table: str, start: bytes, end: bytes,
                actions: tuple[MutationAction | GetAction, ...]) -> RegionResult:
        """An atomic RegionAction (RowMutations, mutateRow): every mutation or none, as
        HBase's atomic batch; a failure is the region action's; the cells increments and
        appends return are merged into the first result, the others empty."""
        try:
            for action in actions:
                if isinstance(action, GetAction):
                    raise ServiceError(DO_NOT_RETRY, "Atomic put and/or delete only, not a "
                                       f"Get={action.get.row!r}", do_not_retry=True)
            mutations = [a for a in actions if isinstance(a, MutationAction)]
            families = {f.name for f in self.cluster.table(table).descriptor.families}
            for action in mutations:
                self._check_action(table, start, end, families, action)
            plain = [_mutation(a) for a in mutations if a.kind not in (INCREMENT, APPEND)]
            if plain:
                self.cluster.mutate(table, plain)
            cells = tuple(c for a in mutations if a.kind in (INCREMENT, APPEND)
                          for c in self._delta(table, start, end, a))
        except (ServiceError, MiniHBaseError) as exc:
            error = service_error(exc)
            return RegionResult(exception=(error.class_name, error.trace))
        return RegionResult(tuple(ActionResult(i, cells=cells if i == 0 else ())
                                  for i in range(len(actions))), processed=True)

    def _conditional(self, table: str, start: bytes, end: bytes,
                     region_actions: RegionActions) -> RegionResult:
        """A conditional RegionAction (checkAndMutate of a Multi, a RowMutations' too):
        processed says whether the condition held; every action answered by its position,
        the first with the cells increments and appends returned; a failure is the region
        action's."""
        assert region_actions.condition is not None
        actions = region_actions.actions
        try:
            mutations = []
            for action in actions:
                if isinstance(action, GetAction):
                    raise ServiceError(DO_NOT_RETRY, "Atomic put and/or delete only, not a "
                                       f"Get={action.get.row!r}", do_not_retry=True)
                self._check_row(table, start, end, action.row, "Multi")
                mutations.append(action)
            held, cells = check_and_mutate(
                self.cluster, table, decode_condition(region_actions.condition), mutations,
                lambda plain: self.cluster.mutate(table, [_mutation(a) for a in plain]))
        except (ServiceError, MiniHBaseError) as exc:
            error = service_error(exc)
            return RegionResult(exception=(error.class_name, error.trace))
        return RegionResult(tuple(ActionResult(i, cells=tuple(cells) if i == 0 else (),
                                               bare=not (i == 0 and cells))
                                  for i in range(len(actions))), processed=held,
                            cells_inline=True)

    def _delta(self, table: str, start: bytes, end: bytes, action: MutationAction
               ) -> list[Cell]:
        """Apply an increment or append: its new cells, when it returns them."""
        self._check_row(table, start, end, action.row, "Multi")
        cells = apply_delta(self.cluster, table, action)
        return cells if action.return_results else []

    def mutate(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """A put or delete (processed), or an increment or append answered with its new
        cells (in the cell block when the client named a codec), as ``RSRpcServices``."""
        name, action = decode_mutate_request(ctx.call.request, ctx.call.cell_block,
                                             conditional=True)
        table, start, end = self._region(name)
        self._check_row(table, start, end, action.row, "Mutate")
        condition = decode_mutate_condition(ctx.call.request)
        if condition is not None:  # checkAndMutate: processed is whether it held
            held, cells = check_and_mutate(
                self.cluster, table, condition, [action],
                lambda plain: self.cluster.mutate(table, [_mutation(a) for a in plain]))
            result = (None if action.kind not in (INCREMENT, APPEND) or not held
                      else Result(cell_count=len(cells)) if ctx.in_block else Result(tuple(cells)))
            return (mutate_response(result, held),
                    encode_cell_block(cells, ctx.tags) if cells and ctx.in_block else b"")
        if action.kind in (INCREMENT, APPEND):
            cells = self._delta(table, start, end, action)
            if ctx.in_block:
                return (mutate_response(Result(cell_count=len(cells)), None),
                        encode_cell_block(cells, ctx.tags) if cells else b"")
            return mutate_response(Result(tuple(cells)), None), b""
        self.cluster.mutate(table, [_mutation(action)])
        return mutate_response(), b""

    # --- AdminService -----------------------------------------------------------------

    def _named(self, request: bytes, what: str) -> tuple[str, bytes, bytes, bytes]:
        region = Message(request, what).req_bytes(1, "region")
        name = decode_region_specifier(region)[1]
        return (*self._region(name), name)

    def region_info(self, ctx: CallContext) -> tuple[bytes, bytes]:
        table, start, end, name = self._named(ctx.call.request, "GetRegionInfoRequest")
        region_id = int(name.split(b",")[-1].split(b".")[0]) if table != "hbase:meta" else 1
        return region_info_response(table, start, end, region_id), b""

    def online_regions(self, ctx: CallContext) -> tuple[bytes, bytes]:
        regions = sorted(self.servers.hosted(self.slot).values(),
                         key=lambda r: (r.table, r.start_key))
        return online_regions_response(
            [(r.table, r.start_key, r.end_key, r.region_id) for r in regions]), b""

    def flush(self, ctx: CallContext) -> tuple[bytes, bytes]:
        name = decode_flush_request(ctx.call.request)
        table, _, _ = self._region(name)
        self.servers.flush(table, encoded_name(name))
        return flush_response(self.cluster.clock()), b""

    def compact(self, ctx: CallContext) -> tuple[bytes, bytes]:
        """A major compaction (of the region's whole table: the store keeps no files per
        region), done before the reply, so the region's state reads NONE after it."""
        table, _, _ = self._region(decode_compact_request(ctx.call.request))
        self.cluster.major_compact(table)
        return b"", b""

    def roll(self, ctx: CallContext) -> tuple[bytes, bytes]:
        self.servers.roll(self.slot)
        return roll_response(), b""


@dataclass
class _Gets:
    """The Gets of one RegionAction: ``stored`` each row's stored cells (None: not read
    together), and the read specs of Gets without a filter by their message less its row
    (a spec never reads the row; one with a filter keeps state and is made afresh)."""

    stored: dict[bytes, list[Cell]] | None = None
    specs: dict[bytes, ReadSpec] = field(default_factory=dict)

    @staticmethod
    def spec(gets: _Gets | None, row: bytes, message: bytes) -> ReadSpec:
        """The read spec of a Get of ``row`` sent as ``message``."""
        if gets is None:
            return read_spec(message, "Get")
        prefix = b"\x0a" + encode_varint(len(row)) + row
        key = message[len(prefix):] if message.startswith(prefix) else message
        found = gets.specs.get(key)
        if found is None:
            found = read_spec(message, "Get")
            if found.filter is None:
                gets.specs[key] = found
        return found


def _pieces(rows: Iterator[tuple[list[Cell], bool]], batch: int) -> Iterator[Piece]:
    """A region's rows in Results of at most ``batch`` cells (0: whole rows), the last
    Result of a row carrying whether more rows follow."""
    for cells, more_rows in rows:
        parts = list(chunks(iter([cells]), batch))
        for i, (part, more_of_row) in enumerate(parts, 1):
            yield part, more_of_row, i < len(parts) or more_rows


def _bounds(scan: Scan) -> tuple[bytes, bytes]:
    """The rows ``[low, high)`` a scan reads (empty high: to the end), its start and stop
    rows inclusive or not; a reversed scan starts at its high end."""
    if scan.reversed:
        high = scan.start + b"\0" if scan.start and scan.include_start_row else scan.start
        low = scan.stop + b"\0" if scan.stop and not scan.include_stop_row else scan.stop
        return low, high
    low = scan.start if scan.include_start_row else scan.start + b"\0"
    high = scan.stop + b"\0" if scan.stop and scan.include_stop_row else scan.stop
    return low, high


def _mutation(action: MutationAction) -> Mutation:
    """A client mutation of the cluster's model from a MutationProto."""
    if action.kind not in (PUT, DELETE):
        raise ServiceError(DO_NOT_RETRY, f"Unsupported mutate type: {action.kind}",
                           do_not_retry=True)
    if action.kind == DELETE and not action.cells:
        return Mutation(action.row, whole_row=True, row_timestamp=action.timestamp)
    return Mutation(action.row, tuple(ClientCell(c.family, c.qualifier, c.timestamp, c.type,
                                                 c.value) for c in action.cells))


def _pair(error: ServiceError | None) -> tuple[str, str]:
    assert error is not None
    return error.class_name, error.trace


def answer_order(actions: Sequence[MutationAction | GetAction]
                 ) -> list[MutationAction | GetAction]:
    """The order HBase's server answers a non-atomic RegionAction in: Gets, increments and
    appends as met, each run of puts and deletes (ended by an increment, an append or the
    end) sorted by row, as its batch is applied (HBASE-17924); equal rows keep their order."""
    order: list[MutationAction | GetAction] = []
    run: list[MutationAction] = []
    for action in actions:
        if isinstance(action, MutationAction) and action.kind in (PUT, DELETE):
            run.append(action)
            continue
        if isinstance(action, MutationAction):  # an increment or append ends the run
            order += sorted(run, key=_MUTATION_ROW)
            run = []
        order.append(action)
    return order + sorted(run, key=_MUTATION_ROW)


_MUTATION_ROW = attrgetter("row")
