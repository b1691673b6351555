# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copies of the data block decoders: unencoded cells (``keyvalue.block_cells``),
ROW_INDEX_V1 (``rowindex.py``), PREFIX (``prefix.py``), DIFF (``diff.py``) and FAST_DIFF
(``fastdiff.py``), built by ``make setup`` (``scripts/build-speedups.py``);
``decoders.py`` chooses between them and the references.

Each decodes a whole block on C integers into a list of ``StoreCell``, or answers None at
the first thing that is not plainly well formed (a length past the block, a varint longer
than five bytes, a key that does not parse, a size that does not add up, a timestamp or
mvcc past 63 bits, tags the reference's ``parse_tags`` refuses, a compressed tag that does
not resolve): the reference then reads the block, so it hands out the cells before the fault
and raises its own error. Rows, families, timestamps and values that repeat from the cell
before are one object. Compressed tags (``tagcompression.py``) are read with ``_TagDict``,
the reference's ``LruDictionary`` of 127 slots on C arrays.

``unencoded_block`` runs the same decoders to write an encoded block's cells back as an unencoded
block's bytes (no Python object per cell), for the compiled region digest
(``_digestscan.pyx``), which indexes unencoded blocks in place; it answers None where the
decoder would, or at a cell with tags (which that loop leaves to the rows).
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, realloc
from libc.string cimport memcmp, memcpy

from hbase_migrate.hfile._rawbytes cimport _int32, _int64, _vlong
from hbase_migrate.plain_tuples cimport plain_tuple

from hbase_migrate.hfile.diff import DIFF
from hbase_migrate.hfile.fastdiff import FAST_DIFF
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.prefix import PREFIX
from hbase_migrate.hfile.rowindex import ROW_INDEX_V1
from hbase_migrate.wal.cells import CellCorruptError, parse_tags
from hbase_migrate.wal.model import Cell, Tag

DEF TS_TYPE = 9  # a key's timestamp and type
DEF KEY_INFRASTRUCTURE = 12  # rowLen, famLen, timestamp, type
DEF TAG_SLOTS = 127  # tagcompression.TAG_DICTIONARY_CAPACITY
DEF NOT_IN_DICTIONARY = 0xFF

cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    #define memset_zero(p, n) memset((p), 0, (n))
    #define INT64_MIN_ INT64_MIN
    #define INT64_MAX_ INT64_MAX
    """
    void memset_zero(void* p, Py_ssize_t n)
    int64_t INT64_MIN_
    int64_t INT64_MAX_


cdef tuple _NO_TAGS = ()


cdef inline Py_ssize_t _cint(const uint8_t* d, Py_ssize_t p, Py_ssize_t end,
                             Py_ssize_t* value) noexcept:
    """A varint of at most five bytes that fits a Java int at ``p`` (as ``decode_varint32``
    reads it): the position after it, or -1 (the reference decides)."""
    cdef uint64_t v = 0
    cdef int shift = 0
    cdef uint8_t b
    while p < end and shift < 35:
        b = d[p]
        v |= <uint64_t>(b & 0x7F) << shift
        p += 1
        if b < 0x80:
            if v > 0x7FFFFFFF:
                return -1
            value[0] = <Py_ssize_t>v
            return p
        shift += 7
    return -1


cdef inline bytes _sub(const uint8_t* d, Py_ssize_t n):
    return PyBytes_FromStringAndSize(<const char*>d, n)


cdef inline bint _holds(object known, const uint8_t* d, Py_ssize_t n):
    return (known is not None and PyBytes_GET_SIZE(known) == n
            and memcmp(PyBytes_AS_STRING(known), d, n) == 0)


cdef class _TagDict:
    """A block's tag dictionary as a reader uses HBase's ``LRUDictionary`` (``add``, ``get``;
    ``wal/dictionary.py``): slots taken in order until all 127 are, then the least recently
    used one reused; a slot added or got becomes the most recently used. The recency order is
    a list linked through ``newer`` and ``older`` (-1 ends it)."""
    cdef list slots
    cdef int size, newest, oldest
    cdef int newer[TAG_SLOTS]
    cdef int older[TAG_SLOTS]

    def __cinit__(self):
        self.slots = [None] * TAG_SLOTS
        self.size = 0
        self.newest = self.oldest = -1

    cdef void unlink(self, int i) noexcept:
        if self.newer[i] >= 0:
            self.older[self.newer[i]] = self.older[i]
        else:
            self.newest = self.older[i]
        if self.older[i] >= 0:
            self.newer[self.older[i]] = self.newer[i]
        else:
            self.oldest = self.newer[i]

    cdef void make_newest(self, int i) noexcept:
        self.newer[i] = -1
        self.older[i] = self.newest
        if self.newest >= 0:
            self.newer[self.newest] = i
        self.newest = i
        if self.oldest < 0:
            self.oldest = i

    cdef object get(self, int i):
        """Slot ``i``'s entry, or None when it holds none."""
        if i >= self.size:
            return None
        if i != self.newest:
            self.unlink(i)
            self.make_newest(i)
        return self.slots[i]

    cdef void add(self, bytes entry):
        cdef int i
        if PyBytes_GET_SIZE(entry) == 0:  # takes no slot (the caller refuses it)
            return
        if self.size < TAG_SLOTS:
            i = self.size
            self.size += 1
        else:
            i = self.oldest
            self.unlink(i)
        self.slots[i] = entry
        self.make_newest(i)


