"""The target's side of a validation from both snapshots, and the point both sides stand for.

``validate --from snapshot`` with a target whose files can be read (an HBase root over
WebHDFS, as the source's) reads no region server of either cluster:

1. Before the source's snapshots, the replay's acknowledged offsets are noted (where the
   WAL's part the source side needs begins at the earliest).
2. The source's snapshots are taken (:func:`hbase_migrate.lifecycle.validate
   .source_snapshots`). A region's snapshot holds, per family, exactly its edits with a WAL
   sequence id below its newest store file's (:mod:`hbase_migrate.snapshot.tail`).
3. The wait: a replay run that started after the snapshots were taken finishes (at most
   ``wait`` s), so the replay has read every WAL entry written before them, the
   snapshots' edits among them.
4. The replay is held still (:func:`hbase_migrate.replay.lock.held_still`: the run under
   way ends, the next waits), the ledger's offsets are read (``P``: every WAL entry up to
   them applied to the target and acknowledged) and the target's snapshots are taken;
   then the replay goes on.
5. The source side is the source snapshot's files plus the WAL entries past each region's
   files up to ``P``; the target side is the target snapshot's files. Both stand for "the
   source after every WAL edit up to ``P``", a point at or past the source snapshot's flush
   in every region once the wait of 3 was met, so ``match`` means the target equals the
   source as of that point while the source keeps taking writes.

A replay run that stopped half way (killed) may have applied past the offsets it recorded:
the target is then ahead of ``P`` and its ranges differ until the next validation (never a
false match).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hbase_migrate import runstate
from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.cluster.admin import snapshot_name
from hbase_migrate.config import MigrationSpec, TableSpec
from hbase_migrate.replay.discovery import open_wal_store
from hbase_migrate.replay.job import REPLAY_STREAM
from hbase_migrate.replay.lock import held_still
from hbase_migrate.snapshot.tail import Tail, WalSpan, read_tail

POLL = 0.5
AWAITED = "a replay run started after the source's snapshots to finish"


@dataclass(frozen=True)
class TargetSide:
    """The target's snapshots (by source table) and the source's WAL tail up to ``P``."""

    snapshots: Mapping[str, str]
    tail: Tail


def replay_offsets(ledger: Ledger, migration_id: int) -> dict[str, tuple[str, int]]:
    """The replay's acknowledged offset of each WAL file, by file name: (path, offset)."""
    return {r.path.rsplit("/", 1)[-1]: (r.path, r.offset_reached)
            for r in ledger.wal_files(migration_id, REPLAY_STREAM)}


def readable_target(spec: MigrationSpec) -> bool:
    """Whether the target's store files can be read: an HBase root over WebHDFS holding the
    layout file HBase writes (a Bigtable or embedded target has none)."""
    from hbase_migrate.hbase import open_cluster
    from hbase_migrate.snapshot.hbase_method import LAYOUT_FILE

    root = open_cluster(spec.target).file_root()  # None for a Bigtable target
    return root is not None and root.status(LAYOUT_FILE) is not None


def wait_for_catch_up(ledger: Ledger, migration_id: int, since: int, timeout: float
                      ) -> dict[str, Any]:
    """Wait at most ``timeout`` s for a replay run started at or after ``since`` (ms) to
    succeed; at once when the migration was never replayed."""
    began = time.monotonic()
    if not ledger.steps(migration_id, "replay"):
        return {"caught_up": False, "waited": 0.0,
                "note": "the migration is not being replayed"}
    runstate.announce(f"validate: waiting up to {timeout:.0f}s for {AWAITED} (the target "
                      "then holds every edit of the source's snapshots)")
    wait = runstate.Wait(AWAITED, timeout)
    runstate.meter.waiting = wait
    try:
        while True:
            if any(s.started_at >= since and s.status is StepStatus.SUCCEEDED
                   for s in ledger.steps(migration_id, "replay")):
                return {"caught_up": True, "waited": round(time.monotonic() - began, 2),
                        "note": "a replay run started after the source's snapshots "
                                "finished"}
            if time.monotonic() - began >= timeout:
                return {"caught_up": False, "waited": round(timeout, 2),
                        "note": f"no replay run started after the source's snapshots "
                                f"finished within {timeout:.0f}s: the target may lack "
                                "some of their edits (its ranges then differ)"}
            runstate.check_stop(f"validate: the wait for {AWAITED}")
            time.sleep(POLL)
    finally:
        runstate.meter.waiting = None


def tail_spans(spec: MigrationSpec, before: Mapping[str, tuple[str, int]],
               held: Mapping[str, tuple[str, int]]) -> list[WalSpan]:
    """The WAL bytes between the offsets noted before the source's snapshots and those the
    replay held still at, each file found where it is now (archived meanwhile)."""
    store = open_wal_store(spec.source)
    spans = []
    for name, (recorded, stop) in sorted(held.items()):
        start = before.get(name, ("", 0))[1]
        if stop <= start:
            continue
        path = recorded
        try:
            store.status(recorded)
        except FileNotFoundError:
            path = store.moved_path(recorded) or recorded
        spans.append(WalSpan(path, start, stop))
    return spans


@contextmanager
def target_snapshots(spec: MigrationSpec, ledger: Ledger, migration_id: int,
                     tables: Sequence[TableSpec], before: Mapping[str, tuple[str, int]],
                     taken_at: int, wait: float, metrics: dict[str, Any], asked: int = 0
                     ) -> Iterator[TargetSide]:
    """Steps 3 to 5 of the module's doc: the target's snapshots taken with the replay held
    still, the source's WAL tail read (``asked``: when the source's snapshots were asked
    for, ms); ``metrics`` get the point both sides stand for. The target's snapshots are
    deleted when the block ends without an error."""
    from hbase_migrate.hbase import open_cluster
    from hbase_migrate.snapshot.export import open_root

    metrics["catch_up"] = wait_for_catch_up(ledger, migration_id, taken_at, wait)
    admin = open_cluster(spec.target).admin(spec.snapshot.hbase_version)
    taken: dict[str, str] = {}
    with held_still(spec.ledger_url, spec.name, "validate (the target's snapshots)"):
        held = replay_offsets(ledger, migration_id)
        asked = now_ms()
        try:
            for table in tables:
                name = snapshot_name(f"{spec.name}_validate_target", table.target, asked)
                admin.snapshot(table.target, name, spec.snapshot.ttl // 1000)
                taken[table.source] = name
        except BaseException:
            for name in taken.values():
                admin.delete(name)
            raise
        held_for = now_ms() - asked
    spans = tail_spans(spec, before, held)
    tail = read_tail(spans, [t.source for t in tables], asked)
    metrics["target_read"] = (f"snapshot files {open_root(spec.target).reads()}: "
                              + ", ".join(f"{spec.table_mapping()[t]} from {n}"
                                               for t, n in taken.items()))
    metrics["target_snapshots"] = dict(taken)
    metrics["point"] = {
        "rule": "both sides stand for the source after every WAL edit up to the replay's "
                "acknowledged offsets while it was held still for the target's snapshots; "
                "the source side is its snapshot's files plus the WAL edits past each "
                "region's files up to those offsets",
        "replay_offsets": {path: offset for path, offset in sorted(held.values())},
        "held_ms": held_for, "wal_tail": [s.to_json() for s in spans],
        "wal_tail_cells": tail.cells()}
    yield TargetSide(taken, tail)
    for name in taken.values():
        admin.delete(name)
