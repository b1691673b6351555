"""Groups of a migration's planned key ranges: the parts a copy or a validation is split
into (one Airflow task each, mapped), so that each part can be watched and retried alone.

The groups are contiguous (by table, then start key), balanced by planned cells, and
computed from the ledger's planned ranges alone: every task that computes them gets the
same groups. Parts are numbered from 1: part ``(i, n)`` is the i-th of n.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import accumulate, pairwise

from hbase_migrate.audit.records import KeyRangeRecord, StepRecord
from hbase_migrate.errors import ConfigError
from hbase_migrate.ranges.keyrange import KeyRange


def in_part_order(steps: Iterable[StepRecord]) -> list[StepRecord]:
    """Steps of parts (``part`` metric ``"i/n"``) by part number, each part's tries in
    order: parts may run in any order (Airflow's mapped tasks do). A try killed before it
    recorded its part (marked failed once its process was gone) is left out: it is no
    part's, and it recorded nothing of one."""
    named = [s for s in steps if "part" in s.metrics]
    return sorted(named, key=lambda s: (parse_part(str(s.metrics["part"])), s.id))


def part_count(wanted: int, ranges: int) -> int:
    """How many parts ``ranges`` planned ranges are split into when ``wanted`` are asked:
    never more than the ranges, at least one."""
    if wanted < 1:
        raise ConfigError(f"parts must be 1 or more, got {wanted}")
    return max(1, min(wanted, ranges))


def split_weights(weights: Sequence[int], n: int) -> list[range]:
    """``n`` contiguous, non-empty slices of ``weights`` (by index), each cut where the
    running total comes nearest its ``k/n`` mark of the whole."""
    if not 1 <= n <= max(1, len(weights)):
        raise ConfigError(f"cannot split {len(weights)} range(s) into {n} part(s)")
    prefix = [0, *accumulate(weights)]
    cuts = [0]
    for k in range(1, n):
        mark = prefix[-1] * k / n
        j = bisect_left(prefix, mark)
        if j > 0 and mark - prefix[j - 1] <= prefix[min(j, len(prefix) - 1)] - mark:
            j -= 1
        cuts.append(min(max(j, cuts[-1] + 1), len(weights) - (n - k)))
    cuts.append(len(weights))
    return [range(a, b) for a, b in pairwise(cuts)]


def range_group(records: Sequence[KeyRangeRecord], part: tuple[int, int]
                ) -> list[tuple[KeyRange, int]]:
    """The key ranges of part ``part`` (``(i, n)``, 1-based) of ``records`` (planned
    ranges, any order), each with its planned cells."""
    i, n = part
    ordered = sorted(records, key=lambda r: (r.table_name, r.range_start))
    most = part_count(n, len(ordered))
    if not 1 <= i <= n or n != most:
        raise ConfigError(f"part {i}/{n}: {len(ordered)} planned range(s) make {most} "
                          f"part(s) at most, numbered 1 to {most}")
    slices = split_weights([max(1, r.planned_cells) for r in ordered], n)
    return [(KeyRange(r.table_name, r.range_start, r.range_end), r.planned_cells)
            for r in (ordered[j] for j in slices[i - 1])]


def parse_part(text: str) -> tuple[int, int]:
    """``I/N`` (as ``--part`` takes it) as ``(i, n)``."""
    i, sep, n = text.partition("/")
    try:
        if not sep:
            raise ValueError(text)
        part = int(i), int(n)
    except ValueError:
        raise ConfigError(f"part {text!r}: expected I/N, e.g. 2/4") from None
    if not 1 <= part[0] <= part[1]:
        raise ConfigError(f"part {text!r}: I must be between 1 and N")
    return part

