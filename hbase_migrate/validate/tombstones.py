"""Repaired cells a newer delete marker still hides on the target, and how a repair gets
past the marker.

In HBase a delete marker masks every put at or below its timestamp, written before it or
after (default ``NEW_VERSION_BEHAVIOR=false``), until a major compaction drops it: a put of
the source's cell at its own timestamp is acknowledged and stays invisible (SyncTable's hole,
HBASE-24302). So after a repair's puts the range is read again; a source cell the target
still does not show is *hidden*. Then:

1. the target is asked, through its Thrift1 gateway (HBase's Thrift2 has no compaction
   call), to major-compact each region holding a hidden cell;
2. until ``timeout`` runs out, the hidden cells are put again and read back: a cell that
   shows is past its marker (the compaction dropped it); HBase compacts in the background,
   so this is polled, never assumed;
3. with the target's ``admin_shell`` configured (``hbase shell -n``), when the first round
   leaves cells hidden, the shell runs ``flush`` and ``major_compact`` of the table, and the
   polling goes on;

   a target whose client is native skips 1 and 3: its table is flushed and major-compacted
   over HBase's own RPC, waited until the compaction ended
   (a :class:`~hbase_migrate.cluster.admin.Compactor` that ``waits``), before the first
   put;
4. what still hides at the end is listed with the command that drops the markers by hand.

HBase's Thrift1 ``majorCompact`` reaches ``Admin.compact`` (2.x and 3.x): the store files
its compaction policy selects are merged, and markers drop only when all of them are (three
files or more by default); a marker still in the memstore is in no file at all. The hbase
shell's ``flush`` then ``major_compact`` always drop them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.cluster.admin import SHELL_TIMEOUT, Compactor, run_shell
from hbase_migrate.cluster.client import Client
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.validate.compare import aligned, scan_cells
from hbase_migrate.wal.model import Cell

DEFAULT_COMPACT_WAIT = 120.0  # seconds
POLL = 1.0
NOTE_LIMIT = 20


def describe(cell: Cell) -> str:
    """A cell as the messages show it (keys as HBase prints them)."""
    return (f"row={short_binary(cell.row)} column={to_string_binary(cell.family)}:"
            f"{short_binary(cell.qualifier)} ts={cell.timestamp}")


def shell_fix(table: str) -> str:
    """The hbase shell commands that drop a table's delete markers."""
    return f"flush '{table}'; major_compact '{table}'"


def run_admin_shell(command: str, table: str, timeout: float = SHELL_TIMEOUT) -> None:
    """``flush`` then ``major_compact`` ``table`` through the target's admin shell
    ``command`` (:func:`hbase_migrate.cluster.admin.run_shell`)."""
    run_shell(command, f"flush '{table}'\nmajor_compact '{table}'\n", "target",
              shell_fix(table), timeout)


def hidden_cells(source: Client, target: Client, key_range: KeyRange,
                 target_table: str) -> list[Cell]:
    """The source's cells of ``key_range`` the target does not show (after a repair put
    them: hidden by a newer delete marker)."""
    return [a for a, b in aligned(
        scan_cells(source, key_range.table, key_range.start, key_range.stop),
        scan_cells(target, target_table, key_range.start, key_range.stop))
        if a is not None and b is None]


def still_hidden(target: Client, table: str, cells: Sequence[Cell]) -> list[Cell]:
    """Those of ``cells`` the target does not show (each row read once)."""
    rows: dict[bytes, set[Cell]] = {}
    for cell in cells:
        rows.setdefault(cell.row, set())
    for row in rows:
        rows[row] = set(target.get(table, row))
    return [c for c in cells if c not in rows[c.row]]