cdef class _Cells:
    """The cells of one block as they are made, and what the cell before made; or, with
    ``unencode``, the block's bytes unencoded (``out``)."""
    cdef list cells
    cdef object row, family, timestamp, tags, value
    cdef const uint8_t* value_at  # where ``value`` was read from
    cdef int64_t ts
    cdef bint unencode
    cdef uint8_t* out
    cdef Py_ssize_t out_len, out_cap, mvcc_at, mvcc_end
    cdef Py_ssize_t unencoded  # bytes the encoder counted for the cells made
    cdef bytes data  # the block, for ``parse_tags``
    cdef const uint8_t* d
    cdef Py_ssize_t end
    cdef bint with_tags, with_mvcc
    cdef _TagDict tag_dict  # None unless the tags after a cint length are compressed

    def __cinit__(self, bytes data, bint tags, bint mvcc, bint compressed_tags=False,
                  bint unencode=False):
        self.cells = []
        self.unencode = unencode
        self.data = data
        self.d = <const uint8_t*>PyBytes_AS_STRING(data)
        self.end = PyBytes_GET_SIZE(data)
        self.with_tags, self.with_mvcc = tags, mvcc
        self.ts = 0
        self.tag_dict = _TagDict() if tags and compressed_tags else None

    def __dealloc__(self):
        free(self.out)

    cdef int put(self, const uint8_t* src, Py_ssize_t n) except -1:
        """Append ``n`` bytes to ``out``."""
        cdef void* grown
        cdef Py_ssize_t want = self.out_len + n
        if want > self.out_cap:
            if want < 2 * self.out_cap + 4096:
                want = 2 * self.out_cap + 4096
            grown = realloc(self.out, want)
            if grown == NULL:
                raise MemoryError()
            self.out, self.out_cap = <uint8_t*>grown, want
        memcpy(self.out + self.out_len, src, n)
        self.out_len += n
        return 0

    cdef int put_int32(self, Py_ssize_t n) except -1:
        cdef uint8_t b[4]
        b[0] = (n >> 24) & 0xFF
        b[1] = (n >> 16) & 0xFF
        b[2] = (n >> 8) & 0xFF
        b[3] = n & 0xFF
        return self.put(b, 4)

    cdef object result(self):
        """The cells made, or the unencoded block's bytes."""
        if self.unencode:
            return PyBytes_FromStringAndSize(<const char*>self.out, self.out_len)
        return self.cells

    cdef Py_ssize_t compressed_tags(self, Py_ssize_t p, Py_ssize_t tags_len):
        """``tagcompression.read_compressed_tags`` of ``tags_len`` bytes at ``p`` into
        ``self.tags``: the position after them, or -1."""
        cdef list made = []
        cdef Py_ssize_t produced = 0, n
        cdef int status
        cdef object entry
        while produced < tags_len:
            if p >= self.end:
                return -1
            status = self.d[p]
            if status == NOT_IN_DICTIONARY:
                p = _cint(self.d, p + 1, self.end, &n)
                if p < 0 or p + n > self.end:
                    return -1
                entry = _sub(self.d + p, n)
                p += n
                self.tag_dict.add(entry)
            else:
                if status >= 0x80 or p + 2 > self.end:
                    return -1
                entry = self.tag_dict.get((status << 8) | self.d[p + 1])
                if entry is None:
                    return -1
                p += 2
            n = PyBytes_GET_SIZE(entry)
            if n == 0:
                return -1
            made.append(plain_tuple(Tag, ((<const uint8_t*>PyBytes_AS_STRING(entry))[0],
                                          entry[1:])))
            produced += 2 + n
        if produced != tags_len:
            return -1
        self.tags = tuple(made)
        return p

    cdef Py_ssize_t tail(self, Py_ssize_t p, int tags_len_bytes, int64_t* mvcc):
        """A cell's tags (``tags_len_bytes``: 2, a uint16 length; else a cint) and mvcc
        from ``p``, counted into ``unencoded`` as its encoder does: the position after
        them, or -1. ``self.tags`` holds the tags."""
        cdef Py_ssize_t tags_len = 0, after
        self.tags = _NO_TAGS
        if self.with_tags:
            if tags_len_bytes == 2:
                if p + 2 > self.end:
                    return -1
                tags_len = (<Py_ssize_t>self.d[p] << 8) | self.d[p + 1]
                p += 2
            else:
                p = _cint(self.d, p, self.end, &tags_len)
                if p < 0:
                    return -1
            if tags_len and self.unencode:
                return -1
            if self.tag_dict is not None:
                if tags_len:
                    p = self.compressed_tags(p, tags_len)
                    if p < 0:
                        return -1
            else:
                if p + tags_len > self.end:
                    return -1
                if tags_len:
                    try:
                        self.tags = parse_tags(self.data, p, p + tags_len)
                    except CellCorruptError:
                        return -1
                p += tags_len
            self.unencoded += 2 + tags_len
        mvcc[0] = 0
        self.mvcc_at = self.mvcc_end = p
        if self.with_mvcc:
            after = _vlong(self.d, p, self.end, mvcc)
            if after < 0:
                return -1
            self.unencoded += after - p
            p = self.mvcc_end = after
        return p

    cdef bint add(self, const uint8_t* key, Py_ssize_t key_len, const uint8_t* value,
                  Py_ssize_t value_len, int64_t mvcc) except -1:
        """The cell of ``key`` (a KeyValue key) and the ``value_len`` bytes at ``value`` with
        ``self.tags`` (unencoded: written to ``out``, its mvcc as the block sent it); False
        when the key does not parse (``keyvalue.parse_key``)."""
        cdef Py_ssize_t fam_at, qual_at, ts_at = key_len - TS_TYPE
        cdef int64_t ts
        if key_len < KEY_INFRASTRUCTURE:
            return False
        fam_at = 2 + ((<Py_ssize_t>key[0] << 8) | key[1])
        if fam_at + 1 + TS_TYPE > key_len:
            return False
        qual_at = fam_at + 1 + key[fam_at]
        if qual_at > ts_at:
            return False
        self.unencoded += 8 + key_len + value_len
        if self.unencode:
            self.put_int32(key_len)
            self.put_int32(value_len)
            self.put(key, key_len)
            self.put(value, value_len)
            self.put(self.d + self.mvcc_at, self.mvcc_end - self.mvcc_at)
            return True
        if value != self.value_at or self.value is None:
            self.value, self.value_at = _sub(value, value_len), value
        if not _holds(self.row, key + 2, fam_at - 2):
            self.row = _sub(key + 2, fam_at - 2)
        if not _holds(self.family, key + fam_at + 1, qual_at - fam_at - 1):
            self.family = _sub(key + fam_at + 1, qual_at - fam_at - 1)
        ts = _int64(key + ts_at)
        if self.timestamp is None or ts != self.ts:
            self.timestamp, self.ts = ts, ts
        cell = plain_tuple(Cell, (self.row, self.family, _sub(key + qual_at, ts_at - qual_at),
                                  self.timestamp, key[key_len - 1], self.value, self.tags))
        self.cells.append(plain_tuple(StoreCell, (cell, mvcc)))
        return True


