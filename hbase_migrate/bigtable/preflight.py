"""What Bigtable cannot take, found before any write.

Each finding has a name, ``<kind> <table> <where>`` (row and column rendered as HBase
prints bytes), that ``[target] accept`` lists to accept its loss; anything not accepted
stops the migration before its first write. A name names exactly one thing: a ``where``
longer than :data:`WHOLE` characters (every key over the limit) is shown shortened and
followed by the SHA-256 of its bytes (:func:`exact`), so a cell met later with another key
has another name and is refused until that name is accepted too. The same checks guard
every write (``BigtableClient``), so a cell that appears later is refused or dropped the
same way, and every drop is counted.

Bigtable's limits: a cell value of at most 100 MiB, a row of at most 256 MiB, a row key of
at most 4 KiB, a column qualifier of at most 16 KiB, timestamps from 0 to the largest
microsecond count in 64 bits. HBase tags (ACLs, visibility labels, cell TTLs) have no place
in Bigtable: cells are written without them, accepted per table and kind (per-cell ACLs
and visibility labels each by name: without them the cells are readable by all). Requests
of more than 100,000 mutations are split (:mod:`.writer`), not refused.
"""

from __future__ import annotations

import hashlib
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hbase_migrate.bigtable.errors import BigtablePreflightError
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.wal.model import Cell, CellType

MiB = 1 << 20
MAX_VALUE = 100 * MiB
MAX_ROW = 256 * MiB
MAX_KEY = 4 * 1024
MAX_QUALIFIER = 16 * 1024
MAX_TIMESTAMP_MS = ((1 << 63) - 1) // 1000  # microseconds in a signed 64-bit count
LISTED = 20  # findings listed per kind
WHOLE = 200  # characters of a finding's ``where`` shown whole; a longer one is shortened
HEAD, TAIL = 24, 16  # bytes of a long key or qualifier shown at its start and its end
# the kinds whose cells are not written when accepted (a tagged cell is written untagged)
DROPPED = ("key_too_large", "qualifier_too_large", "cell_too_large", "bad_timestamp")
# HBase's TagType: ACL 1, visibility labels 2 (and their serialization format 4)
TAG_KINDS = {1: "cell_acls", 2: "visibility_labels", 4: "visibility_labels"}
TAG_DETAILS = {
    "cell_acls": "cells with per-cell ACLs: Bigtable has none, the cells are written "
                 "readable by whoever may read the table",
    "visibility_labels": "cells with visibility labels: Bigtable has none, the cells are "
                         "written readable by whoever may read the table",
    "tags": "cells with HBase tags (a cell TTL, MOB references...): written without them",
}


def _column(cell: Cell) -> str:
    return (f"{to_string_binary(cell.family)}:{to_string_binary(cell.qualifier)}"
            f"@{cell.timestamp}")


def shortened(data: bytes) -> str:
    """``data`` as HBase prints bytes, its middle left out when it is long."""
    if len(data) <= HEAD + TAIL:
        return to_string_binary(data)
    return f"{to_string_binary(data[:HEAD])}...{to_string_binary(data[-TAIL:])}"


def exact(whole: str, shown: str, *parts: bytes) -> str:
    """A finding's ``where`` naming exactly one thing: ``whole`` when it is short, else
    ``shown`` (the same, shortened) with the SHA-256 of ``parts`` (length-prefixed), so
    two keys alike in what is shown still have two names."""
    if len(whole) <= WHOLE:
        return whole
    digest = hashlib.sha256()
    for part in parts:
        digest.update(struct.pack(">I", len(part)))
        digest.update(part)
    return f"{shown} sha256:{digest.hexdigest()}"


@dataclass(frozen=True)
class Finding:
    """One thing Bigtable cannot take: ``name`` is what ``accept`` lists."""

    kind: str
    table: str
    where: str
    detail: str
    # the name an earlier version gave it (the key's first 64 characters, ...) when it
    # differs: such a name covered every key alike in them, so it is no longer accepted
    legacy: str | None = None

    @property
    def name(self) -> str:
        return f"{self.kind} {self.table} {self.where}".rstrip()

    def refusal(self, accepted: frozenset[str], written: str) -> str:
        """The line refusing it: what it breaks, that ``written`` (nothing was, ...), and
        the name to accept (with why an old name listed does not cover it)."""
        old = ""
        if self.legacy is not None and self.legacy in accepted:
            old = (f"; [target] accept lists \"{self.legacy}\", the name an earlier version "
                   "gave it: such names accept nothing now (one cut at 64 characters covered "
                   "every key alike in them), each thing is accepted by its own name, a long "
                   "key shortened and followed by its SHA-256")
        return (f"table {self.table}: {self.where or 'its cells'}: {self.detail}: Bigtable "
                f"cannot take it; {written}{old}. Accept the loss with [target] accept = "
                f"[\"{self.name}\"], or change the source")


