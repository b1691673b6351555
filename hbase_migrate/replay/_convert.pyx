# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled copy of :meth:`EntryConverter.take_batch <hbase_migrate.replay.convert.
EntryConverter.take_batch>`, built by ``make setup`` (``scripts/build-speedups.py``).

It takes the usual entry itself: a table already looked up and replayed, a write time inside
the window, and only data cells (plain ``bytes`` fields, a known type code, a family that is
replayed and already checked on the target); a reader's ``CellBlock`` of such cells (the
CDC stream's) becomes one mutation holding the block. Every other entry (the first of each
table or family, markers, filtered families, skipped entries, unknown types: whatever
counts, looks up or raises) goes to the reference's ``take``, so the mutations, counts and
errors are the reference's. Counters live in C variables during a batch and are written
back to the converter before the reference runs, and when the batch ends or an error leaves.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.string cimport memcmp

from hbase_migrate.plain_tuples cimport plain_tuple
from hbase_migrate.wal._hotloops cimport CellBlock

from hbase_migrate.cluster.sizing import CELL_OVERHEAD
from hbase_migrate.replay.mutations import Kind, RowMutation, WalPosition
from hbase_migrate.wal.model import METAFAMILY, Cell, Entry, WalKey

cdef object _PUT = Kind.PUT
cdef object _DELETE = Kind.DELETE
cdef object _Cell = Cell, _Entry = Entry, _WalKey = WalKey
cdef object _Mutation = RowMutation, _Position = WalPosition
cdef Py_ssize_t _OVERHEAD = CELL_OVERHEAD
cdef bytes _META = METAFAMILY


cdef inline bint _same(bytes a, bytes b) noexcept:
    cdef Py_ssize_t n = PyBytes_GET_SIZE(a)
    return a is b or (n == PyBytes_GET_SIZE(b)
                      and memcmp(PyBytes_AS_STRING(a), PyBytes_AS_STRING(b), n) == 0)


cdef frozenset _KNOWN = frozenset({4, 8, 10, 12, 14})  # mutations.KNOWN_TYPES as plain ints


cdef inline int _type_code(object code):
    """A data cell's type code (4, 8, 10, 12 or 14) when it is a plain int, else -1."""
    if type(code) is int and code in _KNOWN:
        return <int>code
    return -1


cdef struct Sums:
    Py_ssize_t size  # bytes of row, family, qualifier and value
    Py_ssize_t tags
    bint one_run  # one row, one kind throughout: one mutation


cdef bint _usual_cells(tuple cells, object families, object seen, Sums* sums):
    """Whether every cell is a plain data cell the fast path takes; its sums if so."""
    cdef Py_ssize_t i, n = PyTuple_GET_SIZE(cells)
    cdef object cell, tags
    cdef tuple fields
    cdef bytes row, family, qualifier, value, first_row
    cdef int code
    cdef bint put, first_put = False
    sums.size = sums.tags = 0
    sums.one_run = True
    for i in range(n):
        cell = cells[i]
        if type(cell) is not _Cell:
            return False
        fields = <tuple>cell  # a Cell is a tuple: its fields read without a method call
        row, family, qualifier, value, tags = fields[0], fields[1], fields[2], fields[5], fields[6]
        if (type(row) is not bytes or type(family) is not bytes or type(qualifier) is not bytes
                or type(value) is not bytes or type(tags) is not tuple):
            return False
        code = _type_code(fields[4])
        if code < 0 or _same(family, _META):
            return False
        if (families is not None and family not in families) or family not in seen:
            return False
        put = code == 4
        if i == 0:
            first_row, first_put = row, put
        elif sums.one_run and (put != first_put or not _same(row, first_row)):
            sums.one_run = False
        sums.size += (PyBytes_GET_SIZE(row) + PyBytes_GET_SIZE(family)
                      + PyBytes_GET_SIZE(qualifier) + PyBytes_GET_SIZE(value))
        sums.tags += PyTuple_GET_SIZE(tags)
    return True


cdef bint _usual_block(CellBlock block, object families, object seen):
    """Whether the fast path takes every cell of ``block`` (its families replayed and
    checked on the target: what a block holds is plain data cells otherwise)."""
    cdef object family
    for family in block.families:
        if (families is not None and family not in families) or family not in seen:
            return False
    return True


cdef inline object _mutation(bytes row, bint put, object cells, object position):
    return plain_tuple(_Mutation, (row, _PUT if put else _DELETE, cells, position))


cdef list _runs(tuple cells, object position):
    """``mutations.to_mutations`` for cells already checked: consecutive cells of one row
    and one kind make one mutation."""
    cdef list out = []
    cdef Py_ssize_t i, start = 0, n = PyTuple_GET_SIZE(cells)
    cdef tuple cell = <tuple>cells[0]
    cdef bytes row = cell[0], this
    cdef bint put = cell[4] == 4, this_put
    for i in range(1, n):
        cell = <tuple>cells[i]
        this, this_put = cell[0], cell[4] == 4
        if this_put != put or not _same(this, row):
            out.append(_mutation(row, put, cells[start:i], position))
            start, row, put = i, this, this_put
    out.append(_mutation(row, put, cells[start:n], position))
    return out


cdef class _Counts:
    """The converter's counters while a batch is taken."""

    cdef object conv, last  # the last entry taken here, not yet written back
    cdef Py_ssize_t weight, size, entries, applied, tags

    def __cinit__(self, conv):
        self.conv = conv
        self.last = None
        self.load()

    cdef load(self):
        conv = self.conv
        self.weight, self.size, self.tags = conv.weight, conv.bytes, conv.tags
        self.entries, self.applied = conv.entries, conv.entries_applied

    cdef store(self):
        conv = self.conv
        conv.weight, conv.bytes, conv.tags = self.weight, self.size, self.tags
        conv.entries, conv.entries_applied = self.entries, self.applied
        last = self.last
        if last is not None:
            conv.offset = last[2] + last[3]
            conv.next_index = last[4] + 1
            conv.last_write_time = last[0][3]
            self.last = None


def take_batch(conv, entries, Py_ssize_t batch_cells, Py_ssize_t batch_bytes):
    """``EntryConverter.take_batch(entries, batch_cells, batch_bytes)``, compiled."""
    cdef _Counts counts = _Counts(conv)
    cdef dict tables = conv.tables, checked = conv.checked
    cdef object flt = conv.filter, name = conv.name
    cdef object start = flt.start_time, end = flt.end_time
    cdef object info, dst, families, seen, write_time, position, pending, data
    cdef tuple fields, key, first
    cdef CellBlock block
    cdef object taken_info = None, taken_families = None  # the last block families taken
    cdef Sums sums
    cdef Py_ssize_t n
    cdef bint usual
    try:
        for entry in entries:
            if type(entry) is _Entry:
                fields = <tuple>entry  # Entry, WalKey and Cell are tuples: read as such
                data = fields[1]
                if type(fields[0]) is _WalKey and (type(data) is tuple
                                                   or type(data) is CellBlock):
                    key = <tuple>fields[0]
                    n = len(data)
                    info = tables.get(key[1])
                    write_time = key[3]
                    if (n and info is not None and info[3] is None
                            and (start is None or write_time >= start)
                            and (end is None or write_time < end)):
                        dst, families = info[1], info[2]
                        seen = checked.get(dst)
                        if seen is None:
                            usual = False
                        elif type(data) is tuple:
                            usual = _usual_cells(<tuple>data, families, seen, &sums)
                        else:  # one row, one kind, data cells only: one mutation
                            block = <CellBlock>data
                            # (a table's families once taken stay so: ``seen`` only grows)
                            usual = ((block.families is taken_families and info is taken_info)
                                     or _usual_block(block, families, seen))
                            if usual:
                                taken_info, taken_families = info, block.families
                            sums.size, sums.tags, sums.one_run = block.size, 0, True
                        if usual:
                            position = plain_tuple(_Position, (
                                name, fields[2], fields[4], key[2], write_time))
                            pending = conv.pending.get(dst)
                            if pending is None:
                                pending = conv.pending[dst] = []
                            if type(data) is CellBlock:
                                pending.append(_mutation(block.row, block.puts, data,
                                                         position))
                            elif sums.one_run:
                                first = <tuple>(<tuple>data)[0]
                                pending.append(_mutation(first[0], first[4] == 4, data,
                                                         position))
                            else:
                                pending.extend(_runs(<tuple>data, position))
                            counts.tags += sums.tags
                            counts.size += sums.size + _OVERHEAD * n
                            counts.applied += 1
                            counts.entries += 1
                            counts.weight += n
                            counts.last = entry
                            if counts.weight >= batch_cells or counts.size >= batch_bytes:
                                return True
                            continue
            counts.store()  # any other entry: the reference takes it
            try:
                conv.take(entry)
            finally:
                counts.load()
            if counts.weight >= batch_cells or counts.size >= batch_bytes:
                return True
        return False
    finally:
        counts.store()
