# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copies of a region's scan from its store files, built by ``make setup``
(``scripts/build-speedups.py``): ``visible.visible_cells`` (the matcher of a normal scan:
deletes, versions, TTL, time range; ``visible.py`` holds the reference and the rules'
sources, and chooses), ``merge.merged_cells`` (the store files' cells merged in scan order,
a data block at a time; ``merge.py`` holds the reference and chooses) and both with the cut
into rows in one loop (``region_rows``, for ``region.region_rows``). Timestamps are 64-bit
(as every store cell's); a scan or family whose times do not fit 64 bits is the reference's
(None answered). A cell's own TTL tag goes through the reference's ``_cell_ttl_expired``."""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.long cimport PyLong_Check
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_SIZE
from libc.stdint cimport int64_t
from libc.string cimport memcmp

from hbase_migrate.plain_tuples cimport plain_tuple

from hbase_migrate.errors import HFileCorruptError, HFileUnsupportedError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.visible import _cell_ttl_expired

DEF DELETE = 8
DEF DELETE_FAMILY_VERSION = 10
DEF DELETE_COLUMN = 12
DEF DELETE_FAMILY = 14
DEF HIDES_NONE = 0
DEF HIDES_CELL = 1
DEF HIDES_COLUMN = 2

cdef int64_t LONG_MIN = -0x7FFFFFFFFFFFFFFF - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


cdef class _Store:
    """``visible._Store`` with ``visible._Deletes`` in it: one family's matcher."""
    cdef int64_t oldest, min_ts, max_ts
    cdef object now_ms
    cdef Py_ssize_t versions, min_versions, count
    cdef bint see_past_deletes
    # the delete markers of the row and family (``_Deletes``)
    cdef bint has_family
    cdef int64_t family_stamp, column_stamp
    cdef set family_versions  # None until the row and family's first DeleteFamilyVersion
    cdef object column_deleted  # the qualifier of the last column delete kept, or None
    cdef int column_type
    # the column being counted
    cdef object ended, column
    cdef bint has_last
    cdef int64_t last_ts
    cdef int last_type

    def __init__(self, int64_t oldest, int64_t min_ts, int64_t max_ts, object now_ms,
                 Py_ssize_t versions, Py_ssize_t min_versions, bint see_past_deletes):
        self.oldest, self.min_ts, self.max_ts, self.now_ms = oldest, min_ts, max_ts, now_ms
        self.versions, self.min_versions = versions, min_versions
        self.see_past_deletes = see_past_deletes
        self.reset()

    cdef void reset(self):
        self.has_family = False
        self.family_versions = None
        self.column_deleted = None
        self.column_type = 0
        self.column_stamp = 0
        self.ended = None
        self.column = None
        self.count = 0
        self.has_last = False

    cdef void add_delete(self, object qualifier, int64_t ts, object ts_object, int kind):
        if self.has_family and ts <= self.family_stamp:
            return
        if kind == DELETE_FAMILY:
            self.has_family, self.family_stamp = True, ts
        elif kind == DELETE_FAMILY_VERSION:
            if self.family_versions is None:
                self.family_versions = set()
            self.family_versions.add(ts_object)
        elif not (self.column_deleted == qualifier and kind < self.column_type):
            self.column_deleted, self.column_type, self.column_stamp = qualifier, kind, ts

    cdef int hides(self, object qualifier, int64_t ts, object ts_object):
        if self.has_family and ts <= self.family_stamp:
            return HIDES_COLUMN
        if self.family_versions is not None and ts_object in self.family_versions:
            return HIDES_CELL
        if self.column_deleted is not None:
            if self.column_deleted == qualifier:
                if self.column_type == DELETE_COLUMN:
                    return HIDES_COLUMN
                if ts == self.column_stamp:
                    return HIDES_CELL
            self.column_deleted = None
        return HIDES_NONE

    cdef bint take(self, tuple cell) except -1:
        cdef object qualifier = cell[2], ts_object = cell[3]
        cdef int64_t ts = ts_object
        cdef int kind = cell[4], hidden
        cdef bint after
        if qualifier == self.ended:
            return False
        if ts == LONG_MIN or (self.min_versions <= 0 and ts < self.oldest):
            self.ended = qualifier
            return False
        if cell[6] and _cell_ttl_expired(cell, self.now_ms):
            return False
        if kind == DELETE or kind == DELETE_FAMILY_VERSION or kind == DELETE_COLUMN \
                or kind == DELETE_FAMILY:
            after = ts >= self.max_ts
            if ts >= self.min_ts and (not after or not self.see_past_deletes):
                self.add_delete(qualifier, ts, ts_object, kind)
            return False
        hidden = self.hides(qualifier, ts, ts_object)
        if hidden == HIDES_NONE and ts < self.max_ts:
            if ts >= self.min_ts:
                return self.version(qualifier, ts, kind)
            hidden = HIDES_COLUMN
        if hidden == HIDES_COLUMN:
            self.ended = qualifier
        return False

    cdef bint version(self, object qualifier, int64_t ts, int kind):
        if qualifier != self.column:
            self.column, self.count, self.has_last = qualifier, 0, False
        elif self.has_last and self.last_ts == ts and self.last_type == kind:
            return False
        self.count += 1
        if self.count > self.versions:
            self.ended = qualifier
            return False
        if self.count <= self.min_versions or ts >= self.oldest:
            self.has_last, self.last_ts, self.last_type = True, ts, kind
            return True
        self.ended = qualifier
        return False


cdef inline tuple _tuple(object value, Py_ssize_t size):
    """``value`` (a ``StoreCell`` or ``Cell``: a tuple subclass, whose items indexing through
    the class would take a method call each) as a tuple, its ``size`` items read directly."""
    if not PyTuple_Check(value) or PyTuple_GET_SIZE(value) != size:
        raise TypeError(f"expected a tuple of {size} fields, got {value!r}")
    return <tuple>value


def _fits(value):
    return _LONG_MIN <= value <= _LONG_MAX


def visible_cells(cells, rules, scan):
    """``visible.visible_cells`` of ``cells``, or None when the scan's or a family's times
    do not fit 64 bits."""
    made = _made(rules, scan)
    return None if made is None else _visible(cells, made)


def store_settings(rules, scan):
    """Each family's matcher arguments (oldest time, the scan's time range and time, the
    versions kept, MIN_VERSIONS, whether deletes are seen past), or None when a time does
    not fit 64 bits; the compiled region digest (``_digestscan.pyx``) makes its matchers
    of them."""
    return _made(rules, scan)


cdef dict _made(rules, scan):
    """Each family's ``_Store`` arguments, or None when a time does not fit 64 bits."""
    made = {}
    for family, rule in rules.items():
        oldest = _LONG_MIN if rule.ttl_ms is None else scan.now_ms - rule.ttl_ms
        if not all(_fits(v) for v in (oldest, scan.min_ts, scan.max_ts, rule.min_versions,
                                      min(rule.max_versions, scan.max_versions))):
            return None
        made[family] = (oldest, scan.min_ts, scan.max_ts, scan.now_ms,
                        min(rule.max_versions, scan.max_versions), rule.min_versions,
                        rule.keep_deleted_cells != "FALSE")
    return made


def _visible(cells, dict made):
    cdef dict stores = {}
    cdef _Store store = None
    cdef object at_row = None, at_family = None
    cdef bint started = False
    cdef tuple cell
    for stored in cells:
        cell = _tuple(_tuple(stored, 2)[0], 7)
        if not started or at_row != cell[0] or at_family != cell[1]:
            started, at_row, at_family = True, cell[0], cell[1]
            store = _store_of(stores, made, at_family)
        if store.take(cell):
            yield cell


cdef _Store _store_of(dict stores, dict made, object family):
    """The matcher of ``family``, reset for a new row."""
    cdef _Store store = stores.get(family)
    if store is None:
        if family not in made:  # region.py refuses such stores first
            raise ValueError(f"cell of family {family!r}, which no rules name")
        store = stores[family] = _Store(*made[family])
    store.reset()
    return store


# -- the merge (``merge.py``): one stream per store file, a data block at a time, and one of
# ``newer``'s cells; each stream's head keyed as the reference's ``SortKey``

DEF MOB_REFERENCE_TAG = 5
DEF WHOLE = 0
DEF TOP = 1
DEF BOTTOM = 2

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object value, int* overflow) except? -1


