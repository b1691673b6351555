# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled rendering of a batch of CDC messages (keys and JSON values), byte for byte what
:func:`~hbase_migrate.sinks.messages.message_key`, ``message_value`` and
:func:`~hbase_migrate.sinks.debezium.debezium_value` (without row images) return; built by
``make setup`` (``scripts/build-speedups.py``), chosen by :mod:`~hbase_migrate.sinks.render`.

Each message is written into one growing C buffer. The reference's own helpers render what
is rare: a cell with tags or a METAFAMILY marker (its general form), and a whole message
whose fields are not the plain types (bytes, int, None) the fast path reads.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from libc.string cimport memcmp, memcpy
from posix.time cimport CLOCK_REALTIME, clock_gettime, timespec

from collections import Counter
from json import dumps

from hbase_migrate.plain_tuples cimport plain_tuple
from hbase_migrate.wal._hotloops cimport CellBlock

from hbase_migrate.replay.apply import count_cells as _count_cells
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.sinks import debezium as _debezium
from hbase_migrate.sinks import messages as _messages
from hbase_migrate.wal.model import METAFAMILY, CellType, type_name

cdef char _FORM[256][8]  # zero-padded: each byte as its toStringBinary form reads inside a JSON string
cdef Py_ssize_t _FORM_LEN[256]
cdef bytes _form
for _b, _text in enumerate(_messages._JSON_RENDER):
    _form = _text.encode("ascii")
    assert len(_form) < 8
    _FORM_LEN[_b] = len(_form)
    memcpy(_FORM[_b], PyBytes_AS_STRING(_form), len(_form))

cdef bytes _META = METAFAMILY
cdef object _DELETE_FAMILY = int(CellType.DELETE_FAMILY)
cdef dict _types = {}  # type code -> ',"type":"Put"'
cdef dict _strings = {}  # table name -> its JSON string
cdef dict _files = {}  # WAL path -> ',"file":' and the JSON string of its name


class _Unusual(Exception):
    """A field the fast path does not read: the reference renders the message."""


cdef struct Buffer:
    char* data
    Py_ssize_t size
    Py_ssize_t capacity


cdef int _reserve(Buffer* b, Py_ssize_t more) except -1:
    cdef Py_ssize_t want = b.size + more
    cdef char* grown
    if want <= b.capacity:
        return 0
    want = max(want, 2 * b.capacity)
    grown = <char*>PyMem_Realloc(b.data, want)
    if grown == NULL:
        raise MemoryError()
    b.data, b.capacity = grown, want
    return 0


cdef inline int _put(Buffer* b, const char* text, Py_ssize_t n) except -1:
    _reserve(b, n)
    memcpy(b.data + b.size, text, n)
    b.size += n
    return 0


cdef inline int _put_bytes(Buffer* b, bytes text) except -1:
    return _put(b, PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text))


cdef inline int _put_binary(Buffer* b, object data) except -1:
    """``data`` (bytes) as the JSON string of its toStringBinary form."""
    if type(data) is not bytes:
        raise _Unusual()
    return _put_raw(b, <const unsigned char*>PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data))


cdef int _put_raw(Buffer* b, const unsigned char* s, Py_ssize_t n) except -1:
    """The ``n`` bytes at ``s`` as the JSON string of their toStringBinary form."""
    cdef Py_ssize_t i
    cdef unsigned char c
    _reserve(b, 8 * n + 2)
    cdef char* out = b.data + b.size
    out[0] = b'"'
    out += 1
    for i in range(n):  # 8 bytes stored per input byte (room reserved), the form's kept
        c = s[i]
        memcpy(out, _FORM[c], 8)
        out += _FORM_LEN[c]
    out[0] = b'"'
    b.size = out + 1 - b.data
    return 0


cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object, int*) except? -1


cdef char _PAIRS[200]  # "00" to "99": two digits at a time
for _b in range(100):
    _PAIRS[2 * _b], _PAIRS[2 * _b + 1] = 48 + _b // 10, 48 + _b % 10


