# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copy of ``stats.digest_rows``'s loop, built by ``make setup``
(``scripts/build-speedups.py``); ``stats.py`` holds the reference and chooses. The same bytes
go to SHA-256: each cell's length-prefixed fields are written into one buffer in C, which
is hashed a buffer at a time. A piece of more than one cell is checked for scan order in C
and sorted (by ``cell_order``, as the reference does) only when it is out of order."""

import hashlib
import struct

from cpython.buffer cimport PyBUF_READ
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_Check, PyBytes_GET_SIZE
from cpython.memoryview cimport PyMemoryView_FromMemory
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_SIZE
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from hbase_migrate.wal.model import cell_order

DEF BUFFER = 1 << 18  # bytes written before they are hashed
DEF FIXED = 4 * 4 + 8 + 1  # the four lengths, the timestamp and the type

cdef class _Sink:
    """The bytes to hash, gathered in ``buf`` and handed to ``digest`` when it fills."""

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

    cdef inline void put_raw(self, const char* part, Py_ssize_t n) noexcept:
        memcpy(self.buf + self.used, part, n)
        self.used += n

    cdef int cell(self, const char* row, Py_ssize_t n_row, const char* family,
                  Py_ssize_t n_family, const char* qualifier, Py_ssize_t n_qualifier,
                  int64_t timestamp, int kind, const char* value,
                  Py_ssize_t n_value) except -1:
        """One cell's length-prefixed fields (``stats.feed``'s bytes), from raw bytes."""
        cdef Py_ssize_t head = FIXED + n_row + n_family + n_qualifier
        cdef uint64_t stamp = <uint64_t>timestamp
        cdef unsigned char* p
        cdef int i
        if self.used + head > BUFFER:
            self.flush()
        if head > BUFFER:  # keys this long are hashed field by field
            self.update(_LEN.pack(n_row))
            self.update(_view(row, n_row))
            self.update(_LEN.pack(n_family))
            self.update(_view(family, n_family))
            self.update(_LEN.pack(n_qualifier))
            self.update(_view(qualifier, n_qualifier))
            self.update(_TS_TYPE.pack(timestamp, kind))
            self.update(_LEN.pack(n_value))
            self.update(_view(value, n_value))
            return 0
        self.put_len(n_row)
        self.put_raw(row, n_row)
        self.put_len(n_family)
        self.put_raw(family, n_family)
        self.put_len(n_qualifier)
        self.put_raw(qualifier, n_qualifier)
        p = <unsigned char*>self.buf + self.used
        for i in range(8):
            p[i] = (stamp >> (56 - 8 * i)) & 0xFF
        p[8] = <unsigned char>kind
        self.used += 9
        self.put_len(n_value)
        if self.used + n_value <= BUFFER:
            self.put_raw(value, n_value)
        else:  # a large value is hashed on its own, not copied into the buffer
            self.flush()
            self.update(_view(value, n_value))
        return 0


cdef inline object _view(const char* part, Py_ssize_t n):
    """``n`` bytes at ``part`` as a read-only memoryview (hashed without a copy)."""
    return PyMemoryView_FromMemory(<char*>part, n, PyBUF_READ)


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


cdef class RangeDigest:
    """A range's running rows, cells and digest, fed rows of cells (``add_rows``) or,
    by the compiled region digest, cells from raw bytes; ``state`` and ``restore``
    put it back where it was (a region begun compiled and read again by the reference)."""

    def __cinit__(self) -> None:
        self.sink = _Sink()
        self.rows = self.cells = 0
        self.last_row = None

    def add_rows(self, rows: object) -> None:
        """``stats.digest_rows``'s loop over ``rows``."""
        cdef _Sink sink = self.sink
        cdef tuple cells, cell
        cdef Py_ssize_t i
        for piece in rows:
            if not piece:
                continue
            cells = piece if type(piece) is tuple else tuple(piece)
            row = _cell(cells[0])[0]
            if row != self.last_row:
                self.rows += 1
                self.last_row = row
            self.cells += len(cells)
            if len(cells) > 1 and not _in_order(cells):
                cells = tuple(sorted(cells, key=cell_order))
            for i in range(len(cells)):
                cell = _cell(cells[i])
                _feed(sink, _plain(cell[0]), _plain(cell[1]), _plain(cell[2]),
                      _timestamp(cell), _kind(cell), _plain(cell[5]))

    def state(self) -> tuple[object, int, int, object]:
        """Where it stands (the hash's state copied)."""
        self.sink.flush()
        return self.sink.digest.copy(), self.rows, self.cells, self.last_row

    def restore(self, state: tuple[object, int, int, object]) -> None:
        """Back to ``state`` (what ``state`` gave), anything added since forgotten."""
        digest, self.rows, self.cells, self.last_row = state
        self.sink.used = 0
        self.sink.digest = digest.copy()
        self.sink.update = self.sink.digest.update

    def result(self) -> tuple[int, int, str]:
        """Rows, cells and SHA-256 (hex) of everything added."""
        self.sink.flush()
        return self.rows, self.cells, self.sink.digest.hexdigest()


cdef inline int _feed(_Sink sink, bytes row, bytes family, bytes qualifier, int64_t timestamp,
                      int kind, bytes value) except -1:
    return sink.cell(PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row), PyBytes_AS_STRING(family),
                     PyBytes_GET_SIZE(family), PyBytes_AS_STRING(qualifier),
                     PyBytes_GET_SIZE(qualifier), timestamp, kind, PyBytes_AS_STRING(value),
                     PyBytes_GET_SIZE(value))


def digest_rows(rows: object) -> tuple[int, int, str]:
    """``stats.digest_rows``'s rows, cells and SHA-256 (hex) of ``rows``."""
    cdef RangeDigest found = RangeDigest()
    found.add_rows(rows)
    return found.result()
