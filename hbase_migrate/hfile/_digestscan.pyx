# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A region's range digest straight from its store files' unencoded data blocks, built by
``make setup`` (``scripts/build-speedups.py``); ``region.region_digest`` chooses it.

``region.region_rows`` followed by ``stats.digest_rows`` in one compiled loop with no
Python object per cell: each data block is indexed in place (``plain_block``: every cell's
row, family, qualifier and value as pointers into the block's bytes, its timestamp, type and
mvcc as C integers; an encoded block first written back unencoded by its compiled decoder,
``_cells.unencoded_block``), the files' blocks are merged in ``merge.py``'s order (a heap of one
head per file), the family rules applied as ``visible._Store`` applies them, and each
visible cell's fields written to the range's ``RangeDigest`` (``ranges/_digest.pyx``) as
``digest_rows`` writes a row's cells: the same rows, cells and digest.

It reads cells without tags only, in blocks of any encoding, and WAL tail cells (``newer``)
of bytes and 64-bit times without tags, in scan order. At anything else (a block
``plain_block`` declines, a cell of another family or out of order, which the reference
refuses) it raises ``Unfused``: the caller puts the digest back as it was before the region
and reads the region through ``region_rows``, which gives the cells or the error the
reference gives.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memcpy

from hbase_migrate.hfile._rawbytes cimport _int32, _int64, _vlong
from hbase_migrate.ranges._digest cimport RangeDigest, _Sink

from hbase_migrate.hfile._cells import unencoded_block

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.wal.model import Cell

DEF KEY_INFRASTRUCTURE = 12  # rowLen, famLen, timestamp, type
DEF TS_TYPE = 9
DEF DELETE = 8
DEF DELETE_FAMILY_VERSION = 10
DEF DELETE_COLUMN = 12
DEF DELETE_FAMILY = 14
DEF HIDES_NONE = 0
DEF HIDES_CELL = 1
DEF HIDES_COLUMN = 2
DEF WHOLE = 0
DEF TOP = 1
DEF BOTTOM = 2

cdef int64_t LONG_MIN = -0x7FFFFFFFFFFFFFFF - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
cdef object _END = object()


class Unfused(Exception):
    """The region holds what this loop leaves to ``region_rows``."""


ctypedef struct Kv:
    const uint8_t* row
    const uint8_t* family
    const uint8_t* qualifier
    const uint8_t* value
    Py_ssize_t row_len, family_len, qualifier_len, value_len
    int64_t ts, mvcc
    int kind


cdef inline int _compare(const uint8_t* a, Py_ssize_t n_a, const uint8_t* b,
                         Py_ssize_t n_b) noexcept:
    """memcmp order of two byte strings."""
    cdef int found
    if a == b and n_a == n_b:
        return 0
    found = memcmp(a, b, n_a if n_a < n_b else n_b)
    if found:
        return found
    return (n_a > n_b) - (n_a < n_b)


cdef class _Block:
    """An unencoded data block's cells, indexed in place."""
    cdef bytes data
    cdef Kv* kvs
    cdef Py_ssize_t n, cap

    def __dealloc__(self):
        free(self.kvs)

    def __len__(self):
        return self.n

    cdef Kv* slot(self) except NULL:
        cdef void* grown
        if self.n == self.cap:
            grown = realloc(self.kvs, (self.cap * 2 + 64) * sizeof(Kv))
            if grown == NULL:
                raise MemoryError()
            self.kvs, self.cap = <Kv*>grown, self.cap * 2 + 64
        self.n += 1
        return &self.kvs[self.n - 1]