cdef class _Key:
    """The previous key and the one being rebuilt (malloc'd, grown as needed)."""
    cdef uint8_t* prev
    cdef uint8_t* cur
    cdef Py_ssize_t prev_len, cap

    def __dealloc__(self):
        free(self.prev)
        free(self.cur)

    cdef int reserve(self, Py_ssize_t size) except -1:
        cdef void* grown
        if size <= self.cap:
            return 0
        grown = realloc(self.prev, size)
        if grown == NULL:
            raise MemoryError()
        self.prev = <uint8_t*>grown
        grown = realloc(self.cur, size)
        if grown == NULL:
            raise MemoryError()
        self.cur = <uint8_t*>grown
        self.cap = size
        return 0

    cdef void swap(self, Py_ssize_t cur_len) noexcept:
        cdef uint8_t* held = self.prev
        self.prev, self.cur, self.prev_len = self.cur, held, cur_len


cdef Py_ssize_t _stem(_Key k, const uint8_t* d, Py_ssize_t p, Py_ssize_t end,
                      Py_ssize_t common, Py_ssize_t stem, bint first) noexcept:
    """``fastdiff.key_stem`` into ``k.cur``: the key without timestamp and type from the
    previous key's first ``common`` bytes and those sent at ``p``; the position after them,
    or -1."""
    cdef const uint8_t* prev = k.prev
    cdef Py_ssize_t prev_row, fam_len, row_len, sent, at
    if first:
        if common != 0 or stem < 0 or p + stem > end:
            return -1
        memcpy(k.cur, d + p, stem)
        return p + stem
    prev_row = 2 + ((<Py_ssize_t>prev[0] << 8) | prev[1])
    if common >= prev_row:
        if common > k.prev_len - TS_TYPE or stem < common or p + stem - common > end:
            return -1
        memcpy(k.cur, prev, common)
        memcpy(k.cur + common, d + p, stem - common)
        return p + stem - common
    fam_len = 1 + prev[prev_row]
    if common < 2:  # the row's length differs
        if p + 2 - common > end:
            return -1
        memcpy(k.cur, prev, common)
        memcpy(k.cur + common, d + p, 2 - common)
        p += 2 - common
        row_len = (<Py_ssize_t>k.cur[0] << 8) | k.cur[1]
        if p + row_len > end or 2 + row_len + fam_len > stem:
            return -1
        memcpy(k.cur + 2, d + p, row_len)
        p += row_len
    else:
        row_len = prev_row - 2
        if p + prev_row - common > end or prev_row + fam_len > stem:
            return -1
        memcpy(k.cur, prev, common)
        memcpy(k.cur + common, d + p, prev_row - common)
        p += prev_row - common
    at = 2 + row_len
    memcpy(k.cur + at, prev + prev_row, fam_len)
    at += fam_len
    sent = stem - at
    if p + sent > end:
        return -1
    memcpy(k.cur + at, d + p, sent)
    return p + sent