cdef inline bint _int64(object value, int64_t* out) except -1:
    """Whether ``value`` is an int of 64 bits (then in ``out``)."""
    cdef int overflow = 0
    cdef long long found
    if not PyLong_Check(value):
        return False
    found = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return False
    out[0] = found
    return True


cdef inline int _compare(object a, object b) noexcept:
    """memcmp order of two exact bytes objects."""
    if a is b:  # a block's cells of one row share its bytes
        return 0
    cdef Py_ssize_t n_a = PyBytes_GET_SIZE(a), n_b = PyBytes_GET_SIZE(b)
    cdef int found = memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), min(n_a, n_b))
    if found:
        return found
    return (n_a > n_b) - (n_a < n_b)


cdef inline bint _equal(object a, object b) except -1:
    if a is b and PyBytes_CheckExact(a):
        return True
    if PyBytes_CheckExact(a) and PyBytes_CheckExact(b):
        return PyBytes_GET_SIZE(a) == PyBytes_GET_SIZE(b) and _compare(a, b) == 0
    return a == b


cdef class _Stream:
    """A store file's cells (``blocks``: lists of them) or ``newer``'s (``tail``), and the
    one taken last (the head): its fields, ``plain`` when its row, family and qualifier are
    bytes and its times 64-bit ints (compared in C, else as the reference's tuples)."""
    cdef object blocks, tail, family, reader, reset, split_row, start
    cdef list block
    cdef Py_ssize_t at, order
    cdef int half
    cdef bint mob_references, has_head
    cdef object stored, row, fam, qualifier, ts_object, kind_object, mvcc_object
    cdef int64_t ts, kind, mvcc
    cdef bint plain

    cdef bint key_fields(self, object row, object fam, object qualifier, object ts,
                         object kind, object mvcc) except -1:
        """Set the head's key from these fields; whether it is plain."""
        self.row, self.fam, self.qualifier = row, fam, qualifier
        self.ts_object, self.kind_object, self.mvcc_object = ts, kind, mvcc
        self.plain = (PyBytes_CheckExact(row) and PyBytes_CheckExact(fam)
                      and PyBytes_CheckExact(qualifier) and _int64(ts, &self.ts)
                      and _int64(kind, &self.kind) and _int64(mvcc, &self.mvcc))
        return self.plain

    cdef tuple key(self):
        """The reference's ``SortKey`` of the head."""
        return (self.row, self.fam, self.qualifier, -self.ts_object, -self.kind_object,
                -self.mvcc_object, -self.order)

    cdef int advance(self) except -1:
        """Take the next cell as the head, as ``merge._keyed`` hands it out (1), or 0 when
        there is none left."""
        if self.tail is not None:
            return self.advance_tail()
        cdef tuple stored
        cdef object row, mvcc, reader
        cdef tuple cell
        cdef bint had = self.has_head
        cdef object row_was, fam_was, qualifier_was, ts_was, kind_was
        cdef int64_t c_ts, c_kind
        cdef bint plain_was
        cdef int order
        while True:
            if self.at >= len(self.block):
                if self.blocks is None:
                    return 0
                found = next(self.blocks, None)
                if found is None:
                    self.blocks = None
                    return 0
                self.block = found if type(found) is list else list(found)
                self.at = 0
                continue
            stored = _tuple(self.block[self.at], 2)
            self.at += 1
            cell = _tuple(stored[0], 7)
            row = cell[0]
            if self.half == TOP and not row >= self.split_row:
                continue
            if self.half == BOTTOM and not row < self.split_row:
                self.blocks, self.block = None, []  # a bottom half ends at the split row
                return 0
            reader = self.reader
            if not _equal(cell[1], self.family):
                raise HFileCorruptError(reader.name, reader.block_offset,
                                        f"cell of family {cell[1]!r} in the store of family "
                                        f"{self.family!r}")
            if cell[6] and not self.mob_references:
                for tag in cell[6]:
                    if tag.type == MOB_REFERENCE_TAG:
                        raise HFileUnsupportedError(
                            reader.name, reader.block_offset,
                            f"MOB reference cell {row!r}/{cell[1]!r}:{cell[2]!r} (MOB files "
                            "are not read here)")
            mvcc = stored[1] if self.reset is None else self.reset
            row_was, fam_was, qualifier_was = self.row, self.fam, self.qualifier
            ts_was, kind_was, plain_was = self.ts_object, self.kind_object, self.plain
            c_ts, c_kind = self.ts, self.kind
            self.key_fields(row, cell[1], cell[2], cell[3], cell[4], mvcc)
            if had:
                if self.plain and plain_was:
                    order = _compare(row, row_was)
                    if order == 0:
                        order = _compare(self.fam, fam_was)
                    if order == 0:
                        order = _compare(self.qualifier, qualifier_was)
                    if order == 0:
                        order = (self.ts < c_ts) - (self.ts > c_ts)
                    if order == 0:
                        order = (self.kind < c_kind) - (self.kind > c_kind)
                    out_of_order = order < 0
                else:
                    out_of_order = ((row, self.fam, self.qualifier, -self.ts_object,
                                     -self.kind_object)
                                    < (row_was, fam_was, qualifier_was, -ts_was, -kind_was))
                if out_of_order:
                    raise HFileCorruptError(reader.name, reader.block_offset,
                                            f"cell {row!r}/{cell[1]!r}:{cell[2]!r}/{cell[3]} "
                                            "sorts before the cell preceding it")
            self.has_head = True
            self.stored = (stored if self.reset is None
                           else plain_tuple(StoreCell, (cell, self.reset)))
            return 1

    cdef int advance_tail(self) except -1:
        cdef object stored
        while True:
            stored = next(self.tail, None)
            if stored is None:
                self.tail = iter(())
                return 0
            cell = stored.cell
            if cell.row >= self.start:
                self.key_fields(cell.row, cell.family, cell.qualifier, cell.timestamp,
                                cell.type, stored.mvcc)
                self.stored = stored
                return 1