def plain_block(int encoding, bytes data, bint tags, bint mvcc):
    """The cells of a data block (as ``HFileReader.data_blocks`` hands it; an encoded one
    written back unencoded first) indexed in place, or None where its compiled decoder
    would answer None or a cell has tags."""
    cdef _Block block = _Block()
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t end = PyBytes_GET_SIZE(data), p = 0, key_len, value_len, fam_at, qual_at
    cdef Py_ssize_t ts_at
    cdef const uint8_t* key
    cdef Kv* kv
    cdef int64_t version
    if encoding != 0:
        data = unencoded_block(encoding, data, tags, mvcc)
        if data is None:
            return None
        tags = False
        d, end = <const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data)
    block.data = data
    while p < end:
        if p + 8 > end:
            return None
        key_len = _int32(d + p)
        value_len = _int32(d + p + 4)
        p += 8
        if key_len < KEY_INFRASTRUCTURE or value_len < 0 or p + key_len + value_len > end:
            return None
        key = d + p
        p += key_len + value_len
        if tags:
            if p + 2 > end or d[p] or d[p + 1]:  # a cell with tags: the reference's
                return None
            p += 2
        version = 0
        if mvcc:
            p = _vlong(d, p, end, &version)
            if p < 0:
                return None
        ts_at = key_len - TS_TYPE
        fam_at = 2 + ((<Py_ssize_t>key[0] << 8) | key[1])
        if fam_at + 1 + TS_TYPE > key_len:
            return None
        qual_at = fam_at + 1 + key[fam_at]
        if qual_at > ts_at:
            return None
        kv = block.slot()
        kv.row, kv.row_len = key + 2, fam_at - 2
        kv.family, kv.family_len = key + fam_at + 1, qual_at - fam_at - 1
        kv.qualifier, kv.qualifier_len = key + qual_at, ts_at - qual_at
        kv.value, kv.value_len = key + key_len, value_len
        kv.ts, kv.kind, kv.mvcc = _int64(key + ts_at), key[key_len - 1], version
    return block


ctypedef struct Buf:
    uint8_t* p
    Py_ssize_t n, cap
    bint held


cdef int _keep(Buf* b, const uint8_t* src, Py_ssize_t n) except -1:
    """Copy ``n`` bytes at ``src`` into ``b``."""
    cdef void* grown
    if n > b.cap:
        grown = realloc(b.p, n + 32)
        if grown == NULL:
            raise MemoryError()
        b.p, b.cap = <uint8_t*>grown, n + 32
    memcpy(b.p, src, n)
    b.n, b.held = n, True
    return 0


cdef inline bint _holds(Buf* b, const uint8_t* src, Py_ssize_t n) noexcept:
    return b.held and b.n == n and memcmp(b.p, src, n) == 0


cdef class _Store:
    """``visible._Store`` (with ``_Deletes``) on raw fields: one family's matcher, its
    qualifiers copied (the blocks they point into may be gone by the next cell)."""
    cdef int64_t oldest, min_ts, max_ts
    cdef Py_ssize_t versions, min_versions, count
    cdef bint see_past_deletes, has_family, has_last
    cdef int64_t family_stamp, column_stamp, last_ts
    cdef set family_versions
    cdef Buf deleted, ended, column
    cdef int column_type, last_type

    def __dealloc__(self):
        free(self.deleted.p)
        free(self.ended.p)
        free(self.column.p)

    cdef void reset(self) noexcept:
        self.has_family = False
        self.family_versions = None
        self.deleted.held = self.ended.held = self.column.held = False
        self.column_type = 0
        self.column_stamp = 0
        self.count = 0
        self.has_last = False

    cdef int add_delete(self, const Kv* kv) except -1:
        if self.has_family and kv.ts <= self.family_stamp:
            return 0
        if kv.kind == DELETE_FAMILY:
            self.has_family, self.family_stamp = True, kv.ts
        elif kv.kind == DELETE_FAMILY_VERSION:
            if self.family_versions is None:
                self.family_versions = set()
            self.family_versions.add(kv.ts)
        elif not (_holds(&self.deleted, kv.qualifier, kv.qualifier_len)
                  and kv.kind < self.column_type):
            _keep(&self.deleted, kv.qualifier, kv.qualifier_len)
            self.column_type, self.column_stamp = kv.kind, kv.ts
        return 0

    cdef int hides(self, const Kv* kv) except -1:
        if self.has_family and kv.ts <= self.family_stamp:
            return HIDES_COLUMN
        if self.family_versions is not None and kv.ts in self.family_versions:
            return HIDES_CELL
        if self.deleted.held:
            if _holds(&self.deleted, kv.qualifier, kv.qualifier_len):
                if self.column_type == DELETE_COLUMN:
                    return HIDES_COLUMN
                if kv.ts == self.column_stamp:
                    return HIDES_CELL
            self.deleted.held = False
        return HIDES_NONE

    cdef int take(self, const Kv* kv) except -1:
        """Whether the scan returns the cell (``visible._Store.take``)."""
        cdef int64_t ts = kv.ts
        cdef int kind = kv.kind, hidden
        if _holds(&self.ended, kv.qualifier, kv.qualifier_len):
            return False
        if ts == LONG_MIN or (self.min_versions <= 0 and ts < self.oldest):
            _keep(&self.ended, kv.qualifier, kv.qualifier_len)
            return False
        if kind == DELETE or kind == DELETE_FAMILY_VERSION or kind == DELETE_COLUMN \
                or kind == DELETE_FAMILY:
            if ts >= self.min_ts and (ts < self.max_ts or not self.see_past_deletes):
                self.add_delete(kv)
            return False
        hidden = self.hides(kv)
        if hidden == HIDES_NONE and ts < self.max_ts:
            if ts >= self.min_ts:
                return self.version(kv)
            hidden = HIDES_COLUMN
        if hidden == HIDES_COLUMN:
            _keep(&self.ended, kv.qualifier, kv.qualifier_len)
        return False

    cdef int version(self, const Kv* kv) except -1:
        if not _holds(&self.column, kv.qualifier, kv.qualifier_len):
            _keep(&self.column, kv.qualifier, kv.qualifier_len)
            self.count, self.has_last = 0, False
        elif self.has_last and self.last_ts == kv.ts and self.last_type == kv.kind:
            return False
        self.count += 1
        if self.count > self.versions:
            _keep(&self.ended, kv.qualifier, kv.qualifier_len)
            return False
        if self.count <= self.min_versions or kv.ts >= self.oldest:
            self.has_last, self.last_ts, self.last_type = True, kv.ts, kv.kind
            return True
        _keep(&self.ended, kv.qualifier, kv.qualifier_len)
        return False