cdef int _put_int(Buffer* b, object value) except -1:
    """An int as ``repr`` writes it; None as ``null``."""
    cdef long long v
    cdef int overflow = 0
    if value is None:
        return _put(b, b"null", 4)
    if type(value) is not int:
        raise _Unusual()
    v = PyLong_AsLongLongAndOverflow(value, &overflow)
    if overflow:
        return _put_bytes(b, repr(value).encode("ascii"))
    return _put_long(b, v)


cdef int _put_long(Buffer* b, long long v) except -1:
    """``v`` as ``repr`` writes it."""
    cdef char digits[24]
    cdef unsigned long long u, r
    cdef int start = 24
    u = <unsigned long long>(-(v + 1)) + 1 if v < 0 else <unsigned long long>v
    while u >= 100:  # the digits, last first
        r = u % 100
        u //= 100
        start -= 2
        memcpy(digits + start, _PAIRS + 2 * r, 2)
    if u >= 10:
        start -= 2
        memcpy(digits + start, _PAIRS + 2 * u, 2)
    else:
        start -= 1
        digits[start] = <char>(48 + u)
    if v < 0:
        start -= 1
        digits[start] = b"-"
    return _put(b, digits + start, 24 - start)


cdef bytes _string(object text):
    """``json.dumps(text)`` of a str, as ASCII bytes (cached: few distinct names)."""
    cdef object known = _strings.get(text)
    if known is None:
        if type(text) is not str:
            raise _Unusual()
        if len(_strings) > 4096:
            _strings.clear()
        known = _strings[text] = dumps(text).encode("ascii")
    return <bytes>known


cdef bytes _file(object path):
    cdef object known = _files.get(path)
    if known is None:
        if len(_files) > 4096:
            _files.clear()
        known = _files[path] = _messages._file(path).encode("ascii")
    return <bytes>known


cdef bytes _type(object code):
    cdef object known = _types.get(code)
    if known is None:
        if type(code) is not int and not isinstance(code, CellType):  # named as its value
            raise _Unusual()
        known = _types[code] = _messages._type(code).encode("ascii")
    return <bytes>known


cdef inline object _field(object cell, Py_ssize_t i):
    """Field ``i`` of a Cell (a tuple of 7, checked by the caller)."""
    return <object>PyTuple_GET_ITEM(cell, i)


cdef int _put_cells(Buffer* b, object data) except -1:
    """The JSON array of the cells (``messages.cells_text``)."""
    cdef Py_ssize_t i
    cdef object cell, family
    cdef tuple cells
    if type(data) is CellBlock:
        return _put_block(b, <CellBlock>data)
    if type(data) is not tuple:
        raise _Unusual()
    cells = <tuple>data
    _put_bytes(b, b"[")
    for i in range(len(cells)):
        cell = cells[i]
        if not PyTuple_Check(cell) or PyTuple_GET_SIZE(cell) != 7:
            raise _Unusual()
        if i:
            _put_bytes(b, b",")
        family = _field(cell, 1)
        if _field(cell, 6) or family == _META:  # rare: the general form
            _put_bytes(b, _messages._general_cell(cell).encode("ascii"))
            continue
        _put_bytes(b, b'{"row":')
        _put_binary(b, _field(cell, 0))
        _put_bytes(b, b',"family":')
        _put_binary(b, family)
        _put_bytes(b, b',"qualifier":')
        _put_binary(b, _field(cell, 2))
        _put_bytes(b, b',"timestamp":')
        _put_int(b, _field(cell, 3))
        _put_bytes(b, _type(_field(cell, 4)))
        _put_bytes(b, b',"value":')
        _put_binary(b, _field(cell, 5))
        _put_bytes(b, b"}")
    _put_bytes(b, b"]")
    return 0


cdef const char* _TYPE_TEXT[16]  # a block's type codes (4, 8, 10, 12, 14): ',"type":"Put"'
cdef Py_ssize_t _TYPE_LEN[16]
cdef list _type_texts = []  # (holds the bytes the pointers above point into)
for _b in (4, 8, 10, 12, 14):
    _form = _messages._type(_b).encode("ascii")
    _type_texts.append(_form)
    _TYPE_TEXT[_b], _TYPE_LEN[_b] = PyBytes_AS_STRING(_form), len(_form)


