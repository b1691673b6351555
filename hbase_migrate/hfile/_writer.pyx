# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copy of the HFile writer's per-cell loop: ``HFileWriter.append`` with its
order check, KeyValue key (``encoders.flat_key``), the data block encoders' ``add``
(``encoders.py``: NONE, ROW_INDEX_V1, PREFIX, DIFF, FAST_DIFF, tags plain or
dictionary-compressed) and the file info's counts (``HFileWriter._track``), on C integers,
built by ``make setup`` (``scripts/build-speedups.py``); ``writer.py`` chooses between it
and the reference (``WRITER``).

It keeps the writer's and the encoder's state where the reference keeps it (their
attributes), so the two make the same bytes, and hands a cell to the reference
(``HFileWriter.append_reference``) whenever it is not plainly writable: out of order,
another family, a timestamp, type or mvcc past their ranges, a row, family or tags too
long. The reference then writes it or raises its own error. The Bloom filters and the end
of a block stay the reference's (``_blooms``, ``_finish_block``, ``_inline``,
``_new_block``), called from here as ``append`` calls them.
"""

from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from hbase_migrate.hfile.diff import DIFF as _DIFF
from hbase_migrate.hfile.fastdiff import FAST_DIFF as _FAST_DIFF
from hbase_migrate.hfile.prefix import PREFIX as _PREFIX
from hbase_migrate.hfile.rowindex import ROW_INDEX_V1 as _ROW_INDEX_V1
from hbase_migrate.wal.cells import MAX_FAMILY_LENGTH, MAX_ROW_LENGTH, MAX_TAGS_LENGTH, tags_bytes
from hbase_migrate.wal.dictionary import write_item
from hbase_migrate.wal.model import cell_order

cdef extern from *:
    """
    #include <stdint.h>
    #define INT64_MIN__ INT64_MIN
    #define INT64_MAX__ INT64_MAX
    """
    int64_t INT64_MIN_ "INT64_MIN__"
    int64_t INT64_MAX_ "INT64_MAX__"


DEF KV_INFRASTRUCTURE = 8  # keyLen, valueLen
DEF PUT = 4
DEF DELETE_FAMILY_VERSION = 10
DEF DELETE_COLUMN = 12
DEF DELETE_FAMILY = 14

cdef int NONE_ = 0
cdef int PREFIX_ = _PREFIX
cdef int DIFF_ = _DIFF
cdef int FAST_DIFF_ = _FAST_DIFF
cdef int ROW_INDEX_ = _ROW_INDEX_V1
cdef Py_ssize_t MAX_ROW = MAX_ROW_LENGTH
cdef Py_ssize_t MAX_FAMILY = MAX_FAMILY_LENGTH
cdef Py_ssize_t MAX_TAGS = MAX_TAGS_LENGTH
cdef object INT64_LOW = -(1 << 63)
cdef object INT64_HIGH = (1 << 63) - 1


cdef inline int _put(bytearray out, const void* data, Py_ssize_t n) except -1:
    """Append ``n`` bytes to ``out``."""
    cdef Py_ssize_t at = PyByteArray_GET_SIZE(out)
    if n <= 0:
        return 0
    PyByteArray_Resize(out, at + n)
    memcpy(PyByteArray_AS_STRING(out) + at, data, n)
    return 0


cdef inline Py_ssize_t _varint(uint8_t* buf, uint64_t value) noexcept:
    """``encode_varint`` of a non-negative value into ``buf``: its length."""
    cdef Py_ssize_t n = 0
    while value >= 0x80:
        buf[n] = <uint8_t>((value & 0x7F) | 0x80)
        value >>= 7
        n += 1
    buf[n] = <uint8_t>value
    return n + 1


cdef inline int _bytes_needed(uint64_t value) noexcept:
    """Bytes of a non-negative value, at least 1 (``(bit_length + 7) // 8``)."""
    cdef int n = 0
    while value:
        value >>= 8
        n += 1
    return n if n else 1


cdef inline Py_ssize_t _vlong(uint8_t* buf, int64_t value) noexcept:
    """Hadoop's ``WritableUtils.writeVLong`` into ``buf``: its length."""
    cdef int size, count, i
    cdef uint64_t rest
    if -112 <= value <= 127:
        buf[0] = <uint8_t>(value & 0xFF)
        return 1
    size = -112
    if value < 0:
        value = ~value
        size = -120
    rest = <uint64_t>value
    count = 0
    while rest:
        rest >>= 8
        count += 1
    size -= count
    buf[0] = <uint8_t>(size & 0xFF)
    for i in range(count):
        buf[1 + i] = <uint8_t>((<uint64_t>value) >> (8 * (count - 1 - i)))
    return 1 + count


cdef inline void _be64(uint8_t* buf, int64_t value) noexcept:
    cdef int i
    cdef uint64_t v = <uint64_t>value
    for i in range(8):
        buf[i] = <uint8_t>(v >> (56 - 8 * i))


cdef inline Py_ssize_t _shared(const uint8_t* a, Py_ssize_t alen, const uint8_t* b,
                               Py_ssize_t blen) noexcept:
    cdef Py_ssize_t limit = alen if alen < blen else blen
    cdef Py_ssize_t i = 0
    while i < limit and a[i] == b[i]:
        i += 1
    return i


cdef inline int _compare(bytes a, bytes b) noexcept:
    """Bytes order of ``a`` and ``b``: -1, 0 or 1."""
    cdef Py_ssize_t alen = PyBytes_GET_SIZE(a), blen = PyBytes_GET_SIZE(b)
    cdef int c = memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), alen if alen < blen else blen)
    if c:
        return -1 if c < 0 else 1
    return -1 if alen < blen else (1 if alen > blen else 0)


