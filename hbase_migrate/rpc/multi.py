"""``MutationProto`` and ``Multi`` (``Client.proto``, HBase branch-2.6)::

    MutationProto       1 row  2 mutate_type (APPEND 0, INCREMENT 1, PUT 2, DELETE 3)
                        3 column_value (repeated ColumnValue)  4 timestamp
                        6 durability  8 associated_cell_count (int32)  9 nonce
    ColumnValue         1 family  2 qualifier_value (repeated QualifierValue)
    QualifierValue      1 qualifier  2 value  3 timestamp  4 delete_type  5 tags
    DeleteType          DELETE_ONE_VERSION 0  DELETE_MULTIPLE_VERSIONS 1  DELETE_FAMILY 2
                        DELETE_FAMILY_VERSION 3
    Action              1 index  2 mutation  3 get (a Get: ``get_multi``)
    RegionAction        1 region  2 atomic  3 action (repeated)
    MultiRequest        1 regionAction (repeated)  2 nonceGroup
    ResultOrException   1 index  2 result  3 exception (NameBytesPair: class name, trace)
    RegionActionResult  1 resultOrException (repeated)  2 exception (NameBytesPair)
    MultiResponse       1 regionActionResult (repeated, one per RegionAction, in order)
    MutateRequest       1 region  2 mutation  3 condition  4 nonce_group
    MutateResponse      1 result  2 processed

A mutation is sent as HBase's client sends it (``ProtobufUtil.toMutationNoData``): row, type
and ``associated_cell_count``, its cells next in the call's cell block, each with its own
timestamp and KeyValue type (``ProtobufUtil.toDelete`` adds each cell as it is, so every
delete type travels as its type byte). The inline form (``column_value``, with
``delete_type``) is decoded too, and encoded by ``inline_mutation``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache
from typing import Any, NamedTuple

from hbase_migrate.rpc.codec import decode_cells
from hbase_migrate.rpc.messages import (
    LATEST_TIMESTAMP,
    Get,
    Result,
    TimeRange,
    decode_cell_message,
    decode_get,
    decode_name_bytes_pair,
    decode_region_specifier,
    decode_result,
    decode_time_range,
    get_message,
    name_bytes_pair,
    region_specifier,
    result_message,
)
from hbase_migrate.wal.hotloops import compiled_module
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    as_bytes,
    as_int,
    bytes_field,
    decode_varint,
    encode_varint,
    iter_fields,
    to_int64,
    varint_field,
)

APPEND = 0
INCREMENT = 1
PUT = 2
DELETE = 3
DELETE_TYPES = {  # KeyValue type -> MutationProto.DeleteType
    CellType.DELETE: 0,  # DELETE_ONE_VERSION
    CellType.DELETE_COLUMN: 1,  # DELETE_MULTIPLE_VERSIONS
    CellType.DELETE_FAMILY: 2,  # DELETE_FAMILY
    CellType.DELETE_FAMILY_VERSION: 3,  # DELETE_FAMILY_VERSION
}
CELL_TYPES = {v: k for k, v in DELETE_TYPES.items()}


def mutate_type(cells: Sequence[Cell]) -> int:
    """PUT or DELETE for a row's cells, which must all be puts or all deletes."""
    kinds = {c.type == CellType.PUT for c in cells}
    if len(kinds) != 1:
        raise ValueError("a mutation holds puts or deletes, not both")
    return PUT if kinds.pop() else DELETE


def mutation(row: bytes, kind: int, cell_count: int) -> bytes:
    """A MutationProto whose ``cell_count`` cells follow in the cell block (fields 1, 2
    and 8, their keys written out: one per row of a Multi)."""
    return (b"\x0a" + encode_varint(len(row)) + row + b"\x10" + encode_varint(kind) + b"\x40"
            + encode_varint(cell_count))


