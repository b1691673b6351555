# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copies of the reader's hot loops: the WALKey in its usual layout
(``walkey.decode_key``) and the two cell loops (``cells.decode_plain_cells`` and the loop
``cells.compressed_cells_decoder`` returns); and of the RPC client's write loops (a cell
block, a Multi's actions, a batch's stages by row, the cells' weights), built by ``make setup``
(``scripts/build-speedups.py``); ``hotloops`` chooses between them and the reference.

The common case runs here on C integers; everything else goes to the pure-Python code, so
input, output and errors are the reference's: a key in any other layout is the reference's
to decode, a cell whose first bytes are not all loaded hands the rest of the batch to the
reference loop (nothing of the cell consumed yet), and long lengths, dictionary literals
other than a short row, compressed values and tags not held by one filled slot go through
the same helpers the reference calls. What repeats is made once and shared (bytes and ints
are immutable): a key's region, table and scopes when the key before had the same bytes, an
entry's row, family and timestamp when the cell before had the same.
"""

cimport cython
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from hbase_migrate.plain_tuples cimport plain_tuple, untrack

from hbase_migrate.wal.cells import (
    MAX_FAMILY_LENGTH,
    MAX_ROW_LENGTH,
    CellCorruptError,
    _cell_tags,
    _varint32,
    compressed_cells_decoder as _reference_compressed,
    decode_plain_cells as _reference_plain,
    encode_plain_block as _reference_encode,
    parse_tags,
    value_decoder,
)
from hbase_migrate.wal.dictionary import read_item
from struct import error as StructError
from hbase_migrate.wal.model import Cell, Entry, Tag, WalKey
from hbase_migrate.wal.window import CHUNK
from hbase_migrate.wal.walkey import _uncompress, decode_key as _reference_key

cdef object _new = tuple.__new__


cdef inline bytes _sub(const uint8_t* d, Py_ssize_t start, Py_ssize_t stop):
    """``buf[start:stop]`` of the bytes at ``d`` (bounds already checked), without the
    slice object Cython's slicing of ``bytes`` makes."""
    return PyBytes_FromStringAndSize(<const char*>d + start, stop - start)


cdef inline bint _holds(object known, const uint8_t* d, Py_ssize_t start, Py_ssize_t stop):
    """Whether ``known`` (bytes or None) holds exactly ``d[start:stop]``."""
    cdef Py_ssize_t n = stop - start
    return (known is not None and PyBytes_GET_SIZE(known) == n
            and memcmp(PyBytes_AS_STRING(known), d + start, n) == 0)


cdef inline bytes _same_or_sub(object known, const uint8_t* d, Py_ssize_t start,
                               Py_ssize_t stop):
    """``known`` when it holds ``d[start:stop]``, else those bytes made anew: the row of an
    entry's cells, its families and its key's names are made once and shared (bytes are
    immutable), not made and freed again for every cell and entry."""
    return <bytes>known if _holds(known, d, start, stop) else _sub(d, start, stop)


cdef inline int32_t _int32(const uint8_t* d, Py_ssize_t p) noexcept:
    return <int32_t>((<uint32_t>d[p] << 24) | (<uint32_t>d[p + 1] << 16)
                     | (<uint32_t>d[p + 2] << 8) | d[p + 3])


cdef inline int64_t _int64(const uint8_t* d, Py_ssize_t p) noexcept:
    return <int64_t>((<uint64_t>_int32(d, p) << 32) | <uint32_t>_int32(d, p + 4))


cdef inline Py_ssize_t _varint(const uint8_t* d, Py_ssize_t p, Py_ssize_t end,
                                int64_t* value) noexcept:
    """A varint of at most 9 bytes (a non-negative int64) at ``p``: the position after it,
    or -1 when it is longer or runs past ``end``."""
    cdef uint64_t v = 0
    cdef int shift = 0
    cdef uint8_t b
    while p < end and shift < 63:
        b = d[p]
        v |= <uint64_t>(b & 0x7F) << shift
        p += 1
        if b < 0x80:
            value[0] = <int64_t>v
            return p
        shift += 7
    return -1


cdef object _entry(bytes item, object dictionary):
    """A compressed WALKey field: a reference to a filled slot here, else the reference's
    ``_uncompress`` (literals, errors)."""
    cdef list slots
    cdef Py_ssize_t idx
    if len(item) == 2 and item[0] < 0x80:
        slots = dictionary._entries
        idx = item[0] << 8 | item[1]
        if idx < len(slots):
            dictionary._order.move_to_end(idx)
            return slots[idx]
    return _uncompress(item, dictionary)


# The names and scopes of the last key decoded without dictionaries: a file's keys repeat them.
cdef object _last_region = None, _last_table = None, _last_scopes = None
cdef bytes _last_scope_bytes = None


