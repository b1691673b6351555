# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled copy of ``visible.visible_cells`` (the matcher of a normal scan: deletes,
versions, TTL, time range) on C integers, built by ``make setup``
(``scripts/build-speedups.py``); ``visible.py`` holds the reference and the rules' sources,
and chooses. Timestamps are 64-bit (as every store cell's); a scan or family whose times do
not fit 64 bits is the reference's (``visible_cells`` answers None). A cell's own TTL tag
goes through the reference's ``_cell_ttl_expired``."""

from libc.stdint cimport int64_t

from hbase_migrate.hfile.visible import _cell_ttl_expired

DEF DELETE = 8
DEF DELETE_FAMILY_VERSION = 10
DEF DELETE_COLUMN = 12
DEF DELETE_FAMILY = 14
DEF HIDES_NONE = 0
DEF HIDES_CELL = 1
DEF HIDES_COLUMN = 2

cdef int64_t LONG_MIN = -0x7FFFFFFFFFFFFFFF - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


cdef class _Store:
    """``visible._Store`` with ``visible._Deletes`` in it: one family's matcher."""
    cdef int64_t oldest, min_ts, max_ts
    cdef object now_ms
    cdef Py_ssize_t versions, min_versions, count
    cdef bint see_past_deletes
    # the delete markers of the row and family (``_Deletes``)
    cdef bint has_family
    cdef int64_t family_stamp, column_stamp
    cdef set family_versions
    cdef object column_deleted  # the qualifier of the last column delete kept, or None
    cdef int column_type
    # the column being counted
    cdef object ended, column
    cdef bint has_last
    cdef int64_t last_ts
    cdef int last_type

    def __init__(self, int64_t oldest, int64_t min_ts, int64_t max_ts, object now_ms,
                 Py_ssize_t versions, Py_ssize_t min_versions, bint see_past_deletes):
        self.oldest, self.min_ts, self.max_ts, self.now_ms = oldest, min_ts, max_ts, now_ms
        self.versions, self.min_versions = versions, min_versions
        self.see_past_deletes = see_past_deletes
        self.reset()

    cdef void reset(self):
        self.has_family = False
        self.family_versions = set()
        self.column_deleted = None
        self.column_type = 0
        self.column_stamp = 0
        self.ended = None
        self.column = None
        self.count = 0
        self.has_last = False

    cdef void add_delete(self, object qualifier, int64_t ts, object ts_object, int kind):
        if self.has_family and ts <= self.family_stamp:
            return
        if kind == DELETE_FAMILY:
            self.has_family, self.family_stamp = True, ts
        elif kind == DELETE_FAMILY_VERSION:
            self.family_versions.add(ts_object)
        elif not (self.column_deleted == qualifier and kind < self.column_type):
            self.column_deleted, self.column_type, self.column_stamp = qualifier, kind, ts

    cdef int hides(self, object qualifier, int64_t ts, object ts_object):
        if self.has_family and ts <= self.family_stamp:
            return HIDES_COLUMN
        if self.family_versions and ts_object in self.family_versions:
            return HIDES_CELL
        if self.column_deleted is not None:
            if self.column_deleted == qualifier:
                if self.column_type == DELETE_COLUMN:
                    return HIDES_COLUMN
                if ts == self.column_stamp:
                    return HIDES_CELL
            self.column_deleted = None
        return HIDES_NONE

    cdef bint take(self, tuple cell) except -1:
        cdef object qualifier = cell[2], ts_object = cell[3]
        cdef int64_t ts = ts_object
        cdef int kind = cell[4], hidden
        cdef bint after
        if qualifier == self.ended:
            return False
        if ts == LONG_MIN or (self.min_versions <= 0 and ts < self.oldest):
            self.ended = qualifier
            return False
        if cell[6] and _cell_ttl_expired(cell, self.now_ms):
            return False
        if kind == DELETE or kind == DELETE_FAMILY_VERSION or kind == DELETE_COLUMN \
                or kind == DELETE_FAMILY:
            after = ts >= self.max_ts
            if ts >= self.min_ts and (not after or not self.see_past_deletes):
                self.add_delete(qualifier, ts, ts_object, kind)
            return False
        hidden = self.hides(qualifier, ts, ts_object)
        if hidden == HIDES_NONE and ts < self.max_ts:
            if ts >= self.min_ts:
                return self.version(qualifier, ts, kind)
            hidden = HIDES_COLUMN
        if hidden == HIDES_COLUMN:
            self.ended = qualifier
        return False

    cdef bint version(self, object qualifier, int64_t ts, int kind):
        if qualifier != self.column:
            self.column, self.count, self.has_last = qualifier, 0, False
        elif self.has_last and self.last_ts == ts and self.last_type == kind:
            return False
        self.count += 1
        if self.count > self.versions:
            self.ended = qualifier
            return False
        if self.count <= self.min_versions or ts >= self.oldest:
            self.has_last, self.last_ts, self.last_type = True, ts, kind
            return True
        self.ended = qualifier
        return False


def _fits(value):
    return _LONG_MIN <= value <= _LONG_MAX


def visible_cells(cells, rules, scan):
    """``visible.visible_cells`` of ``cells``, or None when the scan's or a family's times
    do not fit 64 bits."""
    made = {}
    for family, rule in rules.items():
        oldest = _LONG_MIN if rule.ttl_ms is None else scan.now_ms - rule.ttl_ms
        if not all(_fits(v) for v in (oldest, scan.min_ts, scan.max_ts, rule.min_versions,
                                      min(rule.max_versions, scan.max_versions))):
            return None
        made[family] = (oldest, scan.min_ts, scan.max_ts, scan.now_ms,
                        min(rule.max_versions, scan.max_versions), rule.min_versions,
                        rule.keep_deleted_cells != "FALSE")
    return _visible(cells, made)


def _visible(cells, dict made):
    cdef dict stores = {}
    cdef _Store store = None
    cdef object at_row = None, at_family = None
    cdef bint started = False
    cdef tuple cell
    for stored in cells:
        cell = <tuple>stored[0]
        if not started or at_row != cell[0] or at_family != cell[1]:
            started, at_row, at_family = True, cell[0], cell[1]
            store = stores.get(at_family)
            if store is None:
                if at_family not in made:  # region.py refuses such stores first
                    raise ValueError(f"cell of family {at_family!r}, which no rules name")
                store = stores[at_family] = _Store(*made[at_family])
            store.reset()
        if store.take(cell):
            yield cell
