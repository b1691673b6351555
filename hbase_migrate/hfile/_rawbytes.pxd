# Big-endian integers and Hadoop's vlong read from a data block's raw bytes, cimported by
# the compiled block decoders (``_cells.pyx``) and the region digest (``_digestscan.pyx``).

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t


cdef inline Py_ssize_t _int32(const uint8_t* d) noexcept:
    return <Py_ssize_t>(<int>((<uint32_t>d[0] << 24) | (<uint32_t>d[1] << 16)
                              | (<uint32_t>d[2] << 8) | d[3]))


cdef inline int64_t _int64(const uint8_t* d) noexcept:
    cdef uint64_t v = 0
    cdef int k
    for k in range(8):
        v = (v << 8) | d[k]
    return <int64_t>v


cdef inline Py_ssize_t _vlong(const uint8_t* d, Py_ssize_t p, Py_ssize_t end,
                              int64_t* value) noexcept:
    """Hadoop's vlong at ``p`` (``keyvalue.read_vlong``): the position after it, or -1
    (one past 63 bits, or cut off)."""
    cdef int first, size, k
    cdef uint64_t v = 0
    if p >= end:
        return -1
    first = <int>d[p] - 256 if d[p] > 127 else d[p]
    if first >= -112:
        value[0] = first
        return p + 1
    size = (-119 - first) if first < -120 else (-111 - first)
    if p + size > end:
        return -1
    for k in range(1, size):
        v = (v << 8) | d[p + k]
    if v >> 63:
        return -1
    value[0] = ~<int64_t>v if first < -120 else <int64_t>v
    return p + size