cdef Py_ssize_t _lengths_and_stem(_Key k, const uint8_t* d, Py_ssize_t p, Py_ssize_t end,
                                  int flag, int same_key_length, int same_value_length,
                                  Py_ssize_t* key_len, Py_ssize_t* value_len,
                                  bint first) except -2:
    """A DIFF or FAST_DIFF cell's lengths after its flag (``Cursor.lengths``: each sent
    unless ``flag`` says it is the previous cell's) and its key stem into ``k.cur``
    (``_stem``): the position after them, or -1."""
    cdef Py_ssize_t common
    if not flag & same_key_length:
        p = _cint(d, p, end, key_len)
        if p < 0:
            return -1
    if not flag & same_value_length:
        p = _cint(d, p, end, value_len)
        if p < 0:
            return -1
    p = _cint(d, p, end, &common)
    if p < 0 or key_len[0] < TS_TYPE or key_len[0] > k.prev_len + end:
        return -1
    k.reserve(key_len[0])
    return _stem(k, d, p, end, common, key_len[0] - TS_TYPE, first)


cdef Py_ssize_t _cell(_Cells out, _Key k, Py_ssize_t p, Py_ssize_t key_len,
                      const uint8_t* value, Py_ssize_t value_len) except -2:
    """The cell of the key rebuilt in ``k.cur`` and ``value`` once its tags and mvcc at
    ``p`` are read (a cint tags length), the key kept as the previous one: the position
    after it, or -1."""
    cdef int64_t version
    p = out.tail(p, 0, &version)
    if p < 0 or not out.add(k.cur, key_len, value, value_len, version):
        return -1
    k.swap(key_len)
    return p


cdef Py_ssize_t _sent_value_cell(_Cells out, _Key k, Py_ssize_t p, Py_ssize_t key_len,
                                 Py_ssize_t value_len) except -2:
    """``_cell`` with the ``value_len`` bytes of value at ``p``: the position after it, or
    -1."""
    if p + value_len > out.end:
        return -1
    return _cell(out, k, p + value_len, key_len, out.d + p, value_len)


def fast_diff_cells(bytes data, bint tags, bint mvcc, bint compressed_tags=False):
    """``fastdiff.fast_diff_cells`` of ``data`` (after the encoding id) as a list, or None."""
    cdef _Cells out = _Cells(data, tags, mvcc, compressed_tags)
    return out.result() if _fast_diff(out) else None


