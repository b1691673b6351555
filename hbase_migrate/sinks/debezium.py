"""The CDC message as a Debezium-style change event (``[cdc] envelope = "debezium"``), the
envelope Kafka Connect sinks and Flink CDC read as they come::

    {"before": {"row": "r1", "d:qty": "3"} | null,
     "after": {"row": "r1", "d:qty": "4"} | null,
     "op": "c" | "u" | "d",
     "ts_ms": 1700000000456,
     "source": {"connector": "hbase-migrate", "version": "0.1.0", "name": CLUSTER,
                "cluster": CLUSTER, "table": "ns:orders", "file": WAL, "offset": 1234,
                "entry": 7, "sequence": 42, "write_time": 1700000000123,
                "ts_ms": 1700000000123, "snapshot": "false"},
     "transaction": null,
     "row": "r1", "cells": [...]}

``before`` and ``after`` are row images (the row key as ``row``, each column's newest
visible value as ``"family:qualifier"``; a family name holds no ``:``), given only when
``[cdc] row_image`` is on: ``before`` read from the target right before this edit was
applied there, ``after`` right after; a row that does not exist is ``null``. ``op``: with row
images, ``c`` when the row did not exist before, ``d`` when it does not exist after, else
``u``; without, what the WAL alone says: ``d`` when the edit holds only DeleteFamily markers
(HBase's delete of a whole row), else ``u`` (an HBase put cannot tell a new row from a
changed one). ``cells`` are the edit's exact cells as in the native message, so nothing of
the WAL is lost. ``source.cluster`` is the source cluster's id
(:func:`hbase_migrate.hbase.identity.cluster_id`); ``ts_ms`` is when the message was made.
Byte strings are HBase's ``Bytes.toStringBinary`` form, as in the native message. JSON
Schemas of both formats are in ``schemas/``.
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Sequence
from functools import cache
from importlib.metadata import PackageNotFoundError, version

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.sinks.messages import RowEdit, cells_text
from hbase_migrate.wal.model import Cell, CellType

CONNECTOR = "hbase-migrate"


@cache
def _version() -> str:
    try:
        return version(CONNECTOR)
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def row_image(row: bytes, cells: Sequence[Cell] | None) -> dict[str, str] | None:
    """``{"row": ..., "family:qualifier": value, ...}``; None for no row (or no image)."""
    if not cells:
        return None
    image = {"row": to_string_binary(row)}
    for cell in cells:
        image[f"{to_string_binary(cell.family)}:{to_string_binary(cell.qualifier)}"] = (
            to_string_binary(cell.value))
    return image


def operation(edit: RowEdit, before: Sequence[Cell] | None, after: Sequence[Cell] | None,
              images: bool) -> str:
    """``c``, ``u`` or ``d`` (see the module docstring)."""
    if images:
        if not after:
            return "d"
        return "u" if before else "c"
    return "d" if all(c.type == CellType.DELETE_FAMILY for c in edit.cells) else "u"


def source_head(cluster: str) -> str:
    """The text of an event from ``,"source":`` up to its ``table``'s value, as
    :func:`debezium_value` writes it (the compiled renderer's template)."""
    head = json.dumps({"connector": CONNECTOR, "version": _version(), "name": cluster,
                       "cluster": cluster, "table": None}, separators=(",", ":"))
    return ',"source":' + head.removesuffix("null}")


def debezium_value(edit: RowEdit, cluster: str, *, images: bool = False,
                   before: Sequence[Cell] | None = None, after: Sequence[Cell] | None = None,
                   now: int | None = None) -> bytes:
    """The JSON value of ``edit`` as a change event (row images when ``images``)."""
    p = edit.position
    event = {
        "before": row_image(edit.row, before) if images else None,
        "after": row_image(edit.row, after) if images else None,
        "op": operation(edit, before, after, images),
        "ts_ms": int(time.time() * 1000) if now is None else now,
        "source": {"connector": CONNECTOR, "version": _version(), "name": cluster,
                   "cluster": cluster, "table": edit.table,
                   "file": posixpath.basename(p.file), "offset": p.offset, "entry": p.entry,
                   "sequence": p.sequence, "write_time": p.write_time,
                   "ts_ms": p.write_time, "snapshot": "false"},
        "transaction": None,
        "row": to_string_binary(edit.row),
    }
    text = json.dumps(event, separators=(",", ":"))
    return f'{text[:-1]},"cells":{cells_text(edit)}}}'.encode("ascii")
