"""``FilterList`` of the embedded region servers, as HBase's ``FilterListWithAND`` (the
maximal step of its filters, hints from every hinting filter) and ``FilterListWithOR`` (the
minimal step; a filter that asked to skip a column, a row or up to a hint is not asked again
for the cells it skipped) in branch-2.6."""

from __future__ import annotations

from hbase_migrate.wal.model import Cell
from minihbase.rpc.filterbase import INCLUDES, Code, Filter, Key, key

C = Code
# the step of each code, INCLUDE < SKIP < INCLUDE_AND_NEXT_COL < NEXT_COL <
# INCLUDE_AND_SEEK_NEXT_ROW < NEXT_ROW < SEEK_NEXT_USING_HINT
_STEP = {C.INCLUDE: 0, C.SKIP: 1, C.INCLUDE_AND_NEXT_COL: 2, C.NEXT_COL: 3,
         C.INCLUDE_AND_SEEK_NEXT_ROW: 4, C.NEXT_ROW: 5, C.SEEK_NEXT_USING_HINT: 6}


def _and(rc: Code, local: Code) -> Code:
    """``FilterListWithAND.mergeReturnCode``: the larger step; an include only when both
    include."""
    if C.SEEK_NEXT_USING_HINT in (rc, local):
        return C.SEEK_NEXT_USING_HINT
    step = max(_STEP[rc], _STEP[local])
    if rc in INCLUDES and local in INCLUDES:
        return rc if _STEP[rc] == step else local
    # one of them excludes the cell: the step, as an exclusion
    return {0: C.SKIP, 1: C.SKIP, 2: C.NEXT_COL, 3: C.NEXT_COL, 4: C.NEXT_ROW,
            5: C.NEXT_ROW}[step]


_OR: dict[Code, dict[Code, Code]] = {  # FilterListWithOR.mergeReturnCode: [local][rc]
    C.INCLUDE: dict.fromkeys(Code, C.INCLUDE),
    C.INCLUDE_AND_NEXT_COL: {
        C.INCLUDE: C.INCLUDE, C.SKIP: C.INCLUDE, C.SEEK_NEXT_USING_HINT: C.INCLUDE,
        C.INCLUDE_AND_NEXT_COL: C.INCLUDE_AND_NEXT_COL,
        C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE_AND_NEXT_COL, C.NEXT_COL: C.INCLUDE_AND_NEXT_COL,
        C.NEXT_ROW: C.INCLUDE_AND_NEXT_COL},
    C.INCLUDE_AND_SEEK_NEXT_ROW: {
        C.INCLUDE: C.INCLUDE, C.SKIP: C.INCLUDE, C.SEEK_NEXT_USING_HINT: C.INCLUDE,
        C.INCLUDE_AND_NEXT_COL: C.INCLUDE_AND_NEXT_COL, C.NEXT_COL: C.INCLUDE_AND_NEXT_COL,
        C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE_AND_SEEK_NEXT_ROW,
        C.NEXT_ROW: C.INCLUDE_AND_SEEK_NEXT_ROW},
    C.SKIP: {C.INCLUDE: C.INCLUDE, C.INCLUDE_AND_NEXT_COL: C.INCLUDE,
             C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE, C.SKIP: C.SKIP, C.NEXT_COL: C.SKIP,
             C.NEXT_ROW: C.SKIP, C.SEEK_NEXT_USING_HINT: C.SKIP},
    C.NEXT_COL: {C.INCLUDE: C.INCLUDE, C.NEXT_COL: C.NEXT_COL, C.NEXT_ROW: C.NEXT_COL,
                 C.INCLUDE_AND_NEXT_COL: C.INCLUDE_AND_NEXT_COL,
                 C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE_AND_NEXT_COL, C.SKIP: C.SKIP,
                 C.SEEK_NEXT_USING_HINT: C.SKIP},
    C.NEXT_ROW: {C.INCLUDE: C.INCLUDE, C.INCLUDE_AND_NEXT_COL: C.INCLUDE_AND_NEXT_COL,
                 C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE_AND_SEEK_NEXT_ROW, C.SKIP: C.SKIP,
                 C.SEEK_NEXT_USING_HINT: C.SKIP, C.NEXT_COL: C.NEXT_COL,
                 C.NEXT_ROW: C.NEXT_ROW},
    C.SEEK_NEXT_USING_HINT: {
        C.INCLUDE: C.INCLUDE, C.INCLUDE_AND_NEXT_COL: C.INCLUDE,
        C.INCLUDE_AND_SEEK_NEXT_ROW: C.INCLUDE, C.SKIP: C.SKIP, C.NEXT_COL: C.SKIP,
        C.NEXT_ROW: C.SKIP, C.SEEK_NEXT_USING_HINT: C.SEEK_NEXT_USING_HINT},
}