def decode_key(bytes buf, Py_ssize_t pos, Py_ssize_t end, dicts):
    """``walkey.decode_key``: the usual layout here (fields 1-4 with one-byte lengths, then
    only FamilyScopes in their usual form, one after the other, and fields 7, 9, 10, 11 as
    varints of up to nine bytes), any other through the reference. Nothing is changed before
    the whole key is known to be in that layout."""
    cdef int64_t count
    key = _key(buf, pos, end, dicts, &count)
    return key, count


cdef object _reference(bytes buf, Py_ssize_t pos, Py_ssize_t end, object dicts,
                       int64_t* count_out):
    key, count = _reference_key(buf, pos, end, dicts)
    count_out[0] = count
    return key


cdef object _key(bytes buf, Py_ssize_t pos, Py_ssize_t end, object dicts, int64_t* count_out):
    """``decode_key``'s key, its cell count in ``count_out``."""
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t p, s, n, rs, ts
    cdef int64_t sequence, write_time, value
    cdef int64_t count = 0
    cdef uint8_t tag
    global _last_region, _last_table, _last_scopes, _last_scope_bytes
    cdef Py_ssize_t scope_start = -1, scope_end = -1  # the scopes' bytes (one stretch)
    cdef object nonce_group = None, nonce = None, orig = None
    if end > PyBytes_GET_SIZE(buf) or end - pos < 10 or d[pos] != 0x0A:
        return _reference(buf, pos, end, dicts, count_out)
    n = d[pos + 1]
    rs = pos + 2
    p = rs + n
    if n >= 0x80 or p + 2 > end or d[p] != 0x12:
        return _reference(buf, pos, end, dicts, count_out)
    n = d[p + 1]
    ts = p + 2
    p = ts + n
    if n >= 0x80 or p + 2 > end or d[p] != 0x18:
        return _reference(buf, pos, end, dicts, count_out)
    p = _varint(d, p + 1, end, &sequence)
    if p < 0 or p + 2 > end or d[p] != 0x20:
        return _reference(buf, pos, end, dicts, count_out)
    p = _varint(d, p + 1, end, &write_time)
    if p < 0:
        return _reference(buf, pos, end, dicts, count_out)
    while p < end:
        tag = d[p]
        if tag == 0x32:  # FamilyScope {1 family, 2 scope_type}, one-byte lengths
            if p + 2 >= end:
                return _reference(buf, pos, end, dicts, count_out)
            n = d[p + 1]
            s = p + 2
            p = s + n
            if (n < 4 or n >= 0x80 or p > end or d[s] != 0x0A or d[s + 1] != n - 4
                    or d[p - 2] != 0x10 or d[p - 1] >= 0x80):
                return _reference(buf, pos, end, dicts, count_out)
            if scope_start < 0:
                scope_start = s - 2
            elif scope_end != s - 2:  # scopes apart from each other
                return _reference(buf, pos, end, dicts, count_out)
            scope_end = p
            continue
        if (tag != 0x38 and tag != 0x48 and tag != 0x50 and tag != 0x58) or p + 1 >= end:
            return _reference(buf, pos, end, dicts, count_out)
        p = _varint(d, p + 1, end, &value)
        if p < 0:
            return _reference(buf, pos, end, dicts, count_out)
        if tag == 0x38:
            count = value & 0xFFFFFFFF
        elif tag == 0x48:
            nonce_group = value
        elif tag == 0x50:
            nonce = value
        else:
            orig = value
    cdef tuple scopes
    if scope_start < 0:  # no scopes
        scope_start = scope_end = 0
    if dicts is not None:
        region = _entry(_sub(d, rs, ts - 2), dicts.region)
        table = _entry(_sub(d, ts, ts + d[ts - 1]), dicts.table)
        scopes = _scopes(d, scope_start, scope_end, dicts.family)
    else:
        region = _last_region = _same_or_sub(_last_region, d, rs, ts - 2)
        table = _last_table = _same_or_sub(_last_table, d, ts, ts + d[ts - 1])
        if _holds(_last_scope_bytes, d, scope_start, scope_end):
            scopes = <tuple>_last_scopes
        else:
            scopes = _scopes(d, scope_start, scope_end, None)
            _last_scopes, _last_scope_bytes = scopes, _sub(d, scope_start, scope_end)
    count_out[0] = count
    return plain_tuple(WalKey, (region, table, sequence, write_time, scopes, (),
                                nonce_group, nonce, orig, (), None))


cdef tuple _scopes(const uint8_t* d, Py_ssize_t start, Py_ssize_t stop, object family_dict):
    """The (family, scope type) pairs of the FamilyScopes checked in ``d[start:stop]``
    (none when it is empty); with the key's dictionary, the family is its entry."""
    cdef list out = []
    cdef Py_ssize_t s, p = start
    cdef object family
    while p < stop:
        s = p + 2
        p = s + d[p + 1]
        family = _sub(d, s + 2, p - 2)
        out.append((family if family_dict is None else _entry(family, family_dict), d[p - 1]))
    return tuple(out)