def inline_mutation(row: bytes, cells: Sequence[Cell]) -> bytes:
    """A MutationProto holding its cells (one ColumnValue per family, in order of first
    appearance), puts or deletes of any type."""
    kind = mutate_type(cells)
    families: dict[bytes, list[bytes]] = {}
    for c in cells:
        qv = bytes_field(1, c.qualifier) + varint_field(3, c.timestamp)
        if kind == PUT:
            qv += bytes_field(2, c.value)
        else:
            qv += varint_field(4, DELETE_TYPES[CellType(c.type)])
        families.setdefault(c.family, []).append(bytes_field(2, qv))
    out = bytes_field(1, row) + varint_field(2, kind)
    for family, values in families.items():
        out += bytes_field(3, bytes_field(1, family) + b"".join(values))
    return out


class MutationAction(NamedTuple):
    """A decoded MutationProto (of the Action whose index is ``action``): ``timestamp`` is
    the mutation's own (LATEST_TIMESTAMP unless set), what a Delete naming no cell deletes
    the whole row at."""

    action: int
    kind: int
    row: bytes
    timestamp: int
    cells: tuple[Cell, ...]
    cell_count: int = 0  # how many of the call's cell block's cells are its own
    time_range: TimeRange | None = None  # an increment's or append's (what it reads)
    return_results: bool = True  # an increment or append answers its new cells


RETURN_RESULTS = "_rr_"  # Mutation.setReturnResults: the attribute, one boolean byte


def _delta_options(m: Message) -> dict[str, Any]:
    """An increment's or append's time range and whether it returns its cells."""
    found: dict[str, Any] = {}
    time_range = m.opt_bytes(7)
    if time_range is not None:
        found["time_range"] = decode_time_range(time_range)
    for attribute in m.repeated(5):
        name, value = decode_name_bytes_pair(attribute)
        if name == RETURN_RESULTS:
            found["return_results"] = any(value[:1])
    return found


def decode_mutation(data: bytes, block: bytes, pos: int, index: int = 0, *,
                    in_block: bool = True) -> tuple[MutationAction, int]:
    """A MutationProto and the position in ``block`` after its cells (``in_block`` False:
    its ``cell_count`` cells in the block are left to the caller to decode)."""
    m = Message(data, "MutationProto")
    kind, row = m.req_int(2, "mutate_type"), m.opt_bytes(1) or b""
    stamp = m.opt_int(4)
    timestamp = LATEST_TIMESTAMP if stamp is None else to_int64(stamp)
    count = to_int64(m.opt_int(8) or 0)
    if count:
        cells: tuple[Cell, ...] = ()
        if in_block:
            cells, pos = decode_cells(block, pos, count)
        if kind in (INCREMENT, APPEND) and not row:
            row = cells[0].row if cells else b""
        options = _delta_options(m) if kind in (INCREMENT, APPEND) else {}
        return MutationAction(index, kind, row, timestamp, cells, count, **options), pos
    if not row:
        raise ProtobufError("MutationProto: row cannot be null")
    cells = tuple(_inline_cells(m, kind, row, timestamp))
    options = _delta_options(m) if kind in (INCREMENT, APPEND) else {}
    return MutationAction(index, kind, row, timestamp, cells, **options), pos


def _inline_cells(m: Message, kind: int, row: bytes, timestamp: int) -> Iterator[Cell]:
    """The cells a MutationProto holds itself (``column_value``), as HBase's
    ``ProtobufUtil.toPut``/``toDelete``/``toIncrement``/``toAppend`` read them: a put's cell
    takes its own timestamp, else the mutation's; a delete's or an increment's or append's
    its own, else the latest; a delete's type is DELETE_ONE_VERSION unless set, and a family
    delete names no qualifier; a put, increment or append needs a value."""
    for cv in m.repeated(3):
        col = Message(cv, "ColumnValue")
        family = col.req_bytes(1, "family")
        for qv_data in col.repeated(2):
            qv = Message(qv_data, "QualifierValue")
            stamp, value = qv.opt_int(3), qv.opt_bytes(2)
            ts = to_int64(stamp) if stamp is not None else (
                timestamp if kind == PUT else LATEST_TIMESTAMP)
            qualifier = qv.opt_bytes(1) or b""
            delete_type = qv.opt_int(4)
            if kind == DELETE or (kind == PUT and delete_type is not None):
                cell_type = CELL_TYPES.get(delete_type or 0)
                if cell_type is None:
                    raise ProtobufError(f"unknown delete type {delete_type}")
                if cell_type in (CellType.DELETE_FAMILY, CellType.DELETE_FAMILY_VERSION):
                    qualifier = b""
                yield Cell(row, family, qualifier, ts, cell_type)
            elif kind in (PUT, INCREMENT, APPEND):
                if value is None:
                    raise ProtobufError("Missing required field: qualifier value")
                yield Cell(row, family, qualifier, ts, CellType.PUT, value)
            else:
                raise ProtobufError(f"unknown mutation type {kind}")