cdef Py_ssize_t _common_prefix(bytes row, bytes family, bytes qualifier, int64_t ts, int kind,
                               object previous, bint with_ts_type) except -1:
    """``encoders.common_prefix`` of the cell and ``previous`` (a Cell)."""
    cdef tuple prev = <tuple>previous
    cdef bytes prow = prev[0], pqualifier = prev[2]
    cdef Py_ssize_t rlen = PyBytes_GET_SIZE(row), prlen = PyBytes_GET_SIZE(prow)
    cdef Py_ssize_t qlen = PyBytes_GET_SIZE(qualifier), pqlen = PyBytes_GET_SIZE(pqualifier)
    cdef Py_ssize_t common, q_common, ts_common
    cdef uint8_t a[8]
    cdef uint8_t b[8]
    if rlen != prlen:
        return 1 if (rlen >> 8) == (prlen >> 8) else 0
    common = 2 + _shared(<const uint8_t*>PyBytes_AS_STRING(row), rlen,
                         <const uint8_t*>PyBytes_AS_STRING(prow), prlen)
    if common - 2 != rlen:
        return common
    common += 1 + PyBytes_GET_SIZE(family)
    q_common = _shared(<const uint8_t*>PyBytes_AS_STRING(qualifier), qlen,
                       <const uint8_t*>PyBytes_AS_STRING(pqualifier), pqlen)
    common += q_common
    if not with_ts_type or (qlen if qlen > pqlen else pqlen) != q_common:
        return common
    _be64(a, ts)
    _be64(b, <int64_t>prev[3])
    ts_common = _shared(a, 8, b, 8)
    common += ts_common
    if ts_common == 8 and kind == <int>prev[4]:
        common += 1
    return common


cdef int _key_rest(bytearray out, bytes row, bytes family, bytes qualifier,
                   Py_ssize_t common) except -1:
    """``encoders._key_rest``: the key after ``common``, timestamp and type excluded."""
    cdef Py_ssize_t rlen = PyBytes_GET_SIZE(row)
    cdef Py_ssize_t row_end = 2 + rlen, skip
    cdef uint8_t head[2]
    head[0] = <uint8_t>(rlen >> 8)
    head[1] = <uint8_t>(rlen & 0xFF)
    if common < row_end:
        if common < 2:
            _put(out, head + common, 2 - common)
            _put(out, PyBytes_AS_STRING(row), rlen)
        else:
            _put(out, PyBytes_AS_STRING(row) + (common - 2), rlen - (common - 2))
        _put(out, PyBytes_AS_STRING(qualifier), PyBytes_GET_SIZE(qualifier))
        return 0
    skip = common - row_end - 1 - PyBytes_GET_SIZE(family)
    if skip < 0:
        skip = 0
    _put(out, PyBytes_AS_STRING(qualifier) + skip, PyBytes_GET_SIZE(qualifier) - skip)
    return 0