def decode_plain_cells(bytes buf, Py_ssize_t p, Py_ssize_t count, ensure):
    """``cells.decode_plain_cells``, compiled."""
    cdef list cells = []
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t blen = PyBytes_GET_SIZE(buf)
    cdef Py_ssize_t i, end, tpos, kv_end, fpos, qpos
    cdef int32_t total, klen, vlen
    cdef int rlen, flen
    cdef tuple tags
    cdef object row = None, family = None, timestamp = None
    cdef int64_t ts, last_ts = 0
    for i in range(count):
        if p + 14 > blen:
            buf = ensure(p + 14)
            d = <const uint8_t*>PyBytes_AS_STRING(buf)
            blen = PyBytes_GET_SIZE(buf)
            if p + 14 > blen:
                return _handed_over(cells, _reference_plain(buf, p, count - i, ensure))
        total = _int32(d, p)
        klen = _int32(d, p + 4)
        vlen = _int32(d, p + 8)
        rlen = (d[p + 12] << 8) | d[p + 13]
        end = p + 4 + <Py_ssize_t>total
        if end > blen:
            buf = ensure(end)
            d = <const uint8_t*>PyBytes_AS_STRING(buf)
            blen = PyBytes_GET_SIZE(buf)
            if end > blen:
                raise IndexError("cell cut off")
        tpos = p + 3 + <Py_ssize_t>klen
        kv_end = tpos + 9 + <Py_ssize_t>vlen
        if klen < 12 or vlen < 0 or kv_end > end or rlen > klen - 12:
            raise CellCorruptError(
                f"KeyValue lengths do not fit: total {total}, key {klen}, value {vlen}, row {rlen}"
            )
        fpos = p + 14 + rlen
        flen = d[fpos]
        qpos = fpos + 1 + flen
        if flen > 127 or qpos > tpos:
            raise CellCorruptError(f"family length {flen} does not fit key length {klen}")
        if kv_end == end:
            tags = ()
        else:
            if end - kv_end < 2 or ((d[kv_end] << 8) | d[kv_end + 1]) != end - kv_end - 2:
                raise CellCorruptError(
                    f"tags length does not fill the {end - kv_end} bytes after the value"
                )
            tags = parse_tags(buf, kv_end + 2, end)
        row = _same_or_sub(row, d, p + 14, fpos)
        family = _same_or_sub(family, d, fpos + 1, qpos)
        ts = _int64(d, tpos)
        if timestamp is None or ts != last_ts:
            timestamp, last_ts = ts, ts
        cells.append(plain_tuple(Cell, (row, family, _sub(d, qpos, tpos), timestamp,
                                        d[tpos + 8], _sub(d, tpos + 9, kv_end), tags)))
        p = end
    return _cells(cells), buf, p


cdef inline Py_ssize_t _put(char* d, Py_ssize_t p, bytes data):
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data)
    memcpy(d + p, PyBytes_AS_STRING(data), n)
    return p + n


cdef inline void _int32_be(char* d, Py_ssize_t p, uint32_t v) noexcept:
    d[p] = <char>(v >> 24)
    d[p + 1] = <char>(v >> 16)
    d[p + 2] = <char>(v >> 8)
    d[p + 3] = <char>v


def encode_plain_block(cells, bint tags=False):
    """``cells.encode_plain_block``, compiled, for cells of bytes fields whose tags are
    left out or absent; any other cell (and one HBase could not hold, which the reference
    refuses) makes the reference encode the whole block."""
    cdef list items = cells if type(cells) is list else list(cells)
    cdef Py_ssize_t size = 0, p = 0, klen, vlen, rlen, flen
    cdef tuple cell
    cdef object row, family, qualifier, value, kind, stamp
    cdef uint64_t ts
    cdef int i
    for c in items:
        if not isinstance(c, tuple) or len(<tuple>c) != 7:
            return _reference_encode(items, tags)
        cell = <tuple>c
        row, family, qualifier, stamp, kind, value = cell[0], cell[1], cell[2], cell[3], \
            cell[4], cell[5]
        if (type(row) is not bytes or type(family) is not bytes or type(qualifier) is not bytes
                or type(value) is not bytes or (tags and cell[6])
                or not isinstance(stamp, int) or not isinstance(kind, int)
                or not -(1 << 63) <= stamp < (1 << 63) or not 0 <= kind <= 255
                or PyBytes_GET_SIZE(row) > MAX_ROW_LENGTH
                or PyBytes_GET_SIZE(family) > MAX_FAMILY_LENGTH):
            return _reference_encode(items, tags)
        size += 24 + PyBytes_GET_SIZE(row) + PyBytes_GET_SIZE(family) \
            + PyBytes_GET_SIZE(qualifier) + PyBytes_GET_SIZE(value)
    out = PyBytes_FromStringAndSize(NULL, size)
    cdef char* d = PyBytes_AS_STRING(out)
    for c in items:
        cell = <tuple>c
        row, family, qualifier, value = cell[0], cell[1], cell[2], cell[5]
        rlen = PyBytes_GET_SIZE(row)
        flen = PyBytes_GET_SIZE(family)
        vlen = PyBytes_GET_SIZE(value)
        klen = 12 + rlen + flen + PyBytes_GET_SIZE(qualifier)
        _int32_be(d, p, <uint32_t>(8 + klen + vlen))
        _int32_be(d, p + 4, <uint32_t>klen)
        _int32_be(d, p + 8, <uint32_t>vlen)
        d[p + 12] = <char>(rlen >> 8)
        d[p + 13] = <char>rlen
        p = _put(d, p + 14, <bytes>row)
        d[p] = <char>flen
        p = _put(d, p + 1, <bytes>family)
        p = _put(d, p, <bytes>qualifier)
        ts = <uint64_t>(<int64_t>cell[3])
        for i in range(8):
            d[p + i] = <char>(ts >> (56 - 8 * i))
        d[p + 8] = <char>(<int>cell[4])
        p = _put(d, p + 9, <bytes>value)
    return out