cdef class _Stream:
    """A store file's cells, a block at a time (``blocks``: ``plain_block``'s, None where it
    declined), as ``merge._keyed`` hands them out; ``head`` the one taken last, kept alive
    with its block."""
    cdef object blocks
    cdef _Block block, head_block
    cdef Py_ssize_t at, order
    cdef int half
    cdef bytes split_row, family, start
    cdef bint has_reset
    cdef int64_t reset, mvcc
    cdef const Kv* head
    # ``newer``'s cells (a WAL tail) instead of blocks: the two taken last, held, and their
    # fields (the head and the one before it, for the order check)
    cdef object tail, tail_now, tail_was
    cdef Kv tail_kvs[2]
    cdef int tail_slot

    cdef int advance(self) except -1:
        """Take the next cell as the head (1), or 0 when there is none left."""
        if self.tail is not None:
            return self.advance_tail()
        cdef const Kv* kv
        cdef const Kv* was
        cdef int order
        while True:
            if self.block is None or self.at >= self.block.n:
                if self.blocks is None:
                    return 0
                found = next(self.blocks, _END)
                if found is _END:
                    self.blocks = None
                    return 0
                if found is None:
                    raise Unfused("a data block left to the reference")
                self.block, self.at = <_Block>found, 0
                continue
            kv = &self.block.kvs[self.at]
            self.at += 1
            if _compare(kv.row, kv.row_len, <const uint8_t*>PyBytes_AS_STRING(self.start),
                        PyBytes_GET_SIZE(self.start)) < 0:
                continue  # the first block's rows before the read's start
            if self.half != WHOLE:
                order = _compare(kv.row, kv.row_len,
                                 <const uint8_t*>PyBytes_AS_STRING(self.split_row),
                                 PyBytes_GET_SIZE(self.split_row))
                if self.half == TOP and order < 0:
                    continue
                if self.half == BOTTOM and order >= 0:
                    self.blocks = self.block = None  # a bottom half ends at the split row
                    return 0
            if _compare(kv.family, kv.family_len,
                        <const uint8_t*>PyBytes_AS_STRING(self.family),
                        PyBytes_GET_SIZE(self.family)) != 0:
                raise Unfused("a cell of another family")
            if self.head != NULL and _sorts_before(kv, self.head):
                raise Unfused("a cell out of order")
            self.head = kv
            if self.head_block is not self.block:
                self.head_block = self.block
            self.mvcc = self.reset if self.has_reset else kv.mvcc
            return 1


    cdef int advance_tail(self) except -1:
        """Take ``newer``'s next cell of a row at or after ``start`` as the head (1), or 0
        when there is none left; a cell of fields not plainly bytes and 64-bit ints, with
        tags, or out of order is the reference's (``Unfused``)."""
        cdef Kv* kv
        cdef tuple cell
        while True:
            stored = next(self.tail, _END)
            if stored is _END:
                self.tail = iter(())
                return 0
            if type(stored) is not StoreCell or type(stored[0]) is not Cell:
                raise Unfused("a WAL cell that is not a StoreCell")
            cell = <tuple>stored[0]
            row, family, qualifier, ts, kind, value, tags = cell
            if not (type(row) is bytes and type(family) is bytes and type(qualifier) is bytes
                    and type(value) is bytes and type(ts) is int and type(kind) is int
                    and type(stored[1]) is int) or tags:
                raise Unfused("a WAL cell of fields the reference reads")
            if not (_LONG_MIN <= ts <= _LONG_MAX and 0 <= kind <= 255
                    and _LONG_MIN <= stored[1] <= _LONG_MAX):
                raise Unfused("a WAL cell of times past 64 bits")
            if _compare(<const uint8_t*>PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row),
                        <const uint8_t*>PyBytes_AS_STRING(self.start),
                        PyBytes_GET_SIZE(self.start)) < 0:
                continue
            kv = &self.tail_kvs[1 - self.tail_slot]
            kv.row, kv.row_len = <const uint8_t*>PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row)
            kv.family = <const uint8_t*>PyBytes_AS_STRING(family)
            kv.family_len = PyBytes_GET_SIZE(family)
            kv.qualifier = <const uint8_t*>PyBytes_AS_STRING(qualifier)
            kv.qualifier_len = PyBytes_GET_SIZE(qualifier)
            kv.value = <const uint8_t*>PyBytes_AS_STRING(value)
            kv.value_len = PyBytes_GET_SIZE(value)
            kv.ts, kv.kind, kv.mvcc = ts, kind, stored[1]
            if self.head != NULL and _sorts_before(kv, self.head):
                raise Unfused("WAL cells out of scan order")
            self.tail_was, self.tail_now = self.tail_now, stored
            self.tail_slot = 1 - self.tail_slot
            self.head, self.mvcc = kv, kv.mvcc
            return 1