cdef bint _fast_diff(_Cells out) except -1:
    """FAST_DIFF's cells into ``out``; False where ``fast_diff_cells`` answers None."""
    cdef _Key k = _Key()
    cdef const uint8_t* d = out.d
    cdef Py_ssize_t end = out.end, p = 4, key_len = 0, value_len = 0, stem, shared
    cdef Py_ssize_t value_held = 0
    cdef int flag
    cdef bint first = True
    cdef const uint8_t* value = d
    if end < 4:
        return False
    k.reserve(64)
    memset_zero(k.prev, KEY_INFRASTRUCTURE)  # the reference's key before the first
    k.prev_len = KEY_INFRASTRUCTURE
    while p < end:
        flag = d[p]
        p = _lengths_and_stem(k, d, p + 1, end, flag, 8, 16, &key_len, &value_len, first)
        stem = key_len - TS_TYPE
        shared = flag & 7
        if p < 0 or p + 8 - shared > end:
            return False
        memcpy(k.cur + stem, k.prev + k.prev_len - TS_TYPE, shared)
        memcpy(k.cur + stem + shared, d + p, 8 - shared)
        p += 8 - shared
        if flag & 32:
            k.cur[key_len - 1] = k.prev[k.prev_len - 1]
        else:
            if p >= end:
                return False
            k.cur[key_len - 1] = d[p]
            p += 1
        if not flag & 64:
            if p + value_len > end:
                return False
            value, value_held = d + p, value_len
            p += value_len
        elif value_held != value_len:
            return False
        p = _cell(out, k, p, key_len, value, value_len)
        if p < 0:
            return False
        first = False
    return out.unencoded == _int32(d)


def diff_cells(bytes data, bint tags, bint mvcc, bint compressed_tags=False):
    """``diff.diff_cells`` of ``data`` (after the encoding id) as a list, or None."""
    cdef _Cells out = _Cells(data, tags, mvcc, compressed_tags)
    return out.result() if _diff(out) else None


cdef bint _diff(_Cells out) except -1:
    """DIFF's cells into ``out``; False where ``diff_cells`` answers None."""
    cdef _Key k = _Key()
    cdef const uint8_t* d = out.d
    cdef Py_ssize_t end = out.end, p, key_len = 0, value_len = 0, stem, fam, size, b
    cdef int flag
    cdef int64_t timestamp = 0, number
    cdef uint64_t raw
    cdef uint8_t kind = 4
    if end < 5:
        return False
    p = 5 + d[4]
    if p > end:
        return False
    fam = d[4] + 1
    k.reserve(64 + fam)
    memset_zero(k.prev, 2 + fam + TS_TYPE)
    memcpy(k.prev + 2, d + 4, fam)
    k.prev_len = 2 + fam + TS_TYPE
    while p < end:
        flag = d[p]
        p = _lengths_and_stem(k, d, p + 1, end, flag, 1, 2, &key_len, &value_len, False)
        stem = key_len - TS_TYPE
        size = 1 + ((flag >> 4) & 7)
        if p < 0 or p + size > end:
            return False
        raw = 0
        for b in range(size - 1, -1, -1):
            raw = (raw << 8) | d[p + b]
        p += size
        if raw >> 63:
            return False
        number = -<int64_t>raw if flag & 128 else <int64_t>raw
        if flag & 8:
            if (number > 0 and timestamp < INT64_MIN_ + number) or (
                    number < 0 and timestamp > INT64_MAX_ + number):
                return False
            timestamp -= number
        else:
            timestamp = number
        if not flag & 4:
            if p >= end:
                return False
            kind = d[p]
            p += 1
        for b in range(8):
            k.cur[stem + b] = <uint8_t>((<uint64_t>timestamp) >> (56 - 8 * b))
        k.cur[key_len - 1] = kind
        p = _sent_value_cell(out, k, p, key_len, value_len)
        if p < 0:
            return False
    return out.unencoded == _int32(d)


def prefix_cells(bytes data, bint tags, bint mvcc, bint compressed_tags=False):
    """``prefix.prefix_cells`` of ``data`` (after the encoding id) as a list, or None."""
    cdef _Cells out = _Cells(data, tags, mvcc, compressed_tags)
    return out.result() if _prefix(out) else None