cdef bytes _META = b"METAFAMILY"  # model.METAFAMILY
cdef list _families = []  # the family names blocks were read with, made once each
cdef tuple _last_families = ()


cdef object _family(const uint8_t* d, Py_ssize_t start, Py_ssize_t stop):
    """The family ``d[start:stop]`` as one shared bytes object (a file names few)."""
    cdef object known
    for known in _families:
        if _holds(known, d, start, stop):
            return known
    if len(_families) >= 64:
        del _families[:32]
    known = _sub(d, start, stop)
    _families.append(known)
    return known


@cython.no_gc  # bytes and a tuple of bytes: in no reference cycle, so not the collector's
cdef class CellBlock:
    """The cells of one entry as the file holds them (uncompressed, no tags, no markers, one
    row, known type codes, all Puts or all deletes): read in the reader's pass without a
    ``Cell`` each, and a sequence of the Cells ``decode_plain_cells`` gives (made when
    iterated). The replay's compiled converter and the CDC renderer read it in place."""

    def __len__(self) -> int:
        return self.count

    def cells(self) -> tuple:
        """The Cells ``decode_plain_cells`` makes of these bytes."""
        return decode_plain_cells(self.buf, self.start, self.count, _no_more)[0]

    def __iter__(self):
        return iter(self.cells())

    def __getitem__(self, index):
        return self.cells()[index]

    def type_counts(self) -> dict:
        """Cells by type code."""
        return {code: self.by_type[code] for code in (4, 8, 10, 12, 14) if self.by_type[code]}

    def __repr__(self) -> str:
        return f"CellBlock({self.count} cells of row {self.row!r} at {self.start}..{self.end})"


def _no_more(Py_ssize_t end):
    raise AssertionError("a CellBlock holds all its bytes")


def decode_plain_block(bytes buf, Py_ssize_t p, Py_ssize_t count, ensure):
    """A ``CellsDecoder`` like ``decode_plain_cells``, whose cells are a :class:`CellBlock`
    when they are all loaded and what a block holds; any other entry's (tags, markers,
    several rows or kinds, odd or damaged bytes) are ``decode_plain_cells``'s, which also
    raises its errors: so the cells are always the same."""
    cdef Py_ssize_t end
    cdef bint loaded = False
    cdef CellBlock block = _block(buf, p, count, ensure, &end, &loaded)
    if block is None:
        return decode_plain_cells(buf, p, count, ensure)
    return block, ensure(end) if loaded else buf, end


