"""The crash harness's invariants and its count of redone work, judged from the ledger.

A :class:`LedgerView` is what the ledger holds at one moment (WAL files, key ranges, steps,
range checksums, repairs, gaps). The checks are plain functions of views (and of the
source's own WAL files, read from its folders), so each can be tried on a ledger made by
hand:

* every WAL file of the source holding edits the migration needs is in the ledger, and at
  the end each is ``replayed``, ``skipped`` or a recorded gap (:func:`missing_wal_files`,
  :func:`unfinished_wal_files`);
* no step is left ``running`` for a process that is gone (:func:`leftover_steps`);
* no WAL file, key range, validated range or checksum has two rows (:func:`duplicate_rows`);
* the work a killed step's rerun did again (:func:`redo`), reported, not judged;
* the CDC topic holds every row edit the source's WALs hold after T0 at least once, with
  the WAL's sequence id (:func:`wal_edits`, :func:`missing_cdc_edits`), a rerun sends
  again nothing the ledger held acknowledged (:func:`resent_acknowledged`), and how many
  messages were sent more than once (:func:`cdc_duplicates`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepRecord, StepStatus, WalStatus
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.wal.model import METAFAMILY
from hbase_migrate.wal.names import name_timestamp
from hbase_migrate.wal.reader import read_entries
from hbase_migrate.wal.source import walk_files

FINISHED = (WalStatus.REPLAYED, WalStatus.SKIPPED, WalStatus.GAP)
RangeKey = tuple[str, bytes, bytes]


@dataclass(frozen=True)
class WalRow:
    path: str
    status: WalStatus
    offset: int
    size: int | None
    updated_at: int


@dataclass(frozen=True)
class RangeCopy:
    copy_step_id: int | None
    copied_at: int | None


@dataclass
class LedgerView:
    """One migration's ledger at one moment (``at``, ms)."""

    at: int
    watermark: int | None = None
    wal: dict[str, WalRow] = field(default_factory=dict)  # the replay stream's files by path
    ranges: list[tuple[RangeKey, RangeCopy]] = field(default_factory=list)
    steps: list[StepRecord] = field(default_factory=list)
    checksums: dict[int, list[tuple[RangeKey, int | None]]] = field(default_factory=dict)
    validated: list[tuple[int | None, RangeKey]] = field(default_factory=list)
    repairs: list[tuple[int | None, RangeKey]] = field(default_factory=list)
    open_gaps: list[str] = field(default_factory=list)

    def steps_between(self, started: int, ended: int) -> list[StepRecord]:
        return [s for s in self.steps if started <= s.started_at <= ended]


def read_view(ledger: Ledger, name: str, at: int, stream: str = "source") -> LedgerView:
    """Migration ``name`` as ``ledger`` holds it now (an empty view before it exists)."""
    record = ledger.migration(name)
    if record is None:
        return LedgerView(at)
    mid = record.id
    view = LedgerView(at, record.watermark)
    view.wal = {f.path: WalRow(f.path, f.status, f.offset_reached, f.size, f.updated_at)
                for f in ledger.wal_files(mid, stream)}
    view.ranges = [((r.table_name, r.range_start, r.range_end),
                    RangeCopy(r.copy_step_id, r.copied_at)) for r in ledger.key_ranges(mid)]
    view.steps = ledger.steps(mid)
    for step in view.steps:
        if step.kind.startswith("validate"):
            found = ledger.checksums(mid, step.id)
            if found:
                view.checksums[step.id] = [((c.table_name, c.range_start, c.range_end),
                                            c.resumed_from) for c in found]
    view.validated = [(v.step_id, (v.table_name, v.range_start, v.range_end))
                      for v in ledger.validations(mid)]
    view.repairs = [(r.step_id, (r.table_name, r.range_start, r.range_end))
                    for r in ledger.repairs(mid)]
    view.open_gaps = [f"{g.server}: {g.detail or g.kind}" for g in ledger.gaps(mid)]
    return view


# -- the source's own WAL files -----------------------------------------------------------

@dataclass(frozen=True)
class SourceWal:
    """A WAL file found in the source's folders, with the newest write time of the edits
    of the migrated tables it holds (None: none)."""

    path: str
    name_time: int | None
    newest_edit: int | None

    @property
    def name(self) -> str:
        return PurePosixPath(self.path).name


def list_source_wals(hbase_root: Path | str, tables: Iterable[bytes]) -> list[SourceWal]:
    """Every WAL file under ``hbase_root``'s ``WALs/`` (live and ``-splitting``) and
    ``oldWALs/``, read on its own (the migration's listing is not used). The root is a
    local folder or a ``webhdfs://`` URL (a real HBase's, on HDFS). A file that vanishes
    while it is read is left out."""
    wanted = set(tables)
    found = []
    for path in _wal_paths(hbase_root):
        try:
            newest = _newest_edit(path, wanted)
        except FileNotFoundError:
            continue
        found.append(SourceWal(path, name_timestamp(PurePosixPath(path).name), newest))
    return found