cdef inline int _head(bytearray out, uint8_t* buf, Py_ssize_t n, Py_ssize_t common,
                      bytes row, bytes family, bytes qualifier) except -1:
    """DIFF's and FAST_DIFF's cell head: the ``n`` bytes of ``buf`` (flag and lengths), the
    common length, the key's rest."""
    n += _varint(buf + n, common)
    _put(out, buf, n)
    return _key_rest(out, row, family, qualifier, common)


cdef inline int _tail(bytearray out, bint same_type, int kind, bytes value,
                      bint same_value) except -1:
    """DIFF's and FAST_DIFF's cell tail: the type unless the previous cell's, the value
    unless the previous cell's."""
    cdef uint8_t code = <uint8_t>kind
    if not same_type:
        _put(out, &code, 1)
    if not same_value:
        _put(out, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
    return 0


cdef bytes _flat_key(bytes row, bytes family, bytes qualifier, int64_t ts, int kind):
    """``encoders.flat_key``."""
    cdef Py_ssize_t rlen = PyBytes_GET_SIZE(row), flen = PyBytes_GET_SIZE(family)
    cdef Py_ssize_t qlen = PyBytes_GET_SIZE(qualifier)
    cdef bytes key = PyBytes_FromStringAndSize(NULL, 2 + rlen + 1 + flen + qlen + 9)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(key)
    p[0] = <uint8_t>(rlen >> 8)
    p[1] = <uint8_t>(rlen & 0xFF)
    memcpy(p + 2, PyBytes_AS_STRING(row), rlen)
    p += 2 + rlen
    p[0] = <uint8_t>flen
    memcpy(p + 1, PyBytes_AS_STRING(family), flen)
    p += 1 + flen
    memcpy(p, PyBytes_AS_STRING(qualifier), qlen)
    p += qlen
    _be64(p, ts)
    p[8] = <uint8_t>kind
    return key


def flat_key(cell):
    """``encoders.flat_key`` compiled (for the tests)."""
    return _flat_key(cell[0], cell[1], cell[2], cell[3], cell[4])


cdef int _prefix(bytearray out, bytes key, bytes row, bytes family, bytes qualifier,
                 int64_t ts, int kind, bytes value, object prev) except -1:
    cdef uint8_t buf[30]
    cdef Py_ssize_t n, common = 0
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(key)
    if prev is not None:
        common = _common_prefix(row, family, qualifier, ts, kind, prev, True)
    n = _varint(buf, klen - common)
    n += _varint(buf + n, PyBytes_GET_SIZE(value))
    n += _varint(buf + n, common)
    _put(out, buf, n)
    _put(out, PyBytes_AS_STRING(key) + common, klen - common)
    _put(out, PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value))
    return 0


cdef int _diff(bytearray out, bytes key, bytes row, bytes family, bytes qualifier,
               int64_t ts, int kind, bytes value, object prev, bytes prev_key) except -1:
    cdef uint8_t buf[40]
    cdef uint8_t number_bytes[8]
    cdef Py_ssize_t n = 0, common = 0, flen, i
    cdef int flag = 0, ts_bytes, diff_bytes, value_bytes
    cdef uint64_t number, uts, udiff
    cdef int64_t prev_ts, diff
    cdef bint negative, minus, overflow
    if prev is None:
        if ts < 0:
            flag |= 128
            uts = <uint64_t>0 - <uint64_t>ts
        else:
            uts = <uint64_t>ts
        ts_bytes = _bytes_needed(uts)
        flag |= (ts_bytes - 1) << 4
        flen = PyBytes_GET_SIZE(family)
        buf[0] = <uint8_t>flen
        _put(out, buf, 1)
        _put(out, PyBytes_AS_STRING(family), flen)
        value_bytes, number = ts_bytes, uts
    else:
        common = _common_prefix(row, family, qualifier, ts, kind, prev, False)
        if PyBytes_GET_SIZE(key) == PyBytes_GET_SIZE(prev_key):
            flag |= 1
        if PyBytes_GET_SIZE(value) == PyBytes_GET_SIZE(<bytes>prev[5]):
            flag |= 2
        if kind == <int>prev[4]:
            flag |= 4
        prev_ts = <int64_t>prev[3]
        overflow = (ts > 0 and prev_ts < INT64_MIN_ + ts) or (ts < 0 and prev_ts > INT64_MAX_ + ts)
        negative = ts < 0
        uts = (<uint64_t>0 - <uint64_t>ts) if negative else <uint64_t>ts
        ts_bytes = 8 if negative and ts == INT64_MIN_ else _bytes_needed(uts)
        if overflow:  # |diff| of 64 bits or more: the timestamp is never longer
            flag |= ((ts_bytes - 1) << 4) | (128 if negative else 0)
            value_bytes, number = ts_bytes, uts
        else:
            diff = prev_ts - ts
            minus = diff < 0
            udiff = (<uint64_t>0 - <uint64_t>diff) if minus else <uint64_t>diff
            diff_bytes = _bytes_needed(udiff)
            if diff_bytes < ts_bytes:
                flag |= ((diff_bytes - 1) << 4) | 8 | (128 if minus else 0)
                value_bytes, number = diff_bytes, udiff
            else:
                flag |= ((ts_bytes - 1) << 4) | (128 if negative else 0)
                value_bytes, number = ts_bytes, uts
    buf[0] = <uint8_t>flag
    n = 1
    if not flag & 1:
        n += _varint(buf + n, PyBytes_GET_SIZE(key))
    if not flag & 2:
        n += _varint(buf + n, PyBytes_GET_SIZE(value))
    _head(out, buf, n, common, row, family, qualifier)
    for i in range(8):
        number_bytes[i] = <uint8_t>(number >> (8 * i))
    _put(out, number_bytes, value_bytes)
    return _tail(out, flag & 4, kind, value, False)


