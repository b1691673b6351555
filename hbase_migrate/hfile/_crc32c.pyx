# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled copy of ``checksum.crc32c`` (CRC32C, reflected polynomial 0x82F63B78): the
CPU's CRC32 instruction (SSE 4.2) where the CPU has it, else table driven, slicing by 8;
built by ``make setup`` (``scripts/build-speedups.py``)."""

from libc.stdint cimport uint32_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <nmmintrin.h>
    /* the instruction computes CRC32C (Castagnoli), reflected, as the tables do */
    __attribute__((target("sse4.2")))
    static uint32_t hbm_crc32c_hw(uint32_t crc, const unsigned char* p, Py_ssize_t n) {
        uint64_t word;
        while (n >= 8) {
            memcpy(&word, p, 8);
            crc = (uint32_t)_mm_crc32_u64(crc, word);
            p += 8;
            n -= 8;
        }
        while (n-- > 0) crc = _mm_crc32_u8(crc, *p++);
        return crc;
    }
    static int hbm_crc32c_hw_ok(void) { return __builtin_cpu_supports("sse4.2"); }
    #else
    static uint32_t hbm_crc32c_hw(uint32_t crc, const unsigned char* p, Py_ssize_t n) {
        return crc;
    }
    static int hbm_crc32c_hw_ok(void) { return 0; }
    #endif
    """
    uint32_t _hardware "hbm_crc32c_hw"(uint32_t crc, const unsigned char* p,
                                       Py_ssize_t n) nogil
    int _hardware_ok "hbm_crc32c_hw_ok"()

cdef uint32_t TABLE[8][256]


cdef void _fill():
    cdef uint32_t crc
    cdef int n, k
    for n in range(256):
        crc = n
        for k in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        TABLE[0][n] = crc
    for n in range(256):
        crc = TABLE[0][n]
        for k in range(1, 8):
            crc = TABLE[0][crc & 0xFF] ^ (crc >> 8)
            TABLE[k][n] = crc


_fill()
cdef bint HARDWARE = _hardware_ok()


def crc32c(const unsigned char[::1] data not None) -> int:
    """CRC32C of ``data`` (initial value and final xor 0xFFFFFFFF)."""
    cdef uint32_t crc = 0xFFFFFFFF
    cdef Py_ssize_t i = 0, n = data.shape[0]
    if HARDWARE and n:
        with nogil:
            crc = _hardware(crc, &data[0], n)
        return crc ^ 0xFFFFFFFF
    with nogil:
        while i + 8 <= n:
            crc ^= <uint32_t>data[i] | (<uint32_t>data[i + 1] << 8) | \
                (<uint32_t>data[i + 2] << 16) | (<uint32_t>data[i + 3] << 24)
            crc = (TABLE[7][crc & 0xFF] ^ TABLE[6][(crc >> 8) & 0xFF]
                   ^ TABLE[5][(crc >> 16) & 0xFF] ^ TABLE[4][crc >> 24]
                   ^ TABLE[3][data[i + 4]] ^ TABLE[2][data[i + 5]]
                   ^ TABLE[1][data[i + 6]] ^ TABLE[0][data[i + 7]])
            i += 8
        while i < n:
            crc = TABLE[0][(crc ^ data[i]) & 0xFF] ^ (crc >> 8)
            i += 1
    return crc ^ 0xFFFFFFFF