def _wal_paths(hbase_root: Path | str) -> Iterator[str]:
    """The files under ``WALs/`` (live and ``-splitting``) and ``oldWALs/``: paths, or
    URLs under a ``webhdfs://`` root. A folder that vanishes while it is walked has none."""
    for folder in ("WALs", "oldWALs"):
        if isinstance(hbase_root, Path):
            for top, _, names in os.walk(hbase_root / folder):
                yield from (str(Path(top) / name) for name in sorted(names))
            continue
        try:
            yield from walk_files(f"{hbase_root.rstrip('/')}/{folder}") or []
        except FileNotFoundError:
            continue


def _newest_edit(path: str, tables: set[bytes]) -> int | None:
    newest: int | None = None
    for entry in read_entries(path):
        if entry.key.table_name in tables:
            newest = max(newest or 0, entry.key.write_time)
    return newest


# -- invariants ---------------------------------------------------------------------------

def missing_wal_files(view: LedgerView, on_source: Sequence[SourceWal], since: int,
                      listed_before: int) -> list[str]:
    """Source WAL files with edits written at or after ``since`` (T0 less the margin),
    named before ``listed_before`` (when the newest finished replay began listing), that
    the ledger has no row for."""
    known = {PurePosixPath(path).name for path in view.wal}
    return [f"{wal.path}: edits up to {wal.newest_edit} (since {since}), not in the ledger"
            for wal in on_source
            if wal.newest_edit is not None and wal.newest_edit >= since
            and (wal.name_time or 0) < listed_before and wal.name not in known]


def unfinished_wal_files(view: LedgerView) -> list[str]:
    """Ledger rows of WAL files neither replayed, skipped nor a gap, nor a live file read
    to the end its last listing saw."""
    return [f"{row.path}: {row.status} at offset {row.offset} of {row.size}"
            for row in view.wal.values() if row.status not in FINISHED
            and not (row.size and row.size <= row.offset)]


def leftover_steps(view: LedgerView, live_pids: Iterable[int],
                   running_allowed: Iterable[int] = ()) -> list[str]:
    """Steps ``running`` in the ledger although their process is gone: a step whose pid is
    recorded counts as alive while that pid is in ``live_pids``; a step without one only
    when its id is in ``running_allowed`` (the live follow's current run)."""
    alive, allowed = set(live_pids), set(running_allowed)
    found = []
    for step in view.steps:
        if step.status is not StepStatus.RUNNING:
            continue
        pid = step_pid(step)
        if (pid in alive) if pid is not None else (step.id in allowed):
            continue
        found.append(f"step #{step.id} {step.kind} running since {step.started_at}"
                     f"{'' if pid is None else f' (pid {pid}, gone)'}")
    return found


def step_pid(step: StepRecord) -> int | None:
    """The process that recorded ``step`` (a ledger before pids were kept: its metrics'
    ``pid``, else None)."""
    pid = getattr(step, "pid", None)
    if pid is None:
        pid = step.metrics.get("pid")
    return pid if isinstance(pid, int) else None


def duplicate_rows(view: LedgerView) -> list[str]:
    """Rows that say the same thing twice: two WAL-file rows for one file name (a file
    and its archived self), two planned ranges with one start, two verdicts or checksums
    of one range in one step."""
    found = [f"WAL file {name}: {n} rows" for name, n in
             Counter(PurePosixPath(p).name for p in view.wal).items() if n > 1]
    found += [f"key range {_range(key)}: planned {n} times" for key, n in
              Counter((k[0], k[1]) for k, _ in view.ranges).items() if n > 1]
    found += [f"step #{step}: {n} verdicts on range {_range(key)}" for (step, key), n in
              Counter(view.validated).items() if n > 1]
    for step, rows in view.checksums.items():
        found += [f"step #{step}: {n} checksums of range {_range(key)}" for key, n in
                  Counter(k for k, _ in rows).items() if n > 1]
    return found


def _range(key: tuple[Any, ...]) -> str:
    return f"{key[0]}:{key[1].hex()}-{key[2].hex() if len(key) > 2 else ''}"


# -- redone work --------------------------------------------------------------------------

REDO_KINDS = ("wal", "copy", "validation")