cdef CellBlock _block(bytes buf, Py_ssize_t p, Py_ssize_t count, object ensure,
                     Py_ssize_t* end_out, bint* loaded):
    """The :class:`CellBlock` of the ``count`` cells at ``p``, or None when they do not make
    one (or are not all there, or do not parse: ``decode_plain_cells`` tells). Where they
    end goes to ``end_out``; ``loaded`` is set when ``ensure`` was called (the buffer they
    lie in is then its return value). A block holds a copy of its bytes, not the reader's
    window: what a batch holds is then its cells' size, however far apart they lie."""
    global _last_families
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t blen = PyBytes_GET_SIZE(buf)
    cdef Py_ssize_t i, j, q = p, end, tpos, kv_end, fpos, qpos, row_pos = 0, size = 0
    cdef Py_ssize_t by_type[16]
    cdef int32_t total, klen, vlen
    cdef int rlen, flen, row_len = 0, code, f_start = -1, f_len = -1
    cdef tuple last = _last_families  # the families, as the block before had them
    cdef list fams = None  # made only when they differ from ``last``
    cdef Py_ssize_t nfam = 0
    cdef object family
    cdef bint puts = False
    cdef CellBlock block
    if count < 1:
        return None
    for i in range(16):
        by_type[i] = 0
    for i in range(count):
        if q + 14 > blen:
            buf, loaded[0] = ensure(q + 14), True
            d, blen = <const uint8_t*>PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)
            if q + 14 > blen:
                return None
        total, klen, vlen = _int32(d, q), _int32(d, q + 4), _int32(d, q + 8)
        rlen = (d[q + 12] << 8) | d[q + 13]
        end = q + 4 + <Py_ssize_t>total
        if end > blen:
            buf, loaded[0] = ensure(end), True
            d, blen = <const uint8_t*>PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)
        tpos = q + 3 + <Py_ssize_t>klen
        kv_end = tpos + 9 + <Py_ssize_t>vlen
        if (end > blen or total < 0 or klen < 12 or vlen < 0 or kv_end != end  # tags too
                or rlen > klen - 12):
            return None
        fpos = q + 14 + rlen
        flen = d[fpos]
        qpos = fpos + 1 + flen
        code = d[tpos + 8]
        if (flen > 127 or qpos > tpos or not (code == 4 or code == 8 or code == 10
                                               or code == 12 or code == 14)):
            return None
        if i == 0:
            row_pos, row_len, puts = q + 14, rlen, code == 4
        elif (rlen != row_len or (code == 4) != puts
              or memcmp(d + q + 14, d + row_pos, rlen) != 0):
            return None
        if flen != f_len or memcmp(d + fpos + 1, d + f_start, flen) != 0:  # a new run
            f_start, f_len = fpos + 1, flen
            if _holds(_META, d, fpos + 1, qpos):
                return None
            family = _family(d, fpos + 1, qpos)
            j = 0
            while j < nfam and (fams[j] if fams is not None else last[j]) is not family:
                j += 1
            if j == nfam:  # not yet in this block
                if fams is None and (nfam >= len(last) or last[nfam] is not family):
                    fams = list(last[:nfam])
                if fams is not None:
                    fams.append(family)
                nfam += 1
        by_type[code] += 1
        size += rlen + flen + (tpos - qpos) + vlen
        q = end
    block = CellBlock.__new__(CellBlock)
    block.buf, block.start, block.end, block.count = _sub(d, p, q), 0, q - p, count
    end_out[0] = q
    block.row = _sub(d, row_pos, row_pos + row_len)
    block.puts, block.size = puts, size
    for i in range(16):
        block.by_type[i] = by_type[i]
    if fams is None and nfam == len(last):
        block.families = last
    else:
        block.families = _last_families = tuple(fams) if fams is not None else last[:nfam]
    return block


def decode_marker_cells(bytes buf, Py_ssize_t p, Py_ssize_t count, ensure):
    """A ``CellsDecoder`` for a reader that looks only for markers: an entry's cells are
    ``decode_plain_cells``'s when one of them is a METAFAMILY cell or has tags, else left
    out (an empty tuple) once they were checked as ``decode_plain_cells`` checks them.
    Cells that fail a check go to ``decode_plain_cells`` too, which raises its errors: a
    read raises where a full read would."""
    cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t blen = PyBytes_GET_SIZE(buf)
    cdef Py_ssize_t i, q = p, end, tpos, kv_end, fpos, qpos
    cdef int32_t total, klen, vlen
    cdef int rlen, flen
    for i in range(count):
        if q + 14 > blen:
            buf = ensure(q + 14)
            d, blen = <const uint8_t*>PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)
            if q + 14 > blen:
                return decode_plain_cells(buf, p, count, ensure)
        total, klen, vlen = _int32(d, q), _int32(d, q + 4), _int32(d, q + 8)
        rlen = (d[q + 12] << 8) | d[q + 13]
        end = q + 4 + <Py_ssize_t>total
        if end > blen:
            buf = ensure(end)
            d, blen = <const uint8_t*>PyBytes_AS_STRING(buf), PyBytes_GET_SIZE(buf)
        tpos = q + 3 + <Py_ssize_t>klen
        kv_end = tpos + 9 + <Py_ssize_t>vlen
        if end > blen or klen < 12 or vlen < 0 or kv_end != end or rlen > klen - 12:
            return decode_plain_cells(buf, p, count, ensure)  # its errors, or tags
        fpos = q + 14 + rlen
        flen = d[fpos]
        qpos = fpos + 1 + flen
        if flen > 127 or qpos > tpos or _holds(_META, d, fpos + 1, qpos):
            return decode_plain_cells(buf, p, count, ensure)  # its error, or a marker
        q = end
    return (), buf, q


cdef inline tuple _cells(list cells):
    """The cells made here (:func:`plain_tuple`), as one untracked tuple."""
    cdef tuple out = tuple(cells)
    untrack(out)
    return out


cdef tuple _handed_over(list cells, tuple rest):
    """This loop's cells followed by the reference loop's result for the rest of the batch."""
    more, buf, p = rest
    return tuple(cells) + more, buf, p