cdef inline bint _sorts_before(const Kv* kv, const Kv* was) noexcept:
    """Whether ``kv`` sorts before ``was`` (a file's or the tail's order broken)."""
    cdef int order = _compare(kv.row, kv.row_len, was.row, was.row_len)
    if order == 0:
        order = _compare(kv.family, kv.family_len, was.family, was.family_len)
    if order == 0:
        order = _compare(kv.qualifier, kv.qualifier_len, was.qualifier, was.qualifier_len)
    if order == 0:
        order = (kv.ts < was.ts) - (kv.ts > was.ts)
    if order == 0:
        order = (kv.kind < was.kind) - (kv.kind > was.kind)
    return order < 0


cdef inline bint _before(_Stream a, _Stream b) noexcept:
    """Whether ``a``'s head comes first (``_visible._before``)."""
    cdef const Kv* x = a.head
    cdef const Kv* y = b.head
    cdef int order = _compare(x.row, x.row_len, y.row, y.row_len)
    if order == 0:
        order = _compare(x.family, x.family_len, y.family, y.family_len)
    if order == 0:
        order = _compare(x.qualifier, x.qualifier_len, y.qualifier, y.qualifier_len)
    if order:
        return order < 0
    if x.ts != y.ts:
        return x.ts > y.ts
    if x.kind != y.kind:
        return x.kind > y.kind
    if a.mvcc != b.mvcc:
        return a.mvcc > b.mvcc
    return a.order > b.order