def redo(before: LedgerView, killed: LedgerView, after: LedgerView,
         killed_steps: Sequence[int], kind: str) -> dict[str, int]:
    """What a kill of a step of ``kind`` cost, from three views: before the killed process
    started, right after the kill, after the rerun converged. ``killed_steps`` are the ids
    of the steps the killed process started.

    * ``wal`` (a replay): files the killed process touched and left unfinished, the bytes
      it had acknowledged (kept), and the bytes past their acknowledged offsets up to their
      listed size (``wal_bytes_unacknowledged``: the most the rerun applies again).
    * ``copy``: ranges copied before the kill and kept, ranges left to the rerun, and
      ranges copied again although the ledger had them copied (``ranges_recopied``).
    * ``validation``: ranges the killed step checked that the rerun carried over
      (``ranges_checked_kept``) or read again (``ranges_rechecked``), and ranges repaired
      again after the killed step had repaired them.
    """
    if kind == "wal":
        touched = [row for row in killed.wal.values()
                   if row.updated_at >= before.at and row.status not in FINISHED]
        kept = sum(max(0, row.offset - (before.wal[p].offset if p in before.wal else 0))
                   for p, row in killed.wal.items())
        return {"wal_files_in_flight": len(touched), "wal_bytes_acknowledged": kept,
                "wal_bytes_unacknowledged": sum(max(0, (r.size or 0) - r.offset)
                                                for r in touched)}
    if kind == "copy":
        then = {k: c for k, c in killed.ranges if c.copied_at is not None}
        later = {k: c for k, c in after.ranges if c.copied_at is not None}
        done_before = {k for k, c in before.ranges if c.copied_at is not None}
        return {"ranges_copied_kept": len(then.keys() - done_before),
                "ranges_left_to_rerun": len(later.keys() - then.keys()),
                "ranges_recopied": sum(later[k].copy_step_id != c.copy_step_id
                                       for k, c in then.items() if k in later)}
    if kind == "validation":
        steps = set(killed_steps)
        checked = {key for s in steps for key, _ in killed.checksums.get(s, [])}
        rerun = [row for s, rows in after.checksums.items() if s not in killed.checksums
                 for row in rows]
        repaired = {key for s, key in killed.repairs if s in steps}
        return {"ranges_checked_kept": sum(key in checked and origin in steps
                                           for key, origin in rerun),
                "ranges_rechecked": sum(key in checked and origin is None
                                        for key, origin in rerun),
                "ranges_repaired_again": sum(
                    key in repaired for s, key in after.repairs
                    if s is not None and s > max(steps, default=0))}
    raise ValueError(f"redo: kind {kind!r} is none of {REDO_KINDS}")


# -- the CDC stream -----------------------------------------------------------------------

# (WAL file name, byte offset of the entry, row as Bytes.toStringBinary prints it): what
# identifies a CDC message (hbase_migrate.sinks.messages), derived here from the WAL itself
EditId = tuple[str, int, str]


@dataclass(frozen=True)
class WalEdit:
    """One row's cells in one WAL entry of a migrated table: one CDC message's worth."""

    file: str
    offset: int
    row: str
    sequence: int
    write_time: int

    @property
    def id(self) -> EditId:
        return self.file, self.offset, self.row


def wal_edits(hbase_root: Path | str, tables: Iterable[bytes], since: int) -> dict[EditId, WalEdit]:
    """Every row edit of ``tables`` written at or after ``since`` in the source's WAL files
    (live, ``-splitting`` and archived), read with the project's WAL reader apart from the
    stream: one per (entry, row) with a data cell (the WAL's own marker cells are none). A
    file met twice (moved while listed) counts once."""
    wanted = set(tables)
    found: dict[EditId, WalEdit] = {}
    for path in _wal_paths(hbase_root):
        try:
            entries = list(read_entries(path))
        except FileNotFoundError:
            continue
        for entry in entries:
            key = entry.key
            if key.table_name not in wanted or key.write_time < since:
                continue
            for row in dict.fromkeys(c.row for c in entry.cells if c.family != METAFAMILY):
                edit = WalEdit(PurePosixPath(path).name, entry.offset, to_string_binary(row),
                               key.sequence, key.write_time)
                found[edit.id] = edit
    return found


def message_id(message: dict[str, Any]) -> EditId:
    return str(message["file"]), int(message["offset"]), str(message["row"])


def missing_cdc_edits(edits: dict[EditId, WalEdit], messages: Sequence[dict[str, Any]],
                      before: int) -> list[str]:
    """Edits written before ``before`` (when the last finished CDC run began listing, less
    a margin) that no message of the topic carries with the WAL's sequence id, and
    messages that say another sequence id than the WAL holds for their entry."""
    sequences: dict[EditId, set[int]] = {}
    for message in messages:
        sequences.setdefault(message_id(message), set()).add(int(message["sequence"]))
    found = [f"{e.file}@{e.offset} row {e.row} (sequence {e.sequence}, written "
             f"{e.write_time}): not in the CDC topic"
             for e in edits.values() if e.write_time < before and e.id not in sequences]
    found += [f"{i[0]}@{i[1]} row {i[2]}: sequence ids {sorted(s)} in the topic, "
              f"{edits[i].sequence} in the WAL"
              for i, s in sequences.items() if i in edits and s != {edits[i].sequence}]
    return found


def resent_acknowledged(sent_again: Iterable[EditId], acknowledged: dict[str, int]) -> list[str]:
    """Messages a rerun sent again although the ledger held their entry acknowledged when
    the run before was killed (``acknowledged``: the stream's offset reached by WAL file
    name): a rerun may send again only what lies past those offsets."""
    return [f"{file}@{offset} row {row}: sent again, the ledger had it acknowledged (offset "
            f"{acknowledged[file]} reached)" for file, offset, row in sent_again
            if offset < acknowledged.get(file, 0)]


def cdc_duplicates(messages: Sequence[dict[str, Any]]) -> int:
    """Messages beyond the first of their edit: what reruns sent again."""
    counts = Counter(message_id(m) for m in messages)
    return sum(n - 1 for n in counts.values())