class FilterList(Filter):
    """What AND and OR lists share (``FilterListBase``)."""

    def __init__(self, filters: list[Filter]) -> None:
        self.filters = filters
        self.included = [False] * len(filters)

    def _cmp(self, a: Key, b: Key) -> int:
        c = (a > b) - (a < b)
        return -c if self.reversed else c

    def set_reversed(self, reversed_: bool) -> None:
        self.reversed = reversed_
        for f in self.filters:
            f.set_reversed(reversed_)

    def has_filter_row(self) -> bool:
        return any(f.has_filter_row() for f in self.filters)

    def transform_cell(self, cell: Cell) -> Cell:
        for f, included in zip(self.filters, self.included, strict=True):
            if included:
                cell = f.transform_cell(cell)
        return cell


class FilterListAnd(FilterList):
    def __init__(self, filters: list[Filter]) -> None:
        super().__init__(filters)
        self.included = [True] * len(filters)
        self.seek_hinting: list[Filter] = []

    def filter_cell(self, cell: Cell) -> Code:
        if not self.filters:
            return C.INCLUDE
        rc, self.seek_hinting = C.INCLUDE, []
        i, n = 0, len(self.filters)
        while i < n:
            f = self.filters[i]
            if f.filter_all_remaining():
                rc = C.NEXT_ROW
                break
            local = f.filter_cell(cell)
            if local == C.SEEK_NEXT_USING_HINT:
                self.seek_hinting.append(f)
            rc = _and(rc, local)
            if rc not in INCLUDES:
                break
            i += 1
        for f in self.filters[i + 1:]:  # the hinting filters not asked: their hints
            if f.hinting and f.filter_cell(cell) == C.SEEK_NEXT_USING_HINT:
                self.seek_hinting.append(f)
        return C.SEEK_NEXT_USING_HINT if self.seek_hinting else rc

    def reset(self) -> None:
        for f in self.filters:
            f.reset()
        self.seek_hinting = []

    def filter_row_key(self, cell: Cell) -> bool:
        if not self.filters:
            return super().filter_row_key(cell)
        filtered = hinting_passed = False
        for f in self.filters:
            if f.filter_all_remaining():
                return True
            if f.filter_row_key(cell):
                filtered = True
            elif f.hinting:
                hinting_passed = True
        return filtered and not hinting_passed

    def filter_all_remaining(self) -> bool:
        return any(f.filter_all_remaining() for f in self.filters)

    def filter_row(self) -> bool:
        return any(f.filter_row() for f in self.filters)

    def next_hint(self, cell: Cell) -> Key | None:
        best: Key | None = None
        for f in self.seek_hinting:
            if f.filter_all_remaining():
                continue
            hint = f.next_hint(cell)
            if best is None or (hint is not None and self._cmp(best, hint) < 0):
                best = hint
        return best


class FilterListOr(FilterList):
    def __init__(self, filters: list[Filter]) -> None:
        super().__init__(filters)
        self.prev_code: list[Code | None] = [None] * len(filters)
        self.prev_cell: list[Cell | None] = [None] * len(filters)

    def _by_previous(self, f: Filter, cell: Cell, prev: Cell | None,
                     code: Code | None) -> Code | None:
        """``calculateReturnCodeByPrevCellAndRC``: a cell the filter asked to skip."""
        if prev is None or code is None or code in (C.INCLUDE, C.SKIP):
            return None
        if code == C.SEEK_NEXT_USING_HINT:
            hint = f.next_hint(prev)
            return (C.SEEK_NEXT_USING_HINT if hint is not None and self._cmp(key(cell), hint) < 0
                    else None)
        if code in (C.NEXT_COL, C.INCLUDE_AND_NEXT_COL):
            same = (prev.family, prev.qualifier) == (cell.family, cell.qualifier)
            return C.NEXT_COL if same else None
        return C.NEXT_ROW if prev.family == cell.family else None

    def filter_cell(self, cell: Cell) -> Code:
        if not self.filters:
            return C.INCLUDE
        rc: Code | None = None
        for i, f in enumerate(self.filters):
            self.included[i] = False
            if f.filter_all_remaining():
                continue
            local = self._by_previous(f, cell, self.prev_cell[i], self.prev_code[i])
            if local is None:
                local = f.filter_cell(cell)
            self.prev_code[i] = local
            self.prev_cell[i] = None if local in (C.INCLUDE, C.SKIP) else cell
            rc = local if rc is None else _OR[local][rc]
            self.included[i] = local in INCLUDES
        return C.SKIP if rc is None else rc

    def reset(self) -> None:
        for i, f in enumerate(self.filters):
            f.reset()
            self.included[i] = False
            self.prev_code[i] = None
            self.prev_cell[i] = None

    def filter_row_key(self, cell: Cell) -> bool:
        if not self.filters:
            return super().filter_row_key(cell)
        filtered = True
        for f in self.filters:  # every filter sees the row, as in HBase
            if not f.filter_all_remaining() and not f.filter_row_key(cell):
                filtered = False
        return filtered

    def filter_all_remaining(self) -> bool:
        return all(f.filter_all_remaining() for f in self.filters) if self.filters else False

    def filter_row(self) -> bool:
        return all(f.filter_row() for f in self.filters) if self.filters else False

    def next_hint(self, cell: Cell) -> Key | None:
        best: Key | None = None
        for f in self.filters:
            if f.filter_all_remaining():
                continue
            hint = f.next_hint(cell)
            if hint is None:
                return None
            if best is None or self._cmp(best, hint) > 0:
                best = hint
        return best