cdef int _fast_diff(bytearray out, bytes key, bytes row, bytes family, bytes qualifier,
                    int64_t ts, int kind, bytes value, object prev, bytes prev_key) except -1:
    cdef uint8_t buf[40]
    cdef uint8_t tsb[8]
    cdef uint8_t ptsb[8]
    cdef Py_ssize_t n, common, shared
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(key), vlen = PyBytes_GET_SIZE(value)
    cdef int flag = 0
    cdef bytes prev_value
    if prev is None:
        buf[0] = 0
        n = 1
        n += _varint(buf + n, klen)
        n += _varint(buf + n, vlen)
        buf[n] = 0
        _put(out, buf, n + 1)
        _put(out, PyBytes_AS_STRING(key), klen)
        _put(out, PyBytes_AS_STRING(value), vlen)
        return 0
    prev_value = prev[5]
    common = _common_prefix(row, family, qualifier, ts, kind, prev, False)
    if klen == PyBytes_GET_SIZE(prev_key):
        flag |= 8
    if vlen == PyBytes_GET_SIZE(prev_value):
        flag |= 16
        if memcmp(PyBytes_AS_STRING(value), PyBytes_AS_STRING(prev_value), vlen) == 0:
            flag |= 64
    if kind == <int>prev[4]:
        flag |= 32
    _be64(tsb, ts)
    _be64(ptsb, <int64_t>prev[3])
    shared = _shared(tsb, 8, ptsb, 8)
    if shared > 7:
        shared = 7
    flag |= <int>shared
    buf[0] = <uint8_t>flag
    n = 1
    if not flag & 8:
        n += _varint(buf + n, klen)
    if not flag & 16:
        n += _varint(buf + n, vlen)
    _head(out, buf, n, common, row, family, qualifier)
    _put(out, tsb + shared, 8 - shared)
    return _tail(out, flag & 32, kind, value, flag & 64)


