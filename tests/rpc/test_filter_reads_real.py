"""Reads as everyday applications make them, with filters and a scan's limits (issue 58):
HBase 2.6.1's own Java client (``FilterReads`` of ``tests/minihbase/javaclient``) writes a
few cells with their own timestamps and reads them back through every filter, comparator
and scan setting a shell user or a typical application reaches for, against real Apache
HBase 2.6.1 (the session's ``real_hbase``) and against the embedded cluster. Both are held
to the same expectations, written here by hand from the data and HBase's filter semantics
(``Filter.proto`` and the filter classes of branch-2.6): a ValueFilter may return an older
version, PageFilter counts rows per region, SingleColumnValueFilter's ``filterIfMissing``
and ``latestVersionOnly``, reversed scans across regions, batches, limits, partial rows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.rpc.java_programs import run_program
from tests.rpc.two_stacks import described

__all__ = ["described"]  # the module's stacks: the embedded cluster and real HBase

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.realstack]

ROWS = {  # each row as a plain read gives it: the newest version of each column
    "a1": "a1/f:q1/20=apricot; a1/f:q2/10=10; a1/g:x/10=gx",
    "a2": "a2/f:q1/10=banana; a2/f:r1/10=cherry",
    "b1": "b1/f:q1/10=apple; b1/f:q3/10=Date",
    "m1": "m1/f:q1/10=melon; m1/f:q2/10=20; m1/g:x/10=gm",
    "m2": "m2/f:r2/10=kiwi",
    "n1": "n1/f:q1/40=nut",
    "z9": "z9/g:x/10=gz",
}
ALL = list(ROWS.values())


def rows(*names: str) -> list[str]:
    return [ROWS[name] for name in names]


EXPECTED: dict[str, list[str]] = {
    "all": ALL,
    "prefix": rows("a1", "a2"),
    # the newest q1 is apple; a row without q1 passes unless filterIfMissing
    "scvf": rows("b1", "m2", "z9"),
    "scvf_missing": rows("b1"),
    # any version of q1 may match; the row's newest version of q1 is what comes back
    "scvf_all_versions": rows("a1", "b1", "n1"),
    "column_prefix": ["a1/f:q1/20=apricot; a1/f:q2/10=10", "a2/f:q1/10=banana", ROWS["b1"],
                      "m1/f:q1/10=melon; m1/f:q2/10=20", ROWS["n1"]],
    "first_key_only": ["a1/f:q1/20=apricot", "a2/f:q1/10=banana", "b1/f:q1/10=apple",
                       "m1/f:q1/10=melon", ROWS["m2"], ROWS["n1"], ROWS["z9"]],
    "key_only": [r"m1/f:q1/10=\x00\x00\x00\x05; m1/f:q2/10=\x00\x00\x00\x02; "
                 r"m1/g:x/10=\x00\x00\x00\x02"],
    "page": rows("a1", "a2", "m1", "m2"),  # two rows of each region
    "row_regex": rows("a1", "a2", "b1"),
    # the filter sees the family's versions: n1's older apple matches, a1's newest does
    "value_substring": ["a1/f:q1/20=apricot", "b1/f:q1/10=apple", "n1/f:q1/30=apple"],
    "qualifier_prefix": ["a2/f:r1/10=cherry", ROWS["m2"]],
    "qualifier_less": ["a1/f:q1/20=apricot", "a2/f:q1/10=banana", "b1/f:q1/10=apple",
                       "m1/f:q1/10=melon", ROWS["n1"]],
    "list_or": rows("m1", "m2", "z9"),
    "list_and": ["a1/f:q1/20=apricot; a1/f:q2/10=10", "a2/f:q1/10=banana",
                 "b1/f:q3/10=Date", "m1/f:q1/10=melon; m1/f:q2/10=20", ROWS["n1"]],
    "timestamps": ["a1/f:q1/10=apple; a1/f:q2/10=10; a1/g:x/10=gx", ROWS["a2"]],
    "column_range": ["a1/f:q2/10=10", "a2/f:r1/10=cherry", "b1/f:q3/10=Date",
                     "m1/f:q2/10=20"],
    "multi_prefix": ["a1/g:x/10=gx", "a2/f:r1/10=cherry", "m1/g:x/10=gm", ROWS["m2"],
                     ROWS["z9"]],
    "inclusive_stop": rows("m1", "m2"),
    "reversed": rows("m2", "m1", "b1"),
    "reversed_prefix": rows("a2", "a1"),
    "batch": ["m1/f:q1/10=melon; m1/f:q2/10=20", "m1/g:x/10=gm"],
    "limit": rows("a1", "a2", "b1"),
    "versions_range": ["n1/f:q1/40=nut; n1/f:q1/30=apple"],
    "store_limit_offset": ["a1/f:q2/10=10", "a2/f:r1/10=cherry"],
    "small_calls": ALL,
    "partial": ["m1/f:q1/10=melon", "m1/f:q2/10=20", "m1/g:x/10=gm"],
    "get_count": ["a1/f:q1/20=apricot; a1/f:q2/10=10"],
    "get_regex": ["b1/f:q3/10=Date"],
    "get_family_range": ["a1/f:q1/10=apple; a1/f:q2/10=10; a1/g:x/10=gx"],
    "get_store_limit": ["a1/f:q1/20=apricot; a1/g:x/10=gx"],
    "batch_get": ["a2/f:r1/10=cherry", ROWS["m2"]],
}


def filter_reads(described: dict[str, Any]) -> dict[str, list[str]]:
    """What FilterReads printed, by read."""
    out: dict[str, list[str]] = {}
    for line in run_program(described, "FilterReads"):
        what, _, result = line.partition(": ")
        out.setdefault(what, []).append(result)
    return out


def test_filtered_reads_as_hbase_gives_them(described: dict[str, Any]) -> None:
    got = filter_reads(described)
    wrong = {what: got.get(what) for what in EXPECTED if got.get(what) != EXPECTED[what]}
    assert not wrong, f"{described['stack']} differs: {wrong}"
    assert set(got) == set(EXPECTED)
