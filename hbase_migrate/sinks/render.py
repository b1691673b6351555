"""A batch of CDC messages (keys and values) at once: the compiled renderer (``_render``,
built by ``make setup``) when it is there, else the reference, one message at a time
(:func:`~hbase_migrate.sinks.messages.message_value`,
:func:`~hbase_migrate.sinks.debezium.debezium_value`); both give the same bytes.
``HBASE_MIGRATE_PURE_PYTHON=1`` runs the reference; ``use`` switches (the tests compare)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import ModuleType
from typing import Literal

from hbase_migrate.sinks.debezium import debezium_value
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value

Implementation = Literal["compiled", "python"]


def _compiled() -> ModuleType | None:
    try:
        from hbase_migrate.sinks import _render  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _render  # type: ignore[no-any-return]


COMPILED = _compiled()
_active: list[Implementation] = [
    "compiled" if COMPILED is not None and os.environ.get("HBASE_MIGRATE_PURE_PYTHON") != "1"
    else "python"]


def implementation() -> Implementation:
    return _active[0]


def use(name: Implementation) -> None:
    """Render with ``name`` from now on."""
    if name == "compiled" and COMPILED is None:
        raise RuntimeError("the compiled renderer is not built (make setup builds it)")
    _active[0] = name


def render(edits: Sequence[RowEdit], envelope: str, cluster: str = "",
           now: int | None = None) -> tuple[list[bytes], list[bytes]]:
    """The keys and values of ``edits`` (no row images) in ``envelope`` (``native`` or
    ``debezium``); ``cluster`` and ``now`` as :func:`debezium_value` takes them."""
    if _active[0] == "compiled":
        assert COMPILED is not None
        keys, values = COMPILED.render(list(edits), envelope, cluster, now)
        return keys, values
    keys = [message_key(e.table, e.row) for e in edits]
    if envelope == "native":
        return keys, [message_value(e) for e in edits]
    return keys, [debezium_value(e, cluster, now=now) for e in edits]