cdef int _encode(object encoder, tuple cell, bytes row, bytes family, bytes qualifier,
                 int64_t ts, int kind, bytes value, bytes key, int64_t mvcc,
                 bytes raw) except -1:
    """The encoder's ``add`` (``BlockEncoder.add`` and its subclasses' ``_cell``)."""
    cdef bytearray out = encoder.out
    cdef int encoding = encoder.encoding
    cdef Py_ssize_t before = PyByteArray_GET_SIZE(out), size, extra = 0, n
    cdef Py_ssize_t klen = PyBytes_GET_SIZE(key), vlen = PyBytes_GET_SIZE(value)
    cdef Py_ssize_t tlen = PyBytes_GET_SIZE(raw)
    cdef bint tags = encoder.tags, with_mvcc = encoder.mvcc
    cdef uint8_t buf[16]
    cdef object dictionary, prev
    if encoding == NONE_ or encoding == ROW_INDEX_:
        if encoding == ROW_INDEX_:
            last_row = encoder.last_row
            if last_row is None or <bytes>last_row != row:
                encoder.rows.append(before)
                encoder.last_row = row
                extra = 4
        for n in range(4):
            buf[n] = <uint8_t>(klen >> (24 - 8 * n))
            buf[4 + n] = <uint8_t>(vlen >> (24 - 8 * n))
        _put(out, buf, 8)
        _put(out, PyBytes_AS_STRING(key), klen)
        _put(out, PyBytes_AS_STRING(value), vlen)
        size = KV_INFRASTRUCTURE + klen + vlen
        if tags:
            buf[0] = <uint8_t>(tlen >> 8)
            buf[1] = <uint8_t>(tlen & 0xFF)
            _put(out, buf, 2)
            _put(out, PyBytes_AS_STRING(raw), tlen)
            size += 2 + tlen
    else:
        prev = encoder.prev
        if encoding == PREFIX_:
            _prefix(out, key, row, family, qualifier, ts, kind, value, prev)
        elif encoding == DIFF_:
            _diff(out, key, row, family, qualifier, ts, kind, value, prev, encoder.prev_key)
        else:
            _fast_diff(out, key, row, family, qualifier, ts, kind, value, prev,
                       encoder.prev_key)
        size = KV_INFRASTRUCTURE + klen + vlen
        if tags:
            _put(out, buf, _varint(buf, tlen))
            dictionary = encoder.dictionary
            if tlen and dictionary is not None:
                for tag in cell[6]:
                    write_item(out, bytes((tag.type,)) + tag.value, dictionary)
            else:
                _put(out, PyBytes_AS_STRING(raw), tlen)
            size += 2 + tlen
    if with_mvcc:
        n = _vlong(buf, mvcc)
        _put(out, buf, n)
        size += n
    if encoding != NONE_ and encoding != ROW_INDEX_:
        encoder.prev = cell
        encoder.prev_key = key
    encoder.unencoded += size
    encoder.encoded += PyByteArray_GET_SIZE(out) - before + extra
    encoder.count += 1
    return 0


def append(writer, cell, mvcc=0):
    """``HFileWriter.append`` compiled (see the module's docstring)."""
    cdef tuple c
    cdef object r, f, q, t, k, v, tags
    cdef bytes row, family, qualifier, value, raw, key
    cdef int64_t ts, m, min_ts, max_ts
    cdef int kind
    cdef bint duplicate = False
    cdef tuple last
    cdef int order
    cdef object encoder, block_size
    cdef Py_ssize_t tlen, size
    if type(cell) is tuple or not isinstance(cell, tuple) or len(cell) != 7:
        return _reference(writer, cell, mvcc)
    c = <tuple>cell
    r, f, q, t, k, v, tags = c[0], c[1], c[2], c[3], c[4], c[5], c[6]
    if (type(r) is not bytes or type(f) is not bytes or type(q) is not bytes
            or type(v) is not bytes or not isinstance(t, int) or not isinstance(k, int)
            or not isinstance(mvcc, int) or not INT64_LOW <= t <= INT64_HIGH
            or not 0 <= k <= 255 or not INT64_LOW <= mvcc <= INT64_HIGH):
        return _reference(writer, cell, mvcc)
    row, family, qualifier, value = r, f, q, v
    ts, kind, m = t, k, mvcc
    raw = tags_bytes(tags) if tags else b""
    tlen = PyBytes_GET_SIZE(raw)
    if (PyBytes_GET_SIZE(row) > MAX_ROW or PyBytes_GET_SIZE(family) > MAX_FAMILY
            or tlen > MAX_TAGS):
        return _reference(writer, cell, mvcc)
    if writer.last is not None:
        last = <tuple>writer.last
        if <bytes>last[1] != family:
            return _reference(writer, cell, mvcc)
        order = _compare(row, last[0])
        if order == 0:
            order = _compare(qualifier, last[2])
        if order == 0:
            t = last[3]
            order = -1 if ts > <int64_t>t else (1 if ts < <int64_t>t else 0)
        if order == 0:
            k = last[4]
            order = -1 if kind > <int>k else (1 if kind < <int>k else 0)
        if order < 0:
            return _reference(writer, cell, mvcc)
        duplicate = order == 0
    if writer.bloom is not None or kind == DELETE_FAMILY or kind == DELETE_FAMILY_VERSION:
        writer._blooms(cell)
    encoder = writer.encoder
    block_size = writer._block_size
    if not duplicate and (encoder.encoded >= block_size or encoder.unencoded >= block_size):
        writer._finish_block()
        writer._inline(closing=False)
        writer._new_block()
    key = _flat_key(row, family, qualifier, ts, kind)
    _encode(encoder, c, row, family, qualifier, ts, kind, value, key, m, raw)
    if writer.first_in_block is None:
        writer.first_in_block = cell
    writer.last = cell
    # the file info's counts (HFileWriter._track)
    writer.key_bytes += PyBytes_GET_SIZE(key)
    writer.value_bytes += PyBytes_GET_SIZE(value)
    size = 8 + PyBytes_GET_SIZE(key) + PyBytes_GET_SIZE(value) + (2 + tlen if tlen else 0) + 4
    if size > <Py_ssize_t>writer.biggest:
        writer.biggest = size
        writer.biggest_key = key
    writer.entries += 1
    if m > <int64_t>writer.max_mvcc:
        writer.max_mvcc = m
    if tlen > <Py_ssize_t>writer.max_tags:
        writer.max_tags = tlen
    if kind == PUT and ts < <int64_t>writer.earliest_put:
        writer.earliest_put = ts
    min_ts, max_ts = writer.min_ts, writer.max_ts
    if ts < min_ts:
        min_ts = ts
    if ts > max_ts:
        max_ts = ts
    if kind == DELETE_COLUMN or kind == DELETE_FAMILY:
        if 0 < min_ts:
            min_ts = 0
        if 0 > max_ts:
            max_ts = 0
    writer.min_ts, writer.max_ts = min_ts, max_ts


