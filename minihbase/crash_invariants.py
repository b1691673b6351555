"""The crash harness's invariants, read after every kill and at the end from the ledger,
the source's WAL folders and the CDC topic: no WAL file lost, no step left running past its
lease, no duplicate ledger row, every edit since T0 in the topic (with ``--cdc``). The
harness (:class:`minihbase.crash.Harness`) is an :class:`InvariantChecks`."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path, PurePosixPath

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus
from hbase_migrate.config import MigrationSpec
from hbase_migrate.lifecycle.cdc import CDC_STREAM
from hbase_migrate.soak.crash_checks import (
    LedgerView,
    cdc_duplicates,
    duplicate_rows,
    leftover_steps,
    list_source_wals,
    message_id,
    missing_cdc_edits,
    missing_wal_files,
    read_view,
    redo,
    resent_acknowledged,
    unfinished_wal_files,
    wal_edits,
)
from hbase_migrate.soak.crash_plan import Kill
from minihbase.crash_cdc import CdcTopic
from minihbase.crash_result import CrashResult
from minihbase.crash_steps import Finished, Follow
from minihbase.soak import TABLE

MARGIN_MS = 60_000  # the config's [replay] margin (minihbase.soak.write_config)
# an edit written this long before a CDC run started is in a file the run read to its end
CDC_SLACK_MS = 2_000


class InvariantChecks:
    """What the invariants find; the harness's ledger, source, follow and topic."""

    migration: MigrationSpec
    wal_root: Path | str  # the source's HBase root: a local folder or a webhdfs:// URL
    result: CrashResult
    follow: Follow
    topic: CdcTopic | None
    cdc_redone: int  # messages in the topic beyond the first of their edit
    cdc_sent: Counter[tuple[str, int, str]]  # by (file, offset, row)
    cdc_counts: dict[str, int]

    def view(self, stream: str = "source") -> LedgerView:
        with Ledger.open(self.migration.ledger_url) as ledger:
            return read_view(ledger, self.migration.name, now_ms(), stream)

    # -- the CDC stream ---------------------------------------------------------------------

    def check_cdc(self, before: int) -> list[str]:
        """The topic read back against the source's WALs: every edit since T0 written
        before ``before`` is there with its sequence id. Keeps the topic's count of
        messages sent more than once (``cdc_redone``)."""
        assert self.topic is not None
        watermark = self.view().watermark
        if watermark is None:
            return []
        messages = self.topic.read()
        edits = wal_edits(self.wal_root, [TABLE.encode()], watermark)
        self.cdc_redone = cdc_duplicates(messages)
        self.cdc_sent = Counter(message_id(m) for m in messages)
        self.cdc_counts = {"messages": len(messages), "edits_since_t0": len(edits),
                           "messages_redone": self.cdc_redone}
        return missing_cdc_edits(edits, messages, before)

    def crash_cdc(self, kill: Kill, before: LedgerView, killed_at: LedgerView,
                  mine: list[int], rerun: Finished) -> tuple[dict[str, int], list[str]]:
        """A killed CDC run's redone work (its stream's files and bytes, the messages sent
        again) and what the CDC invariant finds once its rerun ended."""
        redone_before, sent_before = self.cdc_redone, self.cdc_sent
        after = self.view(CDC_STREAM)
        found = [] if rerun.code != 0 else self.check_cdc(rerun.began_ms - CDC_SLACK_MS)
        again = [i for i, n in self.cdc_sent.items() if n > 1 and n > sent_before.get(i, 0)]
        found += resent_acknowledged(again, {PurePosixPath(path).name: row.offset
                                             for path, row in killed_at.wal.items()})
        redone = {key.replace("wal_", "cdc_"): value for key, value in
                  redo(before, killed_at, after, mine, "wal").items()}
        redone["cdc_messages_redone"] = self.cdc_redone - redone_before
        self.record({"duplicate_rows": [f"CDC stream: {line}" for line in
                                        duplicate_rows(after)]}, kill.line())
        return redone, found

    def violations(self, view: LedgerView, *, final: bool = False) -> dict[str, list[str]]:
        """What the invariants find in ``view`` (the follow alive or not)."""
        allowed = []
        if self.follow.alive:
            since = self.follow.started_ms
            running = [s.id for s in view.steps if s.kind == "replay"
                       and s.status is StepStatus.RUNNING and s.started_at >= since]
            allowed = running[-1:]
        found = {"steps_left_running": leftover_steps(
                     view, [p for p in [self.follow.pid] if p is not None], allowed),
                 "duplicate_rows": duplicate_rows(view), "wal_files_missing": []}
        if view.watermark is not None:
            listed = [s.started_at for s in view.steps if s.kind == "replay"
                      and s.status is StepStatus.SUCCEEDED]
            if listed or final:
                on_source = list_source_wals(self.wal_root, [TABLE.encode()])
                found["wal_files_missing"] = missing_wal_files(
                    view, on_source, view.watermark - MARGIN_MS,
                    view.at if final else max(listed))
            if final:
                found["wal_files_missing"] += unfinished_wal_files(view)
                found["wal_files_missing"] += [f"open gap {g}" for g in view.open_gaps]
        return found

    def record(self, found: dict[str, list[str]], where: str) -> list[str]:
        lines = []
        for name, items in found.items():
            for item in items:
                line = f"{where}: {item}"
                if line not in self.result.invariants[name]:
                    self.result.invariants[name].append(line)
                lines.append(f"{name}: {item}")
        return lines


def now_ms() -> int:
    return int(time.time() * 1000)
