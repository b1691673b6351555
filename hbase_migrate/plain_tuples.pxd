# The compiled modules' way of making the reader's and the replay's small values (``Cell``,
# ``WalPosition``, ``RowMutation``: NamedTuples), cimported by them.

cdef extern from *:
    """
    /* tuple.__new__(type, items) for ``type`` a tuple subclass without fields of its own
       (a NamedTuple) and ``items`` an exact tuple: made directly (no call, no copy), and
       left out of the cycle collector's lists. Only for values that can be in no reference
       cycle: bytes, ints, strings, enum members and tuples of them. CPython untracks such
       plain tuples itself, but never tuple subclasses, and a replay batch holds thousands. */
    static PyObject* hbase_migrate_plain_tuple(PyObject* type, PyObject* items) {
        Py_ssize_t i, n = PyTuple_GET_SIZE(items);
        PyObject* made = ((PyTypeObject*)type)->tp_alloc((PyTypeObject*)type, n);
        if (made == NULL) return NULL;
        for (i = 0; i < n; i++) {
            PyObject* item = PyTuple_GET_ITEM(items, i);
            Py_INCREF(item);
            PyTuple_SET_ITEM(made, i, item);
        }
        PyObject_GC_UnTrack(made);
        return made;
    }
    """
    object plain_tuple "hbase_migrate_plain_tuple"(object type, tuple items)
    void untrack "PyObject_GC_UnTrack"(object values)