cdef class CompressedCells:
    """The loop ``cells.compressed_cells_decoder(state)`` returns, compiled: one per file."""

    cdef object state, reference, row_dict, fam_dict, qual_dict, tag_dict, value_of
    cdef dict tag_tuples  # a slot's bytes -> the cell's tags tuple, made once per content
    cdef list rows, fams, quals, tag_slots
    cdef object row_touch, fam_touch, qual_touch, tag_touch, row_order
    cdef Py_ssize_t row_cap
    cdef bint raw_value

    def __init__(self, state):
        self.state = state
        self.reference = _reference_compressed(state)
        self.raw_value = state.value_algorithm is None
        self.value_of = None if self.raw_value else value_decoder(state.value_algorithm)
        self.row_dict, self.fam_dict, self.qual_dict = state.row, state.family, state.qualifier
        self.tag_dict = state.tag
        self.rows, self.row_touch = self.row_dict.fast_get()
        self.fams, self.fam_touch = self.fam_dict.fast_get()
        self.quals, self.qual_touch = self.qual_dict.fast_get()
        self.row_order = self.row_dict.fast_add()[1]
        self.row_cap = self.row_dict.capacity
        self.tag_tuples = {}
        if self.tag_dict is None:
            self.tag_slots, self.tag_touch = [], None
        else:
            self.tag_slots, self.tag_touch = self.tag_dict.fast_get()

    def __call__(self, bytes buf, Py_ssize_t p, Py_ssize_t count, ensure):
        cdef list cells = []
        cdef list rows = self.rows, fams = self.fams, quals = self.quals
        cdef list tag_slots = self.tag_slots
        cdef const uint8_t* d = <const uint8_t*>PyBytes_AS_STRING(buf)
        cdef Py_ssize_t blen = PyBytes_GET_SIZE(buf)
        cdef Py_ssize_t nrow = len(rows), nfam = len(fams), nqual = len(quals)
        cdef Py_ssize_t ntag = len(tag_slots)
        cdef Py_ssize_t i, q, bound, stop, n, slot
        cdef Py_ssize_t key_len, val_len, tags_len, comp_len, row_len, fam_len
        cdef uint8_t s
        cdef int64_t timestamp
        cdef int cell_type
        cdef bytes row, family, qualifier, data
        cdef object value
        cdef tuple tags
        for i in range(count):
            if p + 15 > blen:
                buf = ensure(p + 15)
                d = <const uint8_t*>PyBytes_AS_STRING(buf)
                blen = PyBytes_GET_SIZE(buf)
                if p + 15 > blen:
                    return _handed_over(cells, self.reference(buf, p, count - i, ensure))
            key_len = d[p]
            if key_len < 0x80:
                q = p + 1
            else:
                key_len, q = _varint32(buf, p)
            val_len = d[q]
            if val_len < 0x80:
                q += 1
            elif d[q + 1] < 0x80:
                val_len = (val_len & 0x7F) | (<Py_ssize_t>d[q + 1] << 7)
                q += 2
            else:
                val_len, q = _varint32(buf, q)
            tags_len = d[q]
            if tags_len < 0x80:
                q += 1
            else:
                tags_len, q = _varint32(buf, q)
            if key_len < 12:
                raise CellCorruptError(f"key length {key_len} is shorter than a KeyValue key")
            bound = q + key_len + 24 + (val_len if self.raw_value else 5) + 2 * tags_len
            if bound > blen:
                buf = ensure(bound)
                d = <const uint8_t*>PyBytes_AS_STRING(buf)
                blen = PyBytes_GET_SIZE(buf)
                if bound > blen:  # the data's end is near: the reference's careful path
                    return _handed_over(cells, self.reference(buf, p, count - i, ensure))
            # row: a reference to a filled slot, or a literal with a one-byte length; the
            # bound above holds the row item's first two bytes
            s = d[q]
            if s < 0x80 and (slot := (<Py_ssize_t>s << 8) | d[q + 1]) < nrow:
                self.row_touch(slot)
                row = rows[slot]
                q += 2
            elif s == 0xFF and (n := d[q + 1]) < 0x80 and q + 2 + n <= blen:
                q += 2 + n
                row = _sub(d, q - n, q)
                if not n:
                    pass  # an empty literal takes no slot
                elif nrow < self.row_cap:
                    self.row_order[nrow] = None
                    rows.append(row)
                    nrow += 1
                else:
                    slot = self.row_order.popitem(False)[0]
                    self.row_order[slot] = None
                    rows[slot] = row
            else:
                row, q = read_item(buf, q, blen, self.row_dict)
                nrow = len(rows)
            if q + 2 <= blen and (s := d[q]) < 0x80 and (
                    slot := (<Py_ssize_t>s << 8) | d[q + 1]) < nfam:
                self.fam_touch(slot)
                family = fams[slot]
                q += 2
            else:
                family, q = read_item(buf, q, blen, self.fam_dict)
                nfam = len(fams)
            if q + 2 <= blen and (s := d[q]) < 0x80 and (
                    slot := (<Py_ssize_t>s << 8) | d[q + 1]) < nqual:
                self.qual_touch(slot)
                qualifier = quals[slot]
                q += 2
            else:
                qualifier, q = read_item(buf, q, blen, self.qual_dict)
                nqual = len(quals)
            row_len = len(row)
            fam_len = len(family)
            if row_len > MAX_ROW_LENGTH or fam_len > MAX_FAMILY_LENGTH:
                raise CellCorruptError(f"row length {row_len} or family length {fam_len} too long")
            if 12 + row_len + fam_len + len(qualifier) != key_len:
                raise CellCorruptError(
                    f"row, family and qualifier do not add up to key length {key_len}"
                )
            if q + 9 > blen:
                raise IndexError("cell cut off")
            timestamp = _int64(d, q)
            cell_type = d[q + 8]
            q += 9
            if self.raw_value:
                if q + val_len > blen:
                    raise IndexError("cell value cut off")
                value = _sub(d, q, q + val_len)
                q += val_len
            else:  # varint compLen, compLen bytes
                comp_len = d[q]
                if comp_len < 0x80:
                    q += 1
                else:
                    comp_len, q = _varint32(buf, q)
                stop = q + comp_len
                if stop + 2 * tags_len > blen:
                    buf = ensure(stop + 2 * tags_len)
                    d = <const uint8_t*>PyBytes_AS_STRING(buf)
                    blen = PyBytes_GET_SIZE(buf)
                if stop > blen:
                    raise IndexError("compressed value cut off")
                value = self.value_of(buf[q:stop], val_len)
                q = stop
            if not tags_len:
                tags = ()
            elif (  # one compressed tag, a reference to a filled slot
                q + 2 <= blen
                and (s := d[q]) < 0x80
                and (slot := (<Py_ssize_t>s << 8) | d[q + 1]) < ntag
                and len(<bytes>tag_slots[slot]) + 2 == tags_len
            ):
                self.tag_touch(slot)
                data = tag_slots[slot]
                tags = self.tag_tuples.get(data)
                if tags is None:
                    if len(self.tag_tuples) >= 4096:
                        self.tag_tuples.clear()
                    tags = self.tag_tuples[data] = (_new(Tag, (data[0], data[1:])),)
                q += 2
            else:
                tags, q = _cell_tags(buf, q, blen, tags_len, self.tag_dict)
                ntag = len(tag_slots)
            cells.append(plain_tuple(Cell, (row, family, qualifier, timestamp, cell_type, value,
                                            tags)))
            p = q
        return _cells(cells), buf, p