cdef class _Merge:
    """``_visible._Merge`` over raw heads: the streams' heads in a binary heap."""
    cdef list heap
    cdef bint pending

    def __init__(self, sources, newer, bytes start):
        cdef _Stream stream
        self.heap = []
        for order, source in enumerate(sources):
            stream = _Stream()
            stream.blocks, stream.order, stream.start = source.blocks, order, start
            stream.family = source.family
            stream.has_reset = source.reset is not None
            stream.reset = 0 if source.reset is None else source.reset
            stream.half = WHOLE if source.half is None else TOP if source.half.top else BOTTOM
            stream.split_row = None if source.half is None else source.half.split_row
            if stream.advance():
                self.heap.append(stream)
        stream = _Stream()
        stream.tail, stream.start, stream.order = newer, start, len(sources)
        if stream.advance():
            self.heap.append(stream)
        for at in range(len(self.heap) // 2 - 1, -1, -1):
            self.sift(at)

    cdef const Kv* next_cell(self) except? NULL:
        """The next cell in scan order, or NULL after the last."""
        cdef list heap = self.heap
        cdef _Stream top
        if self.pending:
            top = heap[0]
            if not top.advance():
                last = heap.pop()
                if heap:
                    heap[0] = last
            if heap:
                self.sift(0)
        if not heap:
            self.pending = False
            return NULL
        self.pending = True
        return (<_Stream>heap[0]).head

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


def region_digest(sources, newer, dict made, bytes start, bytes stop, RangeDigest into):
    """Add to ``into`` the rows ``region.region_rows`` gives of ``sources``
    (``merge.merge_sources``' fields, their ``blocks`` ``plain_block``'s) and ``newer`` (an
    iterator of the WAL tail's ``StoreCell``s, in scan order) from ``start`` up to ``stop``
    (empty: the region's end), every family's matcher made of ``made``
    (``_visible.store_settings``); raises ``Unfused`` where it leaves the region to them."""
    cdef _Merge merge = _Merge(sources, newer, start)
    cdef list names = list(made), stores = []
    cdef _Store store = None
    cdef Buf at_row, at_family, piece_row
    cdef bint started = False, pieces = False
    cdef const Kv* kv
    cdef Py_ssize_t k
    cdef _Sink sink = into.sink
    cdef const uint8_t* stop_at = <const uint8_t*>PyBytes_AS_STRING(stop)
    cdef Py_ssize_t stop_len = PyBytes_GET_SIZE(stop)
    cdef const uint8_t* start_at = <const uint8_t*>PyBytes_AS_STRING(start)
    cdef Py_ssize_t start_len = PyBytes_GET_SIZE(start)
    cdef bytes last = into.last_row if type(into.last_row) is bytes else None
    for name in names:
        stores.append(_new_store(made[name]))
    at_row.p = at_family.p = piece_row.p = NULL
    at_row.cap = at_family.cap = piece_row.cap = 0
    at_row.held = at_family.held = piece_row.held = False
    try:
        while True:
            kv = merge.next_cell()
            if kv == NULL:
                break
            if stop_len and _compare(kv.row, kv.row_len, stop_at, stop_len) >= 0:
                break  # the range's end: its files are not read past it
            if not started or not _holds(&at_row, kv.row, kv.row_len) \
                    or not _holds(&at_family, kv.family, kv.family_len):
                started = True
                _keep(&at_row, kv.row, kv.row_len)
                _keep(&at_family, kv.family, kv.family_len)
                store = None
                for k in range(len(names)):
                    if _compare(kv.family, kv.family_len,
                                <const uint8_t*>PyBytes_AS_STRING(names[k]),
                                PyBytes_GET_SIZE(names[k])) == 0:
                        store = stores[k]
                        break
                if store is None:
                    raise Unfused("a cell of a family no rules name")
                store.reset()
            if not store.take(kv) or _compare(kv.row, kv.row_len, start_at, start_len) < 0:
                continue
            if not pieces or not _holds(&piece_row, kv.row, kv.row_len):
                # a new row's piece: counted unless it goes on the row added last
                if pieces or last is None or PyBytes_GET_SIZE(last) != kv.row_len \
                        or memcmp(PyBytes_AS_STRING(last), kv.row, kv.row_len) != 0:
                    into.rows += 1
                pieces = True
                _keep(&piece_row, kv.row, kv.row_len)
            into.cells += 1
            sink.cell(<const char*>kv.row, kv.row_len, <const char*>kv.family, kv.family_len,
                      <const char*>kv.qualifier, kv.qualifier_len, kv.ts, kv.kind,
                      <const char*>kv.value, kv.value_len)
        if pieces:
            into.last_row = PyBytes_FromStringAndSize(<const char*>piece_row.p, piece_row.n)
    finally:
        free(at_row.p)
        free(at_family.p)
        free(piece_row.p)


cdef _Store _new_store(tuple settings):
    """A matcher of ``_visible.store_settings``' arguments for one family."""
    cdef _Store store = _Store()
    oldest, min_ts, max_ts, _now, versions, min_versions, see_past = settings
    store.oldest, store.min_ts, store.max_ts = oldest, min_ts, max_ts
    store.versions, store.min_versions, store.see_past_deletes = versions, min_versions, see_past
    store.deleted.p = store.ended.p = store.column.p = NULL
    store.reset()
    return store