cdef inline Py_ssize_t _int32(const unsigned char* d, Py_ssize_t p) noexcept:
    return <int>((<unsigned int>d[p] << 24) | (<unsigned int>d[p + 1] << 16)
                 | (<unsigned int>d[p + 2] << 8) | d[p + 3])


cdef int _put_block(Buffer* b, CellBlock block) except -1:
    """The JSON array of a reader's ``CellBlock`` (``messages.cells_text`` of its Cells),
    read in place: its row rendered once, the rest of each cell from the file's bytes."""
    cdef const unsigned char* d = <const unsigned char*>PyBytes_AS_STRING(block.buf)
    cdef Py_ssize_t i, q = block.start, klen, vlen, rlen, flen, fpos, qpos, tpos
    cdef Py_ssize_t row_at = 0, row_len = 0
    cdef unsigned long long ts
    cdef int code
    _put(b, b"[", 1)
    for i in range(block.count):  # the reader checked every length and code
        klen, vlen = _int32(d, q + 4), _int32(d, q + 8)
        rlen = (d[q + 12] << 8) | d[q + 13]
        fpos = q + 14 + rlen
        flen = d[fpos]
        qpos = fpos + 1 + flen
        tpos = q + 3 + klen
        _put(b, b',{"row":' if i else b'{"row":', 8 if i else 7)
        if i == 0:
            row_at = b.size
            _put_raw(b, d + q + 14, rlen)
            row_len = b.size - row_at
        else:
            _reserve(b, row_len)
            memcpy(b.data + b.size, b.data + row_at, row_len)
            b.size += row_len
        _put(b, b',"family":', 10)
        _put_raw(b, d + fpos + 1, flen)
        _put(b, b',"qualifier":', 13)
        _put_raw(b, d + qpos, tpos - qpos)
        _put(b, b',"timestamp":', 13)
        ts = ((<unsigned long long>_int32(d, tpos) << 32)
              | <unsigned int>_int32(d, tpos + 4))
        _put_long(b, <long long>ts)
        code = d[tpos + 8]
        _put(b, _TYPE_TEXT[code], _TYPE_LEN[code])
        _put(b, b',"value":', 9)
        _put_raw(b, d + tpos + 9, vlen)
        _put(b, b"}", 1)
        q = tpos + 9 + vlen
    return _put(b, b"]", 1)


cdef tuple _position(object p):
    """``p``, checked to be a WalPosition (a tuple of 5)."""
    if not PyTuple_Check(p) or PyTuple_GET_SIZE(p) != 5:
        raise _Unusual()
    return <tuple>p


cdef int _put_position(Buffer* b, tuple p) except -1:
    """A WalPosition's fields as both envelopes write them: file to write_time."""
    _put_bytes(b, _file(p[0]))
    _put_bytes(b, b',"offset":')
    _put_int(b, p[1])
    _put_bytes(b, b',"entry":')
    _put_int(b, p[2])
    _put_bytes(b, b',"sequence":')
    _put_int(b, p[3])
    _put_bytes(b, b',"write_time":')
    return _put_int(b, p[4])


cdef int _put_native(Buffer* b, object table, object row, object position,
                     object cells) except -1:
    """``message_value`` of the edit of these fields."""
    cdef tuple p = _position(position)
    _put_bytes(b, b'{"table":')
    _put_bytes(b, _string(table))
    _put_bytes(b, b',"row":')
    _put_binary(b, row)
    _put_position(b, p)
    _put_bytes(b, b',"cells":')
    _put_cells(b, cells)
    _put_bytes(b, b"}")
    return 0