def decode_mutate_request(data: bytes, block: bytes, *, conditional: bool = False
                          ) -> tuple[bytes, MutationAction]:
    """``(region name, mutation)`` of a MutateRequest (1 region  2 mutation
    3 condition  4 nonce_group); a conditional mutation is refused (ProtobufError) unless
    ``conditional`` (its condition read by ``conditions.decode_mutate_condition``)."""
    m = Message(data, "MutateRequest")
    if 3 in m and not conditional:
        raise ProtobufError("conditional mutations (checkAndMutate) are not supported")
    region = decode_region_specifier(m.req_bytes(1, "region"))[1]
    return region, decode_mutation(m.req_bytes(2, "mutation"), block, 0)[0]


def mutate_response(result: Result | None = None, processed: bool | None = True) -> bytes:
    """A MutateResponse (1 result  2 processed) as ``RSRpcServices.mutate`` builds it: a
    put or delete done is ``processed`` with no result; an increment or append carries its
    Result (its new cells inline, or counted and sent in the cell block)."""
    out = b"" if result is None else bytes_field(1, result_message(result))
    return out + (b"" if processed is None else varint_field(2, processed))


# --- Multi --------------------------------------------------------------------------------


def multi_request(actions: Sequence[tuple[bytes, Sequence[tuple[int, bytes]]]]) -> bytes:
    """A MultiRequest of one RegionAction per ``(region name, [(index, MutationProto)])``
    (an Action's fields 1 and 2 with their keys written out: one per row)."""
    out = []
    for region, region_actions in actions:
        parts = [bytes_field(1, region_specifier(region))]
        for index, mutation_data in region_actions:
            action = b"\x08" + encode_varint(index) + b"\x12" + encode_varint(
                len(mutation_data)) + mutation_data
            parts.append(b"\x1a" + encode_varint(len(action)) + action)
        out.append(bytes_field(1, b"".join(parts)))
    return b"".join(out)


def get_multi(regions: Sequence[tuple[bytes, Sequence[Get]]]) -> bytes:
    """A MultiRequest of Gets (``Table.get(List)``): one RegionAction per ``(region name,
    Gets)``, the actions numbered from 0 in order (built in one pass: a round's Multi holds
    a thousand)."""
    out, index = [], 0
    for region, gets in regions:
        parts = [bytes_field(1, region_specifier(region))]
        for get in gets:
            message = get_message(get)
            action = b"\x08" + _varint(index) + b"\x1a" + _varint(len(message)) + message
            parts.append(b"\x1a" + _varint(len(action)) + action)
            index += 1
        out.append(bytes_field(1, b"".join(parts)))
    return b"".join(out)


def decode_get_results(data: bytes, block: bytes) -> tuple[RegionResult, ...]:
    """A MultiResponse to :func:`get_multi`, a RegionResult per RegionAction in order: each
    Get's cells (inline, or the next ones of ``block`` in the order of the results) or its
    exception. Each ResultOrException is read field by field, no message objects, and the
    cell block is decoded in one pass, then handed out by the results' counts."""
    read: list[tuple[list[tuple[int, tuple[str, str] | None, tuple[Cell, ...], int]],
                     tuple[str, str] | None]] = []
    total = 0
    for rar_data in Message(data, "MultiResponse").repeated(1):
        results, region_exc = [], None
        for number, _, value in iter_fields(rar_data):
            if number == 1:
                result = _get_result(_delimited(value, "RegionActionResult", 1))
                total += result[3]
                results.append(result)
            elif number == 2:
                region_exc = _pair(_delimited(value, "RegionActionResult", 2))
        read.append((results, region_exc))
    cells = decode_cells(block, 0, total)[0] if total else ()
    out, at = [], 0
    for results, region_exc in read:
        done = []
        for index, exception, inline, count in results:
            if exception is not None:
                done.append(ActionResult(index, exception))
                continue
            done.append(ActionResult(index, cells=inline + cells[at:at + count]
                                     if count else inline))
            at += count
        out.append(RegionResult(tuple(done), region_exc))
    return tuple(out)