cdef inline bint _before(_Stream a, _Stream b) except -1:
    """Whether ``a``'s head comes first (the reference's keys, never equal: by ``order``
    last)."""
    cdef int order
    if not (a.plain and b.plain):
        return a.key() < b.key()
    order = _compare(a.row, b.row)
    if order == 0:
        order = _compare(a.fam, b.fam)
    if order == 0:
        order = _compare(a.qualifier, b.qualifier)
    if order:
        return order < 0
    if a.ts != b.ts:
        return a.ts > b.ts
    if a.kind != b.kind:
        return a.kind > b.kind
    if a.mvcc != b.mvcc:
        return a.mvcc > b.mvcc
    return a.order > b.order


cdef class _Merge:
    """``merge.merged_cells``'s merge: the streams' heads in a binary heap, taken as
    ``heapq.merge`` takes them (every stream's first at the start, in rank order; a stream
    advanced after its head is handed out)."""
    cdef list streams, heap
    cdef bint begun, pending

    def __init__(self, sources, bint mob_references, newer, start):
        cdef _Stream stream
        self.streams, self.heap = [], []
        for order, source in enumerate(sources):
            stream = _Stream()
            stream.blocks, stream.block, stream.order = source.blocks, [], order
            stream.family, stream.reader, stream.reset = source.family, source.reader, source.reset
            stream.mob_references = mob_references
            stream.half = WHOLE if source.half is None else TOP if source.half.top else BOTTOM
            stream.split_row = None if source.half is None else source.half.split_row
            self.streams.append(stream)
        stream = _Stream()
        stream.tail, stream.start, stream.order = newer, start, len(self.streams)
        self.streams.append(stream)

    cdef object next_cell(self):
        """The next cell in scan order, or None after the last."""
        cdef list heap = self.heap
        cdef _Stream top
        if not self.begun:
            self.begun = True
            for top in self.streams:
                if top.advance():
                    heap.append(top)
            for at in range(len(heap) // 2 - 1, -1, -1):
                self.sift(at)
        elif self.pending:
            top = heap[0]
            if not top.advance():
                last = heap.pop()
                if heap:
                    heap[0] = last
            if heap:
                self.sift(0)
        if not heap:
            self.pending = False
            return None
        self.pending = True
        return (<_Stream>heap[0]).stored

    cdef int sift(self, Py_ssize_t at) except -1:
        cdef list heap = self.heap
        cdef Py_ssize_t n = len(heap), child
        cdef _Stream moving = heap[at]
        while True:
            child = 2 * at + 1
            if child >= n:
                break
            if child + 1 < n and _before(heap[child + 1], heap[child]):
                child += 1
            if not _before(heap[child], moving):
                break
            heap[at] = heap[child]
            at = child
        heap[at] = moving
        return 0


def merged_cells(sources, bint mob_references, newer, start):
    """``merge.merged_cells`` of ``merge.merge_sources``' ``sources`` and ``newer`` (an
    iterator)."""
    return _merged(_Merge(sources, mob_references, newer, start))


def _merged(_Merge merge):
    while True:
        stored = merge.next_cell()
        if stored is None:
            return
        yield stored


def region_rows(sources, bint mob_references, newer, start, stop, rules, scan, resolve):
    """``region.region_rows``' rows: the merge of ``sources`` and ``newer`` up to ``stop``,
    matched, each cell with tags through ``resolve`` (when not None); None when the scan's
    or a family's times do not fit 64 bits."""
    made = _made(rules, scan)
    if made is None:
        return None
    return _rows(_Merge(sources, mob_references, newer, start), made, start, stop, resolve)


def _rows(_Merge merge, dict made, start, stop, resolve):
    cdef dict stores = {}
    cdef _Store store = None
    cdef object at_row = None, at_family = None, current = None
    cdef bint started = False
    cdef tuple cell
    cdef list row_cells = None
    cdef bint bounded = bool(stop), plain_stop = PyBytes_CheckExact(stop)
    while True:
        stored = merge.next_cell()
        if stored is None:
            break
        cell = _tuple(_tuple(stored, 2)[0], 7)
        if bounded and (_compare(cell[0], stop) >= 0
                        if plain_stop and PyBytes_CheckExact(cell[0]) else cell[0] >= stop):
            break  # the range's end: its files are not read past it
        if not started or not _equal(at_row, cell[0]) or not _equal(at_family, cell[1]):
            started, at_row, at_family = True, cell[0], cell[1]
            store = _store_of(stores, made, at_family)
        if not store.take(cell) or cell[0] < start:
            continue
        found = resolve(cell) if resolve is not None and cell[6] else cell
        if row_cells is not None and _equal(found[0], current):
            row_cells.append(found)
        else:
            if row_cells is not None:
                yield row_cells
            row_cells, current = [found], found[0]
    if row_cells is not None:
        yield row_cells
