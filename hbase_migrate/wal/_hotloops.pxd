# The compiled reader's entry cells as the file holds them, cimported by the compiled
# converter and renderer (``_convert``, ``_render``), which read them without a Cell each.

cdef class CellBlock:
    cdef readonly bytes buf  # the cells lie in buf[start:end], as the file holds them
    cdef readonly Py_ssize_t start, end, count
    cdef readonly bytes row  # every cell's
    cdef readonly bint puts  # every cell a Put, else every cell a delete of some kind
    cdef readonly tuple families  # each family once, in order of appearance
    cdef readonly Py_ssize_t size  # bytes of rows, families, qualifiers and values
    cdef Py_ssize_t by_type[16]  # cells by type code (4, 8, 10, 12, 14)