cdef bint _prefix(_Cells out) except -1:
    """PREFIX's cells into ``out``; False where ``prefix_cells`` answers None."""
    cdef _Key k = _Key()
    cdef const uint8_t* d = out.d
    cdef Py_ssize_t end = out.end, p = 4, suffix, value_len, common, key_len
    if end < 4:
        return False
    k.reserve(64)
    k.prev_len = 0
    while p < end:
        p = _cint(d, p, end, &suffix)
        if p >= 0:
            p = _cint(d, p, end, &value_len)
        if p >= 0:
            p = _cint(d, p, end, &common)
        if p < 0 or common > k.prev_len or p + suffix + value_len > end:
            return False
        key_len = common + suffix
        k.reserve(key_len)
        memcpy(k.cur, k.prev, common)
        memcpy(k.cur + common, d + p, suffix)
        p += suffix
        p = _sent_value_cell(out, k, p, key_len, value_len)
        if p < 0:
            return False
    return out.unencoded == _int32(d)


cdef Py_ssize_t _plain(_Cells out, Py_ssize_t end, list starts) except -2:
    """Unencoded cells of ``out``'s block up to ``end`` into ``out``; with ``starts`` (a
    list), the position of each cell that starts a row is appended to it. 0, or -1."""
    cdef const uint8_t* d = out.d
    cdef const uint8_t* row = NULL
    cdef Py_ssize_t p = 0, start, key_len, value_len, after, row_len = 0, new_len
    cdef int64_t version
    out.end = end  # tags and mvcc end with the cells
    while p < end:
        start = p
        if p + 8 > end:
            return -1
        key_len = _int32(d + p)
        value_len = _int32(d + p + 4)
        p += 8
        if key_len < KEY_INFRASTRUCTURE or value_len < 0 or p + key_len + value_len > end:
            return -1
        after = out.tail(p + key_len + value_len, 2, &version)
        if after < 0 or not out.add(d + p, key_len, d + p + key_len, value_len, version):
            return -1
        if starts is not None:
            new_len = (<Py_ssize_t>d[p] << 8) | d[p + 1]
            if row == NULL or new_len != row_len or memcmp(row, d + p + 2, row_len):
                starts.append(start)
                row, row_len = d + p + 2, new_len
        p = after
    return 0


def plain_cells(bytes data, bint tags, bint mvcc, bint compressed_tags=False):
    """The cells of ``keyvalue.block_cells`` of an unencoded block as a list, or None (tags
    never compressed: ``compressed_tags`` has no effect)."""
    cdef _Cells out = _Cells(data, tags, mvcc)
    if _plain(out, out.end, None) < 0:
        return None
    return out.result()


def row_index_cells(bytes data, bint tags, bint mvcc, bint compressed_tags=False):
    """``rowindex.row_index_cells`` of ``data`` (after the encoding id) as a list, or None
    (tags never compressed: ``compressed_tags`` has no effect)."""
    cdef _Cells out = _Cells(data, tags, mvcc)
    return out.result() if _row_index(out) else None


cdef bint _row_index(_Cells out) except -1:
    """ROW_INDEX_V1's cells into ``out``; False where ``row_index_cells`` answers None."""
    cdef const uint8_t* d = out.d
    cdef Py_ssize_t end = out.end, cells_size, rows, i
    cdef list starts = []
    if end < 8:
        return False
    cells_size = _int32(d + end - 4)
    if not 0 <= cells_size <= end - 8:
        return False
    rows = _int32(d + cells_size)
    if rows < 0 or cells_size + 4 + 4 * rows + 4 != end:
        return False
    if _plain(out, cells_size, starts) < 0 or len(starts) != rows:
        return False
    for i in range(rows):
        if _int32(d + cells_size + 4 + 4 * i) != <Py_ssize_t>starts[i]:
            return False
    return True


def unencoded_block(int encoding, bytes data, bint tags, bint mvcc):
    """The cells of an encoded block's ``data`` (after its encoding id: ROW_INDEX_V1,
    PREFIX, DIFF or FAST_DIFF) as an unencoded block's bytes without tags (each cell's mvcc
    as the block sent it, when ``mvcc``), or None where its decoder answers None, at a cell
    with tags, or for another encoding."""
    cdef _Cells out = _Cells(data, tags, mvcc, False, True)
    cdef bint ok
    if encoding == FAST_DIFF:
        ok = _fast_diff(out)
    elif encoding == DIFF:
        ok = _diff(out)
    elif encoding == PREFIX:
        ok = _prefix(out)
    elif encoding == ROW_INDEX_V1:
        ok = _row_index(out)
    else:
        return None
    return out.result() if ok else None