def entries(reader, End):
    """``WalReader._python_entries`` for an uncompressed file (no dictionaries), compiled:
    the usual entry (a one-byte key length, key and cells loaded or loadable) decoded here,
    any other (and any that fails) by the reader's ``_decode_entry``, which also raises its
    errors and ends (``End``)."""
    cdef object window = reader._window, decode_entry = reader._decode_entry
    cdef object decode_cells = reader._decode_cells, ensure = window.ensure
    cdef bint fast = reader._decode_key is decode_key
    cdef bint blocks = decode_cells is decode_plain_block
    cdef Py_ssize_t pos, index, skip_until = reader._start_offset, offset, key_end, end
    cdef Py_ssize_t chunk = CHUNK
    cdef int64_t count
    cdef bint loaded
    cdef object entry, key, cells
    cdef bytes buf
    cdef const uint8_t* d
    pos, index = reader._start()
    while True:
        offset = window.base + pos
        entry = None
        buf = window.data
        d = <const uint8_t*>PyBytes_AS_STRING(buf)
        if fast and pos + 10 <= PyBytes_GET_SIZE(buf) and d[pos] < 0x80:  # a one-byte length
            key_end = pos + 1 + d[pos]
            if key_end <= PyBytes_GET_SIZE(buf):
                try:
                    key = _key(buf, pos + 1, key_end, None, &count)
                    loaded = False
                    cells = _block(buf, key_end, count, ensure, &end, &loaded) if blocks else None
                    if cells is None:
                        cells, buf, end = decode_cells(buf, key_end, count, ensure)
                except (ValueError, IndexError, StructError):  # the reader's to report
                    pass
                else:
                    entry = plain_tuple(Entry, (key, cells, offset, end - pos, index))
        if entry is None:
            try:
                entry, end = decode_entry(window, pos, index)
            except End as stop:
                reader._ended(stop, offset, index)
                return
        pos = end
        if offset >= skip_until:
            reader.end_offset = offset + (<tuple>entry)[3]
            yield entry
        elif offset + (<tuple>entry)[3] > skip_until:
            raise reader._not_a_boundary(offset, (<tuple>entry)[3], index)
        index += 1
        if pos > chunk:
            window.drop(pos)
            pos = 0


cdef inline Py_ssize_t _varint_size(uint64_t n) noexcept:
    cdef Py_ssize_t size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


cdef inline Py_ssize_t _put_varint(char* d, Py_ssize_t p, uint64_t n) noexcept:
    while n >= 0x80:
        d[p] = <char>((n & 0x7f) | 0x80)
        n >>= 7
        p += 1
    d[p] = <char>n
    return p + 1


