"""The live validation of a replay round: only the rows the replay runs since the last
validation wrote, read with a Get each on both sides, not every range of every table.

What a round is: each replay run records the rows it handed to the target
(:mod:`hbase_migrate.replay.touched`, the ledger's ``replay_rounds``); the rounds no
validation has compared yet, of runs that have ended, make the next round. Its rows are read
in batches (a Multi of Gets per region server, Thrift2's ``getMultiple``) and compared cell
for cell (every visible version, as the checksums compare); a row that differs
is *pending* when the source holds an edit of it, a cell or a delete marker (read raw),
newer than the round's horizon (the start of its newest run, or of its oldest run that
failed, less ``HORIZON_MARGIN_MS`` for the clocks of the edge node and the region
servers): every edit synced before a run began is read by that run, so only a newer one may
still be on its way. Any other differing row is a difference.

What a round proves, and what it does not: that the rows the replay wrote equal the source's
as of the horizon. A row the replay did not write (changed on the target by hand, or lost
by a copy) is not read: that is the full validation's, which the cutover gate requires. A
round falls back to every range (:func:`plan_round` says why) where it cannot be exact: no
validation since the copy to build on, a run that ended without recording its rows (killed),
a run that wrote more rows of a table than it lists, or only some of the tables asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.requests import counted
from hbase_migrate.limits import Throttle, metered_batches
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import digest_rows
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.replay.touched import ROUND_STEPS, ROWS_CAP
from hbase_migrate.validate.compare import Comparison, compare_cells
from hbase_migrate.wal.model import Cell, cell_order

HORIZON_MARGIN_MS = 5_000
EXAMPLES = 10
CHUNK = 2_000  # rows fetched from the source (on a thread) while the target's are fetched


@dataclass(frozen=True)
class Round:
    """What a round's validation compares: ``rows`` by source table, written by the replay
    steps ``steps``; edits older than ``horizon`` (ms) were all read by them."""

    steps: tuple[int, ...]
    rows: Mapping[str, frozenset[bytes]]
    horizon: int

    def to_json(self) -> dict[str, Any]:
        return {"replays": list(self.steps), "horizon": self.horizon,
                "rows": sum(map(len, self.rows.values()))}


def plan_round(ledger: Ledger, migration_id: int, mapping: Mapping[str, str],
               chosen: Sequence[str]) -> Round | str:
    """The round to compare for the tables ``mapping`` maps (source -> target), or why the
    tables ``chosen`` are read whole instead (every range)."""
    if set(chosen) != set(mapping):
        return "a round compares every table of the migration; some were left out"
    steps = ledger.steps(migration_id)
    copied = max((s.id for s in steps if s.kind == "snapshot"
                  and s.status is StepStatus.SUCCEEDED), default=0)
    baseline = max((s.id for s in steps if s.kind == "validate" and s.id > copied
                    and s.status is StepStatus.SUCCEEDED), default=None)
    if baseline is None:
        return "no validation since the copy for the rounds to build on"
    status = {s.id: s.status for s in steps}
    recorded = ledger.round_steps(migration_id)
    unrecorded = [s.id for s in steps if s.kind in ROUND_STEPS and s.id > baseline
                  and s.id not in recorded and s.status is not StepStatus.RUNNING]
    if unrecorded:
        return f"replay step {unrecorded[0]} recorded no round (an older version ran it)"
    ended = [r for r in ledger.open_rounds(migration_id)
             if status.get(r.step_id) is not StepStatus.RUNNING]
    source_of = {target: source for source, target in mapping.items()}
    rows: dict[str, set[bytes]] = {source: set() for source in mapping}
    for r in ended:
        if not r.rows_known:
            return f"replay step {r.step_id} ended without recording the rows it wrote"
        for table, keys in r.rows.items():
            if table not in source_of:
                continue
            if keys is None:
                return (f"replay step {r.step_id} wrote more than {ROWS_CAP:,} rows of "
                        f"{table}")
            rows[source_of[table]] |= keys
    newest = max((r.started_at for r in ended
                  if status[r.step_id] is StepStatus.SUCCEEDED), default=0)
    failed = [r.started_at for r in ended if status[r.step_id] is not StepStatus.SUCCEEDED]
    horizon = min([newest, *failed]) - HORIZON_MARGIN_MS
    return Round(tuple(r.step_id for r in ended), {t: frozenset(k) for t, k in rows.items()},
                 horizon)


def ended_rounds(ledger: Ledger, migration_id: int, before: int | None = None) -> list[int]:
    """The replay steps whose rounds no validation compared yet and that have ended (before
    ``before``, ms, when given): what a validation of every range read after them also
    compares."""
    ended = {s.id: s.ended_at for s in ledger.steps(migration_id)
             if s.status is not StepStatus.RUNNING and s.ended_at is not None}
    return [r.step_id for r in ledger.open_rounds(migration_id) if r.step_id in ended
            and (before is None or ended[r.step_id] < before)]


@dataclass
class RowsCompared:
    """One table's rows of a round compared: ``pair`` holds both sides' statistics of the
    rows judged (matching and differing; pending ones left out), for GX."""

    table: str
    target: str
    rows: int = 0
    matching: int = 0
    pending: list[bytes] = field(default_factory=list)
    differing: list[bytes] = field(default_factory=list)
    comparison: Comparison = field(default_factory=Comparison)
    pair: RangePair | None = None

    def to_json(self) -> dict[str, Any]:
        return {"source": self.table, "target": self.target, "rows": self.rows,
                "matching": self.matching, "pending": len(self.pending),
                "differing": len(self.differing),
                "source_cells": self.pair.source.cells if self.pair else 0,
                "target_cells": self.pair.target.cells if self.pair else 0,
                "pending_rows": [short_binary(r) for r in self.pending[:EXAMPLES]],
                "examples": self.comparison.examples}


def compare_rows(source: Client, target: Client, table: str, target_table: str,
                 rows: frozenset[bytes], horizon: int, throttle: Throttle | None = None
                 ) -> RowsCompared:
    """The round's ``rows`` of ``table`` on both sides (the source's fetched on a second
    thread: two clusters answer in parallel); the requests sent are counted per side in
    the pair."""
    done = RowsCompared(table, target_table)
    judged: tuple[list[list[Cell]], list[list[Cell]]] = ([], [])
    source_sent = target_sent = 0
    ordered = sorted(rows)
    with ThreadPoolExecutor(1, thread_name_prefix=f"round {table}") as pool:
        for at in range(0, len(ordered), CHUNK):
            chunk = ordered[at:at + CHUNK]
            left = pool.submit(_fetch, source, table, chunk, throttle)
            right, sent = _fetch(target, target_table, chunk, throttle)
            target_sent += sent
            got, sent = left.result()
            source_sent += sent
            for row, a, b in zip(chunk, got, right, strict=True):
                done.rows += 1
                if a == b or compare_cells(iter(a), iter(b)).equal:  # the same cells: equal
                    done.matching += 1
                elif _newest_edit(source, table, row) > horizon:
                    done.pending.append(row)
                    continue
                else:
                    done.differing.append(row)
                    compare_cells(iter(a), iter(b), EXAMPLES, done.comparison)
                judged[0].append(a)
                judged[1].append(b)
    whole = KeyRange(table)
    done.pair = RangePair(digest_rows(whole, [r for r in judged[0] if r]),
                          digest_rows(whole, [r for r in judged[1] if r]), source_sent,
                          target_requests=target_sent)
    return done


def _fetch(client: Client, table: str, rows: Sequence[bytes], throttle: Throttle | None
           ) -> tuple[list[list[Cell]], int]:
    """Each row's visible cells in HBase's order (the rows asked together: a Multi of Gets
    per region server, taken from ``throttle`` together), and the requests it took."""
    with counted() as sent:
        got = [sorted(cells, key=cell_order) for batch in metered_batches(
            _asked(client, table, rows), throttle) for cells in batch]
    return got, sent.count


def _asked(client: Client, table: str, rows: Sequence[bytes]) -> Iterator[list[list[Cell]]]:
    """The rows' cells, got when first asked for (an adaptive throttle times the Gets)."""
    yield client.get_rows(table, rows)


def _newest_edit(client: Client, table: str, row: bytes) -> int:
    """The newest timestamp among the row's cells and delete markers on ``client``."""
    return max((c.timestamp for piece in client.scan(table, row, row + b"\0", raw=True)
                for c in piece), default=-1)