def cell_findings(table: str, cell: Cell) -> list[Finding]:
    """The limits one cell breaks."""
    found: list[Finding] = []
    if len(cell.row) > MAX_KEY:
        found.append(Finding("key_too_large", table, _key(cell.row),
                             f"a row key of {len(cell.row)} bytes (at most {MAX_KEY})",
                             f"key_too_large {table} {to_string_binary(cell.row)[:64]}"))
    if len(cell.qualifier) > MAX_QUALIFIER:
        old = _whole(cell)[:200]
        found.append(Finding("qualifier_too_large", table, _cell_where(cell),
                             f"a qualifier of {len(cell.qualifier)} bytes "
                             f"(at most {MAX_QUALIFIER})", f"qualifier_too_large {table} {old}"))
    if len(cell.value) > MAX_VALUE:
        found.append(Finding("cell_too_large", table, _cell_where(cell),
                             f"a value of {len(cell.value) / MiB:.1f} MiB (at most 100 MiB)",
                             f"cell_too_large {table} {_whole(cell)}"))
    if cell.type != CellType.DELETE_FAMILY and not 0 <= cell.timestamp <= MAX_TIMESTAMP_MS:
        found.append(Finding("bad_timestamp", table, _cell_where(cell),
                             f"timestamp {cell.timestamp} ms is outside 0..{MAX_TIMESTAMP_MS}",
                             f"bad_timestamp {table} {_whole(cell)}"))
    for kind in sorted({TAG_KINDS.get(t.type, "tags") for t in cell.tags}):
        found.append(Finding(kind, table, "", TAG_DETAILS[kind]))
    return found


def _key(row: bytes) -> str:
    return exact(to_string_binary(row), shortened(row), row)


def _whole(cell: Cell) -> str:
    return f"{to_string_binary(cell.row)} {_column(cell)}"


def _cell_where(cell: Cell) -> str:
    """``<row> <family>:<qualifier>@<timestamp>``, exact (:func:`exact`)."""
    whole = _whole(cell)
    shown = (f"{shortened(cell.row)} {to_string_binary(cell.family)}:"
             f"{shortened(cell.qualifier)}@{cell.timestamp}")
    return exact(whole, shown, cell.row, cell.family, cell.qualifier,
                 str(cell.timestamp).encode())


def dropped(findings: Sequence[Finding]) -> bool:
    """Whether a cell with ``findings`` (all accepted) is left out of the write."""
    return any(f.kind in DROPPED for f in findings)


@dataclass
class Report:
    """The findings of a check, by name (each once) with how often each was met."""

    accepted: frozenset[str] = frozenset()
    found: dict[str, Finding] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)
    rows_sampled: int = 0
    wal_cells: int = 0
    split_requests: int = 0  # WAL entries of one row with more mutations than one request

    def add(self, finding: Finding) -> None:
        self.found.setdefault(finding.name, finding)
        self.seen[finding.name] += 1

    def check_row(self, table: str, cells: Sequence[Cell]) -> None:
        size = 0
        for cell in cells:
            size += len(cell.row) + len(cell.family) + len(cell.qualifier) + len(cell.value)
            for finding in cell_findings(table, cell):
                self.add(finding)
        if size > MAX_ROW:
            self.add(Finding("row_too_large", table, _key(cells[0].row),
                             f"a row of {size / MiB:.1f} MiB (at most 256 MiB)",
                             f"row_too_large {table} {to_string_binary(cells[0].row)[:64]}"))

    @property
    def refused(self) -> list[Finding]:
        return [f for name, f in self.found.items() if name not in self.accepted]

    def raise_refused(self) -> None:
        """Stop (one line naming the first refused finding) unless all are accepted."""
        refused = self.refused
        if refused:
            more = f" (and {len(refused) - 1} more: see the report)" if len(refused) > 1 else ""
            raise BigtablePreflightError(refused[0].refusal(self.accepted,
                                                            f"nothing was written{more}"))

    def lines(self) -> list[str]:
        """The report as a task log shows it: what was read, then each finding (at most
        :data:`LISTED` of a kind), refused or accepted, with how often it was met."""
        head = (f"pre-flight for Bigtable: {self.rows_sampled} sampled rows and "
                f"{self.wal_cells} WAL cells read, {len(self.found)} finding(s), "
                f"{len(self.refused)} refused")
        listed: Counter[str] = Counter()
        out = [head]
        for name, finding in self.found.items():
            listed[finding.kind] += 1
            if listed[finding.kind] <= LISTED:
                word = "accepted" if name in self.accepted else "refused"
                out.append(f"{word}: {name}: {finding.detail} (met {self.seen[name]} "
                           "time(s) in the sampled rows and the WAL cells)")
        return out

    def to_json(self) -> dict[str, Any]:
        kinds: Counter[str] = Counter()
        for name, finding in self.found.items():
            kinds[finding.kind] += self.seen[name]
        listed: list[dict[str, Any]] = []
        for name, finding in self.found.items():
            if sum(1 for x in listed if x["kind"] == finding.kind) < LISTED:
                listed.append({"name": name, "kind": finding.kind, "table": finding.table,
                               "detail": finding.detail, "count": self.seen[name],
                               "accepted": name in self.accepted})
        return {"rows_sampled": self.rows_sampled, "wal_cells": self.wal_cells,
                "counts": dict(kinds), "findings": listed,
                "refused": [f.name for f in self.refused],
                "split_requests": self.split_requests}


def check_rows(report: Report, table: str, rows: Iterable[list[Cell]]) -> None:
    """Check sampled rows (pieces of one row in a row are joined)."""
    current: list[Cell] = []
    for piece in rows:
        if current and piece and piece[0].row != current[0].row:
            report.check_row(table, current)
            report.rows_sampled += 1
            current = []
        current.extend(piece)
    if current:
        report.check_row(table, current)
        report.rows_sampled += 1


def check_wal_cells(report: Report, table: str, cells: Sequence[Cell], limit: int) -> None:
    """Check the cells of one WAL entry (one row's edit)."""
    report.wal_cells += len(cells)
    for cell in cells:
        for finding in cell_findings(table, cell):
            report.add(finding)
    if len(cells) > limit:
        report.split_requests += 1