def _get_result(data: bytes) -> tuple[int, tuple[str, str] | None, tuple[Cell, ...], int]:
    """A ResultOrException (1 index  2 result  3 exception) of a Get: its index, exception,
    inline cells and count of cells in the cell block (the last value of each field counts,
    as :func:`~hbase_migrate.rpc.messages.decode_result` reads them)."""
    index, result, failed = _indexed(data)
    if failed is not None:
        return index, _pair(failed), (), 0
    inline: list[Cell] = []
    count = 0
    for number, wire_type, value in iter_fields(result or b""):
        if number == 1:
            inline.append(decode_cell_message(as_bytes(number, wire_type, value)))
        elif number == 2:
            count = to_int64(as_int(number, wire_type, value))
    if count < 0:
        raise ProtobufError(f"Result of action {index}: {count} cells in the cell block")
    return index, None, tuple(inline), count


_VARINTS = 1 << 14  # the varints kept encoded: lengths and indices of a Multi's rows


@cache
def _varints() -> tuple[bytes, ...]:
    return tuple(encode_varint(i) for i in range(_VARINTS))


def row_multi(regions: Sequence[tuple[bytes, Sequence[tuple[bytes, Sequence[Cell]]]]],
              kind: int) -> bytes:
    """What :func:`multi_request` makes of one :func:`mutation` of type ``kind`` per row, the
    actions numbered from 0 in order: ``(region name, [(row, its cells)])`` to a
    MultiRequest, built in one pass (a Multi of small rows holds thousands)."""
    loops = compiled_module()
    if loops is not None:
        made: bytes | None = loops.encode_row_actions(
            [(region_specifier(region), list(rows)) for region, rows in regions], kind)
        if made is not None:
            return made
    small = _varints()

    def varint(n: int) -> bytes:
        return small[n] if n < _VARINTS else encode_varint(n)

    middle = b"\x10" + encode_varint(kind) + b"\x40"
    out = []
    index = 0
    for region, rows in regions:
        parts = [bytes_field(1, region_specifier(region))]
        for row, cells in rows:
            data = b"\x0a" + varint(len(row)) + row + middle + varint(len(cells))
            action = b"\x08" + varint(index) + b"\x12" + varint(len(data)) + data
            parts.append(b"\x1a" + varint(len(action)) + action)
            index += 1
        out.append(bytes_field(1, b"".join(parts)))
    return b"".join(out)


_done: list[bytes] = []  # action i's ResultOrException when it is done and read nothing
_done_lock = threading.Lock()


def _done_actions(count: int) -> list[bytes]:
    """The first ``count`` of :data:`_done` (each a RegionActionResult's field 1), made
    once each: the first Multis of a client's threads ask at once."""
    if len(_done) < count:
        with _done_lock:
            _done.extend(bytes_field(1, varint_field(1, i) + _EMPTY_RESULT)
                         for i in range(len(_done), count))
    return _done


_NO_STATISTICS = b"\x1a\x00"  # MultiResponse field 3 (regionStatistics), empty


def all_done(response: bytes, counts: Sequence[int]) -> bool:
    """Whether ``response`` is the MultiResponse of a server that did every action of a
    :func:`row_multi` of ``counts`` rows per region, read nothing and failed nothing (HBase's
    servers add empty region statistics): such a reply, the usual one, needs no decoding.
    False for any other reply, and for a Multi too large to say."""
    total = sum(counts)
    if total > _VARINTS:
        return False
    done, out, first = _done_actions(total), [], 0
    for count in counts:
        out.append(bytes_field(1, b"".join(done[first:first + count])))
        first += count
    return response.removesuffix(_NO_STATISTICS) == b"".join(out)


