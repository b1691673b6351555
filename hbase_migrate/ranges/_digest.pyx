# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copy of ``stats.digest_rows``'s loop, built by ``make setup``
(``scripts/build-speedups.py``); ``stats.py`` holds the reference and chooses. The same bytes
go to SHA-256: each cell's length-prefixed fields are written into one buffer in C, which
is hashed a buffer at a time. A piece of more than one cell is checked for scan order in C
and sorted (by ``cell_order``, as the reference does) only when it is out of order."""

import hashlib
import struct

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_SIZE
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from hbase_migrate.wal.model import cell_order

DEF BUFFER = 1 << 18  # bytes written before they are hashed
DEF FIXED = 4 * 4 + 8 + 1  # the four lengths, the timestamp and the type

cdef class _Sink:
    """The bytes to hash, gathered in ``buf`` and handed to ``digest`` when it fills."""
    cdef object digest, update
    cdef bytearray store
    cdef char* buf
    cdef Py_ssize_t used

    def __cinit__(self) -> None:
        self.digest = hashlib.sha256()
        self.update = self.digest.update
        self.store = bytearray(BUFFER)
        self.buf = self.store
        self.used = 0

    cdef int flush(self) except -1:
        if self.used:
            self.update(memoryview(self.store)[:self.used])
            self.used = 0
        return 0

    cdef inline void put_len(self, Py_ssize_t n) noexcept:
        cdef unsigned char* p = <unsigned char*>self.buf + self.used
        p[0] = (n >> 24) & 0xFF
        p[1] = (n >> 16) & 0xFF
        p[2] = (n >> 8) & 0xFF
        p[3] = n & 0xFF
        self.used += 4

    cdef inline void put_bytes(self, bytes part, Py_ssize_t n) noexcept:
        memcpy(self.buf + self.used, PyBytes_AS_STRING(part), n)
        self.used += n

    cdef int cell(self, bytes row, bytes family, bytes qualifier, int64_t timestamp,
                  int kind, bytes value) except -1:
        cdef Py_ssize_t n_row = PyBytes_GET_SIZE(row), n_family = PyBytes_GET_SIZE(family)
        cdef Py_ssize_t n_qualifier = PyBytes_GET_SIZE(qualifier)
        cdef Py_ssize_t n_value = PyBytes_GET_SIZE(value)
        cdef Py_ssize_t head = FIXED + n_row + n_family + n_qualifier
        cdef uint64_t stamp = <uint64_t>timestamp
        cdef unsigned char* p
        cdef int i
        if self.used + head > BUFFER:
            self.flush()
        if head > BUFFER:  # keys this long are hashed field by field
            self.cell_apart(row, family, qualifier, timestamp, kind, value)
            return 0
        self.put_len(n_row)
        self.put_bytes(row, n_row)
        self.put_len(n_family)
        self.put_bytes(family, n_family)
        self.put_len(n_qualifier)
        self.put_bytes(qualifier, n_qualifier)
        p = <unsigned char*>self.buf + self.used
        for i in range(8):
            p[i] = (stamp >> (56 - 8 * i)) & 0xFF
        p[8] = <unsigned char>kind
        self.used += 9
        self.put_len(n_value)
        if self.used + n_value <= BUFFER:
            self.put_bytes(value, n_value)
        else:  # a large value is hashed as it is, not copied
            self.flush()
            self.update(value)
        return 0

    cdef int cell_apart(self, bytes row, bytes family, bytes qualifier, int64_t timestamp,
                        int kind, bytes value) except -1:
        for part in (row, family, qualifier):
            self.update(_LEN.pack(len(part)))
            self.update(part)
        self.update(_TS_TYPE.pack(timestamp, kind))
        self.update(_LEN.pack(len(value)))
        self.update(value)
        return 0


_LEN = struct.Struct(">I")
_TS_TYPE = struct.Struct(">qB")


cdef inline bytes _plain(object part):
    """``part`` as bytes (a bytes-like field hashes as its bytes, as ``b"".join`` takes it)."""
    if PyBytes_Check(part):
        return <bytes>part
    return bytes(memoryview(part))


cdef int64_t _timestamp(tuple cell) except? -1:
    cdef int64_t timestamp
    try:
        timestamp = cell[3]
    except OverflowError:
        raise struct.error(f"cell {cell!r}: its timestamp does not fit a signed 64-bit long")
    return timestamp


cdef int _kind(tuple cell) except -1:
    cdef long kind = cell[4]
    if kind < 0 or kind > 255:
        raise struct.error(f"cell {cell!r}: its type code does not fit one byte")
    return <int>kind


cdef inline int _compare(bytes a, bytes b) noexcept:
    cdef Py_ssize_t n_a = PyBytes_GET_SIZE(a), n_b = PyBytes_GET_SIZE(b)
    cdef int found = memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), min(n_a, n_b))
    if found:
        return found
    return (n_a > n_b) - (n_a < n_b)


cdef bint _in_order(tuple cells) except -1:
    """Whether ``cells`` (each checked by ``_cell``) is already in ``cell_order`` (then
    sorting keeps it as it is)."""
    cdef Py_ssize_t i
    cdef int found
    cdef int64_t ts_a, ts_b
    cdef tuple a, b
    for i in range(len(cells) - 1):
        a = _cell(cells[i])
        b = _cell(cells[i + 1])
        found = _compare(_plain(a[0]), _plain(b[0]))
        if not found:
            found = _compare(_plain(a[1]), _plain(b[1]))
        if not found:
            found = _compare(_plain(a[2]), _plain(b[2]))
        if found > 0:
            return False
        if found < 0:
            continue
        ts_a = _timestamp(a)
        ts_b = _timestamp(b)
        if ts_a < ts_b:
            return False
        if ts_a == ts_b and _kind(a) < _kind(b):
            return False
    return True


cdef inline tuple _cell(object cell):
    """``cell`` as the tuple of 7 fields a ``Cell`` is."""
    if not PyTuple_Check(cell) or PyTuple_GET_SIZE(cell) != 7:
        raise ValueError(f"not a Cell of 7 fields: {cell!r}")
    return <tuple>cell


def digest_rows(rows: object) -> tuple[int, int, str]:
    """``stats.digest_rows``'s rows, cells and SHA-256 (hex) of ``rows``."""
    cdef _Sink sink = _Sink()
    cdef Py_ssize_t n_rows = 0, n_cells = 0
    cdef tuple cells, cell
    cdef Py_ssize_t i
    last_row = None
    for piece in rows:
        if not piece:
            continue
        cells = piece if type(piece) is tuple else tuple(piece)
        row = _cell(cells[0])[0]
        if row != last_row:
            n_rows += 1
            last_row = row
        n_cells += len(cells)
        if len(cells) > 1 and not _in_order(cells):
            cells = tuple(sorted(cells, key=cell_order))
        for i in range(len(cells)):
            cell = _cell(cells[i])
            sink.cell(_plain(cell[0]), _plain(cell[1]), _plain(cell[2]), _timestamp(cell),
                      _kind(cell), _plain(cell[5]))
    sink.flush()
    return n_rows, n_cells, sink.digest.hexdigest()