@dataclass
class TombstoneRepair:
    """What getting past the delete markers of one range took."""

    table: str                      # the target table
    hidden: list[Cell]              # hidden after the repair's puts
    regions: list[str] = field(default_factory=list)  # asked to major-compact
    puts: int = 0                   # cells put again after asking
    rounds: int = 0
    waited: float = 0.0
    left: list[Cell] = field(default_factory=list)    # still hidden at the end
    refused: bool = False           # compaction not allowed (``--no-compact``)
    shell: str | None = None        # the admin shell that flushed and major-compacted
    native: bool = False            # flushed and major-compacted over HBase's own RPC

    @property
    def command(self) -> str:
        return shell_fix(self.table)

    def lines(self) -> list[str]:
        """One line per action, as the command prints them."""
        n = len(self.hidden)
        first = f"{n} cell(s) hidden by newer delete markers on {self.table}"
        if self.refused:
            return [f"refused: {first} ({self.cells(self.hidden)}); --no-compact: run "
                    f"{self.command!r} in the hbase shell, then validate --repair again"]
        if self.native:
            out = [f"{first}: flushed and major-compacted over HBase's own RPC"]
        else:
            out = [f"{first}: major compaction asked of {len(self.regions)} region(s)"]
        if self.shell:
            out.append(f"{self.command!r} run through the admin shell {self.shell!r}")
        out.append(f"put {n} cell(s) again over {self.rounds} round(s) in {self.waited:.1f}s: "
                   f"{n - len(self.left)} now visible")
        if self.left:
            out.append(f"still hidden: {self.cells(self.left)}; run {self.command!r} in "
                       "the hbase shell, then validate --repair again")
        return out

    @staticmethod
    def cells(cells: Sequence[Cell]) -> str:
        shown = ", ".join(describe(c) for c in cells[:NOTE_LIMIT])
        more = len(cells) - NOTE_LIMIT
        return shown + (f" and {more} more" if more > 0 else "")

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "hidden": [describe(c) for c in self.hidden[:NOTE_LIMIT]],
                "hidden_cells": len(self.hidden), "regions": self.regions, "puts": self.puts,
                "rounds": self.rounds, "waited": round(self.waited, 2),
                "still_hidden": [describe(c) for c in self.left[:NOTE_LIMIT]],
                "still_hidden_cells": len(self.left), "refused": self.refused,
                "shell": self.shell, "native": self.native, "command": self.command}


def compact_and_put(target: Client, admin: Compactor, table: str,
                    hidden: Sequence[Cell], timeout: float = DEFAULT_COMPACT_WAIT,
                    poll: float = POLL, asked: set[bytes] | None = None,
                    shell: str | None = None) -> TombstoneRepair:
    """Ask for a major compaction of the regions of ``table`` holding ``hidden`` cells
    (those not in ``asked`` yet, which gains them), then put the cells again and read them
    back until they all show or ``timeout`` seconds passed (one round at least); with an
    admin ``shell``, flush and major-compact the table through it after a first round that
    left cells hidden. An ``admin`` that ``waits`` flushes and major-compacts the table
    (once, as ``asked`` records) and returns once that ended, before the first put."""
    done = TombstoneRepair(table, list(hidden))
    asked = set() if asked is None else asked
    done.native = admin.waits
    holding = [r for r in admin.regions(table) if any(r.contains(c.row) for c in hidden)]
    admin.compact(table, holding, asked)
    done.regions = [r.encoded_name for r in holding]
    left, began = list(hidden), time.monotonic()
    while left:
        target.put_cells(table, left)
        done.puts += len(left)
        done.rounds += 1
        left = still_hidden(target, table, left)
        if left and shell and done.shell is None:
            ran = f"shell:{table}".encode()  # once per table, whatever its ranges
            if ran not in asked:
                run_admin_shell(shell, table)
                asked.add(ran)
            done.shell = shell
            continue  # put again at once: the markers are gone once the shell returned
        if not left or time.monotonic() - began + poll > timeout:
            break
        time.sleep(poll)
    done.left, done.waited = left, time.monotonic() - began
    return done
