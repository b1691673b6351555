"""The accepted losses on the source side of a comparison with Bigtable.

A cell whose loss ``[target] accept`` accepted by name (a key, a qualifier or a value over
Bigtable's limits, a timestamp it cannot hold: :data:`.preflight.DROPPED`) is never written
to Bigtable, so the validation leaves exactly those cells out of what it reads from the
source, before its digests and comparisons (:meth:`AcceptedLosses.left_out`), and counts
them by name: a range equal but for them matches, with its accepted losses named. A cell
over a limit that is not accepted stays in, and its range differs. The repair, ``--explain``
and the hidden-cell check read the source the same way (:func:`without_accepted`), so a
repair never tries to write what Bigtable cannot take.

Without an accepted loss of those kinds for a table, its cells are passed on untouched (no
per-cell work).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from hbase_migrate.bigtable.preflight import (
    DROPPED,
    MAX_KEY,
    MAX_QUALIFIER,
    MAX_TIMESTAMP_MS,
    MAX_VALUE,
    Finding,
    cell_findings,
    dropped,
)
from hbase_migrate.cluster.client import Client
from hbase_migrate.wal.model import Cell

SHOWN_NAMES = 5  # accepted losses named on one line; the rest counted


@dataclass(frozen=True)
class AcceptedLosses:
    """The accepted names (``accept``) and the migration's tables (source -> target: the
    names carry the target table, as the writes name it)."""

    accept: frozenset[str]
    tables: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, accept: Iterable[str], tables: Mapping[str, str]) -> AcceptedLosses | None:
        """None when no accepted name leaves cells out (nothing to filter)."""
        found = cls(frozenset(accept), tuple(sorted(tables.items())))
        return found if any(found.dropping(t) for t in tables) else None

    def target(self, source_table: str) -> str:
        return dict(self.tables).get(source_table, source_table)

    def dropping(self, source_table: str) -> bool:
        """Whether an accepted name leaves cells of ``source_table`` out."""
        target = self.target(source_table)
        return any(name.startswith(f"{kind} {target} ") for name in self.accept
                   for kind in DROPPED)

    def lost(self, target: str, cell: Cell, counts: Counter[str],
             refused: dict[str, Finding] | None = None) -> bool:
        """Whether ``cell`` (of the ``target`` table) is an accepted loss; counted then. A
        limit it breaks without being accepted goes into ``refused``, by name."""
        if (len(cell.row) <= MAX_KEY and len(cell.qualifier) <= MAX_QUALIFIER
                and len(cell.value) <= MAX_VALUE and 0 <= cell.timestamp <= MAX_TIMESTAMP_MS):
            return False
        findings = cell_findings(target, cell)
        if not dropped(findings) or any(f.name not in self.accept for f in findings):
            if refused is not None:
                refused.update((f.name, f) for f in findings if f.name not in self.accept)
            return False  # written, or refused by the writes: the range shows it
        for finding in findings:
            if finding.kind in DROPPED:
                counts[finding.name] += 1
        return True

    def left_out(self, source_table: str, pieces: Iterable[list[Cell]],
                 counts: Counter[str], refused: dict[str, Finding] | None = None
                 ) -> Iterable[list[Cell]]:
        """``pieces`` (of rows of ``source_table``, in scan order) without the accepted
        losses, counted by name in ``counts`` (the limits broken but not accepted in
        ``refused``); ``pieces`` themselves when none can be."""
        if not self.dropping(source_table):
            return pieces
        return self._kept(self.target(source_table), pieces, counts, refused)

    def _kept(self, target: str, pieces: Iterable[list[Cell]], counts: Counter[str],
              refused: dict[str, Finding] | None) -> Iterator[list[Cell]]:
        for piece in pieces:
            if piece and len(piece[0].row) <= MAX_KEY and not any(
                    len(c.qualifier) > MAX_QUALIFIER or len(c.value) > MAX_VALUE
                    or not 0 <= c.timestamp <= MAX_TIMESTAMP_MS for c in piece):
                yield piece  # within every limit (one row: one key), as it is
                continue
            kept = [c for c in piece if not self.lost(target, c, counts, refused)]
            if kept:
                yield kept


class _WithoutAccepted:
    """A source client whose reads (scans, gets) leave the accepted losses out (the rest is
    the client's own)."""

    def __init__(self, client: Client, losses: AcceptedLosses) -> None:
        self._client, self._losses = client, losses
        self.counts: Counter[str] = Counter()
        self.refused: dict[str, Finding] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get(self, table: str, row: bytes, **kwargs: Any) -> list[Cell]:
        return self._kept(table, self._client.get(table, row, **kwargs))

    def get_rows(self, table: str, rows: Sequence[bytes]) -> list[list[Cell]]:
        return [self._kept(table, cells) for cells in self._client.get_rows(table, rows)]

    def _kept(self, table: str, cells: list[Cell]) -> list[Cell]:
        return [c for piece in self._losses.left_out(table, [cells] if cells else [],
                                                     self.counts, self.refused) for c in piece]

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", **kwargs: Any
             ) -> Iterable[list[Cell]]:
        return self._losses.left_out(table, self._client.scan(table, start, stop, **kwargs),
                                     self.counts, self.refused)

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"", **kwargs: Any
                     ) -> Iterator[list[list[Cell]]]:
        for batch in self._client.scan_batches(table, start, stop, **kwargs):
            kept = list(self._losses.left_out(table, batch, self.counts, self.refused))
            if kept:
                yield kept


def without_accepted(client: Client, losses: AcceptedLosses | None) -> Client:
    """``client`` (the source's) reading as if the accepted losses were not there."""
    if losses is None:
        return client
    return cast(Client, _WithoutAccepted(client, losses))


def not_accepted(client: Client) -> list[str]:
    """What a source read through :func:`without_accepted` met over Bigtable's limits
    without being accepted (so its range differs): a line each, with the name to accept
    (and why an old name listed does not cover it)."""
    if not isinstance(client, _WithoutAccepted):
        return []
    accept = client._losses.accept
    return [f"not accepted: {f.refusal(accept, 'it is not on Bigtable')}"
            for f in client.refused.values()]


def losses_line(counts: Mapping[str, int], what: str = "left out") -> str | None:
    """One line naming the accepted losses ``counts`` holds (name -> cells), the first
    :data:`SHOWN_NAMES` by name; None when there are none."""
    if not counts:
        return None
    names = sorted(counts)
    shown = ", ".join(f"{n} ({counts[n]} cell(s))" for n in names[:SHOWN_NAMES])
    more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
    return (f"accepted losses ([target] accept): {sum(counts.values())} cell(s) {what}: "
            f"{shown}{more}")


def step_line(result: Mapping[str, Any]) -> str | None:
    """The line of a step's result (its JSON) naming the accepted losses it met: a
    validation's or the gate's ``accepted_losses``, else what its writes left out
    (``bigtable.known_losses``); None when there are none."""
    if "accepted_losses" in result:
        return losses_line(result["accepted_losses"], "left out of the source's side")
    return losses_line((result.get("bigtable") or {}).get("known_losses", {}),
                       "not written to Bigtable")