class RegionMutations(NamedTuple):
    region: bytes
    mutations: tuple[tuple[int, int, tuple[Cell, ...]], ...]  # (index, type, cells)


class GetAction(NamedTuple):
    """A Get of a MultiRequest (``Table.get(List)`` of HBase's client batches them)."""

    action: int
    get: Get
    message: bytes = b""  # the Get as sent (a server reads its filter and limits from it)


class RegionActions(NamedTuple):
    region: bytes
    actions: tuple[MutationAction | GetAction, ...]
    atomic: bool = False  # RowMutations, mutateRow: all or nothing
    condition: bytes | None = None  # a checkAndMutate's Condition (conditions.py reads it)


def decode_region_actions(data: bytes, block: bytes) -> tuple[RegionActions, ...]:
    """The RegionActions of a MultiRequest: their mutations with their cells, and Gets. The
    cell block is decoded in one pass, then handed out to the mutations in order."""
    parsed: list[tuple[bytes, list[tuple[int, bytes | GetAction]]]] = []
    atomic: list[tuple[bool, bytes | None]] = []
    for ra_data in Message(data, "MultiRequest").repeated(1):
        ra = Message(ra_data, "RegionAction")
        atomic.append((bool(ra.opt_int(2)), ra.opt_bytes(4)))
        region = decode_region_specifier(ra.req_bytes(1, "region"))[1]
        actions = []
        for action_data in ra.repeated(3):
            index, data_mutation, data_get = _indexed(action_data)
            if data_mutation is None and data_get is None:
                raise ProtobufError(f"action {index} of region {region!r} is neither a "
                                    "mutation nor a get")
            actions.append((index, data_mutation if data_mutation is not None
                            else GetAction(index, decode_get(data_get or b""),
                                           data_get or b"")))
        parsed.append((region, actions))
    decoded = [(region, [m if isinstance(m, GetAction) else
                         decode_mutation(m, b"", 0, index, in_block=False)[0]
                         for index, m in raw]) for region, raw in parsed]
    counts = sum(a.cell_count for _, region_actions in decoded for a in region_actions
                 if isinstance(a, MutationAction))
    cells, _ = decode_cells(block, 0, counts) if counts else ((), 0)
    out = []
    pos = 0
    for (all_or_none, condition), (region, region_actions) in zip(atomic, decoded,
                                                                  strict=True):
        filled: list[MutationAction | GetAction] = []
        for a in region_actions:
            if isinstance(a, MutationAction) and a.cell_count:
                filled.append(a._replace(cells=cells[pos:pos + a.cell_count]))
                pos += a.cell_count
            else:
                filled.append(a)
        out.append(RegionActions(region, tuple(filled), all_or_none, condition))
    return tuple(out)


def _indexed(data: bytes) -> tuple[int, bytes | None, bytes | None]:
    """A message of an index and two length-delimited fields (1 index  2  3: an Action's
    mutation and Get, a ResultOrException's result and exception), read in one pass, no
    Message: the last value of each counts, other fields are skipped."""
    index, second, third = 0, None, None
    for number, wire_type, value in iter_fields(data):
        if number == 1:
            index = as_int(number, wire_type, value)
        elif number == 2:
            second = as_bytes(number, wire_type, value)
        elif number == 3:
            third = as_bytes(number, wire_type, value)
    return index, second, third


def decode_multi_request(data: bytes, block: bytes) -> tuple[RegionMutations, ...]:
    """The mutations of a MultiRequest with their cells, as ``(index, type, cells)``."""
    return tuple(RegionMutations(r.region, tuple((a.action, a.kind, a.cells) for a in r.actions
                                                 if isinstance(a, MutationAction)))
                 for r in decode_region_actions(data, block))


class ActionResult(NamedTuple):
    """One action's outcome: ``exception`` is ``(Java class name, stack trace)`` or None;
    ``cells``: what a Get action read (sent in the cell block, in the order of the results)."""

    action: int  # the Action's index
    exception: tuple[str, str] | None = None
    cells: tuple[Cell, ...] = ()
    bare: bool = False  # its index alone, no result (a conditional RegionAction's)


