# The range digest's bytes sink and running figures (``_digest.pyx``), cimported by the
# compiled region digest (``hfile/_digestscan.pyx``), which feeds cells from raw pointers.

from libc.stdint cimport int64_t


cdef class _Sink:
    cdef object digest, update
    cdef bytearray store
    cdef char* buf
    cdef Py_ssize_t used

    cdef int flush(self) except -1
    cdef void put_len(self, Py_ssize_t n) noexcept
    cdef void put_raw(self, const char* part, Py_ssize_t n) noexcept
    cdef int cell(self, const char* row, Py_ssize_t n_row, const char* family,
                  Py_ssize_t n_family, const char* qualifier, Py_ssize_t n_qualifier,
                  int64_t timestamp, int kind, const char* value,
                  Py_ssize_t n_value) except -1


cdef class RangeDigest:
    cdef _Sink sink
    cdef public Py_ssize_t rows, cells
    cdef public object last_row  # the row of the last piece added (None before any)