cdef int _put_debezium(Buffer* b, object table, object row, object position, object cells,
                       bytes source, object now) except -1:
    """``debezium_value(edit, cluster, now=now)`` of the edit of these fields; ``source`` is
    the text from the connector's name to ``"table":``."""
    cdef tuple p = _position(position)
    cdef object cell
    cdef bint delete = True
    cdef timespec clock
    if type(cells) is CellBlock:
        delete = (<CellBlock>cells).by_type[14] == (<CellBlock>cells).count
    elif type(cells) is not tuple:
        raise _Unusual()
    else:
        for cell in <tuple>cells:
            if not PyTuple_Check(cell) or PyTuple_GET_SIZE(cell) != 7:
                raise _Unusual()
            if _field(cell, 4) != _DELETE_FAMILY:
                delete = False
                break
    _put_bytes(b, b'{"before":null,"after":null,"op":')
    _put_bytes(b, b'"d"' if delete else b'"u"')
    _put_bytes(b, b',"ts_ms":')
    if now is None:  # stamped when made: the clock read in C (vDSO), not time.time()
        clock_gettime(CLOCK_REALTIME, &clock)
        _put_long(b, <long long>clock.tv_sec * 1000 + clock.tv_nsec // 1000000)
    else:
        _put_int(b, now)
    _put_bytes(b, source)
    _put_bytes(b, _string(table))
    _put_position(b, p)
    _put_bytes(b, b',"ts_ms":')
    _put_int(b, p[4])
    _put_bytes(b, b',"snapshot":"false"},"transaction":null,"row":')
    _put_binary(b, row)
    _put_bytes(b, b',"cells":')
    _put_cells(b, cells)
    _put_bytes(b, b"}")
    return 0


cdef object _key_table = None
cdef bytes _key_prefix = b""


cdef bytes _key(object table, object row):
    """``message_key(table, row)``: the table's part made once per table."""
    global _key_table, _key_prefix
    cdef bytes key
    cdef Py_ssize_t n
    if type(row) is not bytes or type(table) is not str:
        return _messages.message_key(table, row)
    if table is not _key_table:
        _key_prefix, _key_table = (<str>table).encode("utf-8") + b"\x00", table
    n = PyBytes_GET_SIZE(_key_prefix)
    key = PyBytes_FromStringAndSize(NULL, n + PyBytes_GET_SIZE(row))
    memcpy(PyBytes_AS_STRING(key), PyBytes_AS_STRING(_key_prefix), n)
    memcpy(PyBytes_AS_STRING(key) + n, PyBytes_AS_STRING(row), PyBytes_GET_SIZE(row))
    return key


cdef class _Messages:
    """Keys and values rendered one message at a time into one growing buffer."""

    cdef Buffer b
    cdef list keys, values
    cdef bint native
    cdef bytes source
    cdef str cluster
    cdef object now

    def __cinit__(self, str envelope, str cluster, object now):
        self.keys, self.values = [], []
        self.native, self.cluster, self.now = envelope == "native", cluster, now
        self.source = b"" if self.native else _debezium.source_head(cluster).encode("ascii")
        self.b.size, self.b.capacity = 0, 4096
        self.b.data = <char*>PyMem_Malloc(self.b.capacity)
        if self.b.data == NULL:
            raise MemoryError()

    def __dealloc__(self):
        PyMem_Free(self.b.data)

    cdef int add(self, object table, object row, object position, object cells) except -1:
        """The message of the edit of these fields (the reference's when they are not the
        plain types read here)."""
        self.b.size = 0
        self.keys.append(_key(table, row))
        try:
            if self.native:
                _put_native(&self.b, table, row, position, cells)
            else:
                _put_debezium(&self.b, table, row, position, cells, self.source, self.now)
        except _Unusual:
            self.add_reference(_Edit(table, row, position, cells))
            return 0
        self.values.append(PyBytes_FromStringAndSize(self.b.data, self.b.size))
        return 0

    cdef int add_reference(self, object edit) except -1:
        self.values.append(_messages.message_value(edit) if self.native else
                           _debezium.debezium_value(edit, self.cluster, now=self.now))
        return 0


def render(list edits, str envelope, str cluster, object now=None):
    """The keys and values of ``edits`` (RowEdits, no row images) in the ``envelope``
    (``native`` or ``debezium``; ``cluster`` and ``now`` as ``debezium_value`` takes them)."""
    cdef _Messages out = _Messages(envelope, cluster, now)
    cdef object edit
    for edit in edits:
        if not PyTuple_Check(edit) or PyTuple_GET_SIZE(edit) != 4:  # not a RowEdit
            out.keys.append(_messages.message_key(edit.table, edit.row))
            out.add_reference(edit)
        else:
            out.add(edit[0], edit[1], edit[2], edit[3])
    return out.keys, out.values


def messages(str table, list mutations, str envelope, str cluster, object now=None):
    """``render(row_edits(table, mutations), ...)`` and the edits' positions, compiled: a
    mutation alone in its entry (the usual) is rendered without an edit made for it."""
    cdef _Messages out
    cdef list positions = []
    cdef Py_ssize_t i = 0, j
    cdef tuple m
    cdef object edit
    if not _all_mutations(mutations):
        edits = list(_messages.row_edits(table, mutations))
        return (*render(edits, envelope, cluster, now), [e.position for e in edits])
    out = _Messages(envelope, cluster, now)
    while i < len(mutations):
        m = <tuple>mutations[i]
        j = _entry_end(mutations, i)
        if j == i + 1:
            out.add(table, m[0], m[3], m[2])
            positions.append(m[3])
        else:
            for edit in _messages.row_edits(table, mutations[i:j]):
                out.add(table, edit[1], edit[2], edit[3])
                positions.append(edit[2])
        i = j
    return out.keys, out.values, positions


cdef object _Mutation = RowMutation, _Edit = _messages.RowEdit


def row_edits(str table, list mutations):
    """``list(messages.row_edits(table, mutations))``, compiled: a mutation alone in its
    entry (the usual) makes its edit here, left out of the cycle collector (a batch's
    edits wait for their acknowledgements); the mutations of an entry with several go to
    the reference's grouping."""
    cdef list out = []
    cdef Py_ssize_t i = 0, j
    cdef tuple m
    if not _all_mutations(mutations):
        return list(_messages.row_edits(table, mutations))
    while i < len(mutations):
        m = <tuple>mutations[i]
        j = _entry_end(mutations, i)
        if j == i + 1:
            out.append(plain_tuple(_Edit, (table, m[0], m[3], m[2])))
        else:
            out.extend(_messages.row_edits(table, mutations[i:j]))
        i = j
    return out


cdef bint _all_mutations(list mutations):
    """Whether every item is a RowMutation (read here as the tuple it is)."""
    cdef object m
    for m in mutations:
        if type(m) is not _Mutation:
            return False
    return True


cdef Py_ssize_t _entry_end(list mutations, Py_ssize_t i) except -1:
    """The index after the mutations of the entry whose first is at ``i`` (one entry's
    mutations share its position, and follow each other)."""
    cdef object position = (<tuple>mutations[i])[3], other
    cdef Py_ssize_t j = i + 1
    while j < len(mutations):
        other = (<tuple>mutations[j])[3]
        if other is not position and other != position:
            break
        j += 1
    return j


def cell_counts(list mutations):
    """``apply.count_cells(mutations)`` (cells by type name), compiled: a ``CellBlock``'s
    counted by the reader, a tuple's cell by cell; other values go to the reference."""
    cdef Py_ssize_t by_type[16]
    cdef Py_ssize_t code
    cdef object m, cells, cell, kind
    for code in range(16):
        by_type[code] = 0
    for m in mutations:
        if type(m) is not _Mutation:
            return _count_cells(mutations)
        cells = (<tuple>m)[2]
        if type(cells) is CellBlock:
            for code in range(16):
                by_type[code] += (<CellBlock>cells).by_type[code]
            continue
        if type(cells) is not tuple:
            return _count_cells(mutations)
        for cell in <tuple>cells:
            if not PyTuple_Check(cell) or PyTuple_GET_SIZE(cell) != 7:
                return _count_cells(mutations)
            kind = _field(cell, 4)
            if type(kind) is not int or not 0 <= kind < 16:
                return _count_cells(mutations)
            by_type[<Py_ssize_t>kind] += 1
    return Counter({type_name(code): by_type[code] for code in range(16) if by_type[code]})


def longest(list keys, list values):
    """The largest ``len(key) + len(value)`` of the messages (0 for none)."""
    cdef Py_ssize_t i, size, most = 0
    cdef object key, value
    for i in range(min(len(keys), len(values))):
        key, value = keys[i], values[i]
        if type(key) is not bytes or type(value) is not bytes:
            return max(len(k) + len(v) for k, v in zip(keys, values))
        size = PyBytes_GET_SIZE(key) + PyBytes_GET_SIZE(value)
        if size > most:
            most = size
    return most