class RegionResult(NamedTuple):
    """One RegionAction's outcome; ``exception``: the whole region action failed;
    ``processed``: an atomic one was applied (RegionActionResult field 3)."""

    results: tuple[ActionResult, ...] = ()
    exception: tuple[str, str] | None = None
    processed: bool = False
    cells_inline: bool = False  # its results' cells in the Results, never the cell block


def _exception_pair(pair: tuple[str, str]) -> bytes:
    return name_bytes_pair(pair[0], pair[1].encode())


def multi_response(regions: Sequence[RegionResult], in_block: bool = True) -> bytes:
    """A MultiResponse as a server sends it; the cells of Get actions' Results go in the
    cell block (``encode_cell_block`` of every result's ``cells``, in order, but for
    regions whose ``cells_inline``), or inline in each Result to a client that named no
    codec (``in_block`` False)."""
    empty = bytes_field(2, result_message(Result()))  # most actions' (a mutation done)
    out = []
    for region in regions:
        body = []
        for r in region.results:
            roe = b"\x08" + _varint(r.action) if r.action >= 0 else varint_field(1, r.action)
            if r.exception:
                roe += bytes_field(3, _exception_pair(r.exception))
            elif not r.bare:
                inline = region.cells_inline or not in_block
                roe += (empty if not r.cells else bytes_field(2, result_message(
                    Result(r.cells))) if inline else _counted(len(r.cells)))
            body.append(bytes_field(1, roe))
        if region.exception:
            body.append(bytes_field(2, _exception_pair(region.exception)))
        if region.processed:
            body.append(varint_field(3, 1))
        out.append(bytes_field(1, b"".join(body)))
    if any(region.processed for region in regions):  # MultiResponse.processed, for old clients
        out.append(varint_field(2, 1))
    return b"".join(out)


@lru_cache(maxsize=1024)
def _counted(count: int) -> bytes:
    """ResultOrException field 2: a Result of ``count`` cells sent in the cell block."""
    return bytes_field(2, result_message(Result(cell_count=count)))


def _varint(n: int) -> bytes:
    return _varints()[n] if n < _VARINTS else encode_varint(n)


def _pair(data: bytes) -> tuple[str, str]:
    name, value = decode_name_bytes_pair(data)
    return name, value.decode("utf-8", "replace")


def decode_multi_response(data: bytes) -> tuple[RegionResult, ...]:
    """A MultiResponse, read field by field (a reply to a Multi of small rows holds
    thousands of ResultOrExceptions)."""
    out = []
    for rar_data in Message(data, "MultiResponse").repeated(1):
        results = []
        region_exc = None
        for number, _, value in iter_fields(rar_data):
            if number == 1:
                results.append(_action_result(_delimited(value, "RegionActionResult", 1)))
            elif number == 2:
                region_exc = _pair(_delimited(value, "RegionActionResult", 2))
        out.append(RegionResult(tuple(results), region_exc))
    return tuple(out)


_EMPTY_RESULT = b"\x12\x00"  # field 2, an empty Result


def _delimited(value: int | bytes, what: str, number: int) -> bytes:
    if not isinstance(value, bytes):
        raise ProtobufError(f"{what} field {number} is not length-delimited")
    return value


def _action_result(data: bytes) -> ActionResult:
    """A ResultOrException (1 index  2 result  3 exception) of a mutation."""
    if data[:1] == b"\x08" and data[-2:] == _EMPTY_RESULT:  # the usual: done, nothing read
        index, pos = decode_varint(data, 1)
        if pos == len(data) - 2:
            return ActionResult(index)
    index, exc = 0, None
    for number, _, value in iter_fields(data):
        if number == 1:
            if not isinstance(value, int):
                raise ProtobufError("ResultOrException field 1 is not a varint")
            index = value
        elif number == 2:
            result = _delimited(value, "ResultOrException", 2)
            if result and decode_result(result).cell_count:
                raise ProtobufError("a mutation's result holds cells")
        elif number == 3:
            exc = _pair(_delimited(value, "ResultOrException", 3))
    return ActionResult(index, exc)
