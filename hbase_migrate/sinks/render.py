"""A batch of CDC messages (keys and values) at once, and its edits: the compiled renderer
(``_render``, built by ``make setup``) when it is there, else the reference, one message at
a time (:func:`~hbase_migrate.sinks.messages.row_edits`,
:func:`~hbase_migrate.sinks.messages.message_value`,
:func:`~hbase_migrate.sinks.debezium.debezium_value`); both give the same edits and bytes.
``HBASE_MIGRATE_PURE_PYTHON=1`` runs the reference; ``use`` switches (the tests compare)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import add

from hbase_migrate.compiled import Choice
from hbase_migrate.replay.apply import count_cells
from hbase_migrate.replay.mutations import RowMutation, WalPosition
from hbase_migrate.sinks.debezium import debezium_value
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value, row_edits

_choice = Choice("hbase_migrate.sinks._render", "the compiled renderer is")
COMPILED = _choice.module
implementation = _choice.implementation
use = _choice.use


def edits_of(table: str, mutations: Sequence[RowMutation]) -> list[RowEdit]:
    """``list(row_edits(table, mutations))``: one edit (message) per entry and row."""
    compiled = _choice.compiled()
    if compiled is not None:
        return compiled.row_edits(table, list(mutations))  # type: ignore[no-any-return]
    return list(row_edits(table, mutations))


def messages(table: str, mutations: Sequence[RowMutation], envelope: str, cluster: str = "",
             now: int | None = None) -> tuple[list[bytes], list[bytes], list[WalPosition]]:
    """The keys, values and positions of the messages of ``mutations`` (one per entry and
    row: :func:`edits_of`, then :func:`render`)."""
    compiled = _choice.compiled()
    if compiled is not None:
        keys, values, positions = compiled.messages(table, list(mutations), envelope, cluster,
                                                    now)
        return keys, values, positions
    edits = edits_of(table, mutations)
    return (*render(edits, envelope, cluster, now), [edit.position for edit in edits])


def cell_counts(mutations: Sequence[RowMutation]) -> Counter[str]:
    """:func:`~hbase_migrate.replay.apply.count_cells`: a reader's ``CellBlock`` counted
    without making its Cells (compiled)."""
    compiled = _choice.compiled()
    if compiled is not None:
        return compiled.cell_counts(list(mutations))  # type: ignore[no-any-return]
    return count_cells(mutations)


def render(edits: Sequence[RowEdit], envelope: str, cluster: str = "",
           now: int | None = None) -> tuple[list[bytes], list[bytes]]:
    """The keys and values of ``edits`` (no row images) in ``envelope`` (``native`` or
    ``debezium``); ``cluster`` and ``now`` as :func:`debezium_value` takes them."""
    compiled = _choice.compiled()
    if compiled is not None:
        keys, values = compiled.render(list(edits), envelope, cluster, now)
        return keys, values
    keys = [message_key(e.table, e.row) for e in edits]
    if envelope == "native":
        return keys, [message_value(e) for e in edits]
    return keys, [debezium_value(e, cluster, now=now) for e in edits]


def longest(keys: list[bytes], values: list[bytes]) -> int:
    """The largest ``len(key) + len(value)`` of the messages (0 for none)."""
    compiled = _choice.compiled()
    if compiled is not None:
        return compiled.longest(keys, values)  # type: ignore[no-any-return]
    return max(map(add, map(len, keys), map(len, values)), default=0)