def encode_row_actions(list regions, uint64_t kind):
    """``multi.row_multi``'s MultiRequest, compiled: ``regions`` as ``(encoded region
    specifier, [(row, its cells)])``, rows of bytes and cells any sized sequence; None for
    anything else (the reference encodes it)."""
    cdef Py_ssize_t size = 0, index = 0, p = 0, region_size, data_size, action_size, n
    cdef Py_ssize_t kind_size = _varint_size(kind)
    cdef list sizes = []  # per region: its RegionAction's size, then each row's data size
    cdef list region_sizes
    for item in regions:
        specifier, rows = item
        if type(specifier) is not bytes or type(rows) is not list:
            return None
        n = PyBytes_GET_SIZE(specifier)
        region_size = 1 + _varint_size(n) + n
        region_sizes = []
        for pair in <list>rows:
            row, cells = pair
            if type(row) is not bytes:
                return None
            n = PyBytes_GET_SIZE(row)
            data_size = 1 + _varint_size(n) + n + 2 + kind_size + _varint_size(len(cells))
            action_size = 1 + _varint_size(index) + 1 + _varint_size(data_size) + data_size
            region_size += 1 + _varint_size(action_size) + action_size
            region_sizes.append(data_size)
            index += 1
        sizes.append((region_size, region_sizes))
        size += 1 + _varint_size(region_size) + region_size
    out = PyBytes_FromStringAndSize(NULL, size)
    cdef char* d = PyBytes_AS_STRING(out)
    index = 0
    for item, (region_size, region_sizes) in zip(regions, sizes):
        specifier, rows = item
        d[p] = 0x0a  # MultiRequest.regionAction
        p = _put_varint(d, p + 1, region_size)
        d[p] = 0x0a  # RegionAction.region
        p = _put_varint(d, p + 1, PyBytes_GET_SIZE(specifier))
        p = _put(d, p, <bytes>specifier)
        for pair, data_size in zip(<list>rows, <list>region_sizes):
            row, cells = pair
            action_size = 1 + _varint_size(index) + 1 + _varint_size(data_size) + data_size
            d[p] = 0x1a  # RegionAction.action
            p = _put_varint(d, p + 1, action_size)
            d[p] = 0x08  # Action.index
            p = _put_varint(d, p + 1, index)
            d[p] = 0x12  # Action.mutation
            p = _put_varint(d, p + 1, data_size)
            d[p] = 0x0a  # MutationProto.row
            p = _put_varint(d, p + 1, PyBytes_GET_SIZE(row))
            p = _put(d, p, <bytes>row)
            d[p] = 0x10  # MutationProto.mutate_type
            p = _put_varint(d, p + 1, kind)
            d[p] = 0x40  # MutationProto.associated_cell_count
            p = _put_varint(d, p + 1, len(cells))
            index += 1
    assert p == size
    return out


cdef inline Py_ssize_t _plain_weight(object c, Py_ssize_t overhead):
    """A cell's ``sizing.cell_bytes``; -1 for a cell not of plain bytes fields."""
    if not isinstance(c, tuple) or len(<tuple>c) != 7:
        return -1
    cdef tuple cell = <tuple>c
    row, family, qualifier, value = cell[0], cell[1], cell[2], cell[5]
    if (type(row) is not bytes or type(family) is not bytes or type(qualifier) is not bytes
            or type(value) is not bytes):
        return -1
    return (PyBytes_GET_SIZE(row) + PyBytes_GET_SIZE(family) + PyBytes_GET_SIZE(qualifier)
            + PyBytes_GET_SIZE(value) + overhead)


def cells_weight(cells, Py_ssize_t overhead):
    """``sizing.cells_bytes``, compiled, for cells of plain bytes fields; None for any
    other (the reference weighs them)."""
    cdef Py_ssize_t total = 0, weight
    for c in cells:
        weight = _plain_weight(c, overhead)
        if weight < 0:
            return None
        total += weight
    return total


def cut_results(tuple cells, counts):
    """A scan reply's cells cut into its Results by ``counts`` (``cells_per_result``), each
    a tuple left out of the cycle collector (it holds only :func:`plain_tuple` cells): a
    reply of tens of thousands of one-cell rows would otherwise have the collector walk
    them all, generation after generation, while the rows are digested or written."""
    cdef list results = []
    cdef Py_ssize_t at = 0, n, total = len(cells)
    cdef tuple piece
    for count in counts:
        n = count
        if n < 0 or at + n > total:
            raise IndexError("cells_per_result counts more cells than the block holds")
        piece = cells[at:at + n]
        untrack(piece)
        results.append(piece)
        at += n
    return results


def row_lists(results):
    """Each non-empty Result of a reply as a list of its cells, left out of the cycle
    collector as :func:`cut_results`'s tuples are (lists of cells hold no container)."""
    cdef list rows = []
    cdef list row
    for cells in results:
        if cells:
            row = list(cells)
            untrack(row)
            rows.append(row)
    return rows