cdef _reference(writer, cell, mvcc):
    """The reference's ``append`` for a cell this loop does not take (its order key of the
    previous cell first: this loop does not keep it)."""
    if writer.last is not None:
        writer.last_order = cell_order(writer.last)
    writer.append_reference(cell, mvcc)


cdef inline uint32_t _murmur(const uint8_t* data, Py_ssize_t length, uint32_t seed) noexcept:
    """``bloomwriter.murmur_hash`` (HBase's ``MurmurHash.hash``) as its 32 bits."""
    cdef uint32_t m = 0x5BD1E995, h = seed ^ <uint32_t>length, k
    cdef Py_ssize_t whole = length >> 2, i, at
    cdef int left = length & 3
    for i in range(whole):
        at = i * 4
        k = (<uint32_t>data[at] | (<uint32_t>data[at + 1] << 8) | (<uint32_t>data[at + 2] << 16)
             | (<uint32_t>data[at + 3] << 24))
        k *= m
        k ^= k >> 24
        k *= m
        h *= m
        h ^= k
    if left:
        at = whole * 4
        if left >= 3:
            h ^= (<uint32_t><int32_t><int8_t>data[at + 2]) << 16
        if left >= 2:
            h ^= (<uint32_t><int32_t><int8_t>data[at + 1]) << 8
        h ^= <uint32_t><int32_t><int8_t>data[at]
        h *= m
    h ^= h >> 13
    h *= m
    h ^= h >> 15
    return h


def bloom_add(bytearray bits, Py_ssize_t bit_size, int hash_count, bytes key):
    """``bloomwriter.BloomChunk.add`` compiled: set the key's ``hash_count`` bits."""
    cdef const uint8_t* data = <const uint8_t*>PyBytes_AS_STRING(key)
    cdef Py_ssize_t length = PyBytes_GET_SIZE(key)
    cdef uint32_t h1 = _murmur(data, length, 0)
    cdef uint32_t h2 = _murmur(data, length, h1)
    cdef uint32_t v = h1
    cdef uint64_t at
    cdef uint8_t* out = <uint8_t*>PyByteArray_AS_STRING(bits)
    cdef int i
    if bit_size <= 0 or PyByteArray_GET_SIZE(bits) * 8 < bit_size:
        raise ValueError(f"a Bloom chunk of {PyByteArray_GET_SIZE(bits)} bytes is not "
                         f"{bit_size} bits")
    for i in range(hash_count):  # |h1 + i * h2| in int arithmetic, mod the bits
        at = ((<uint64_t>1 << 32) - v if v & 0x80000000 else v) % <uint64_t>bit_size
        out[at >> 3] |= <uint8_t>(1 << (at & 7))
        v += h2


def murmur_hash(bytes data, seed):
    """``bloomwriter.murmur_hash`` compiled (for the tests): a signed int."""
    cdef uint32_t h = _murmur(<const uint8_t*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data),
                              <uint32_t>(seed & 0xFFFFFFFF))
    return <int32_t>h
