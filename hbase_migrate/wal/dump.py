"""The ``wal dump`` contract (DESIGN section 8): which entries and cells are shown
(:class:`DumpFilter`), and each entry as JSON (:func:`entry_json`) or as text in the spirit of
HBase's WALPrettyPrinter (:func:`text_lines`). Byte strings are rendered as HBase's
``Bytes.toStringBinary`` does; marker cells carry their decoded descriptor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.tablename import table_name
from hbase_migrate.timeutil import format_time
from hbase_migrate.wal.model import METAFAMILY, Cell, Entry, type_name

_FLUSH_ACTIONS = {0: "START_FLUSH", 1: "COMMIT_FLUSH", 2: "ABORT_FLUSH", 3: "CANNOT_FLUSH"}
_REGION_EVENTS = {0: "REGION_OPEN", 1: "REGION_CLOSE"}


class DumpFilter(NamedTuple):
    """Which entries and cells ``wal dump`` prints; None means no restriction."""

    tables: frozenset[bytes] | None = None
    region: bytes | None = None
    sequence: int | None = None
    row: bytes | None = None
    row_prefix: bytes | None = None
    start: int | None = None
    end: int | None = None

    def keeps(self, entry: Entry) -> bool:
        """Whether the entry's key passes the table, region, sequence and time filters."""
        key = entry.key
        return (
            (self.tables is None or key.table_name in self.tables)
            and (self.region is None or key.encoded_region_name == self.region)
            and (self.sequence is None or key.sequence == self.sequence)
            and (self.start is None or key.write_time >= self.start)
            and (self.end is None or key.write_time < self.end)
        )

    def cells(self, entry: Entry) -> tuple[Cell, ...] | None:
        """The cells of ``entry`` to print, or None when the entry is filtered out (a row
        filter drops entries left with no cell)."""
        if not self.keeps(entry):
            return None
        if self.row is None and self.row_prefix is None:
            return entry.cells
        cells = tuple(
            cell
            for cell in entry.cells
            if (self.row is None or cell.row == self.row)
            and (self.row_prefix is None or cell.row.startswith(self.row_prefix))
        )
        return cells or None


def jsonable(value: Any) -> Any:
    """NamedTuples to dicts, bytes to ``toStringBinary`` strings, tuples to lists."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: jsonable(v) for k, v in value._asdict().items()}
    if isinstance(value, bytes | bytearray):
        return to_string_binary(value)
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    return value


def marker_json(cell: Cell) -> dict[str, Any] | None:
    """The decoded descriptor of a METAFAMILY cell, with its kind; None for other cells."""
    from hbase_migrate.wal import markers

    try:
        marker = markers.decode_marker(cell)
    except ValueError as exc:
        return {"kind": marker_kind(cell), "error": str(exc)}
    if marker is None:
        return None
    data: dict[str, Any] = {"kind": marker_kind(cell), **jsonable(marker)}
    if isinstance(marker, markers.FlushDescriptor):
        data["action_name"] = _FLUSH_ACTIONS.get(marker.action, str(marker.action))
    elif isinstance(marker, markers.RegionEventDescriptor):
        data["event_name"] = _REGION_EVENTS.get(marker.event_type, str(marker.event_type))
    return data


def marker_kind(cell: Cell) -> str:
    """``FLUSH``, ``COMPACTION``, ``REGION_EVENT::REGION_OPEN``, ``BULK_LOAD``, ... (the
    qualifier without ``HBASE::``)."""
    qualifier = to_string_binary(cell.qualifier)
    return qualifier.removeprefix("HBASE::")


def cell_json(cell: Cell, values: bool) -> dict[str, Any]:
    """One cell of the ``wal dump --json`` contract."""
    data: dict[str, Any] = {
        "row": to_string_binary(cell.row),
        "family": to_string_binary(cell.family),
        "qualifier": to_string_binary(cell.qualifier),
        "timestamp": cell.timestamp,
        "type": type_name(cell.type),
    }
    if values:
        data["value"] = to_string_binary(cell.value)
    if cell.tags:
        data["tags"] = [{"type": t.type, "value": to_string_binary(t.value)} for t in cell.tags]
    if cell.family == METAFAMILY:
        marker = marker_json(cell)
        if marker is not None:
            data["marker"] = marker
    return data


def entry_json(source: str, entry: Entry, cells: tuple[Cell, ...], values: bool) -> dict[str, Any]:
    """One line of ``wal dump --json``: the entry's key fields and its (filtered) cells."""
    key = entry.key
    data: dict[str, Any] = {
        "file": source,
        "offset": entry.offset,
        "size": entry.size,
        "index": entry.index,
        "sequence": key.sequence,
        "region": to_string_binary(key.encoded_region_name),
        "table": table_name(key.table_name),
        "write_time": key.write_time,
    }
    if key.orig_sequence is not None:
        data["orig_sequence"] = key.orig_sequence
    if key.cluster_ids:
        data["cluster_ids"] = [str(u) for u in key.cluster_ids]
    data["cells"] = [cell_json(cell, values) for cell in cells]
    return data


def text_lines(entry: Entry, cells: tuple[Cell, ...], values: bool) -> Iterator[str]:
    key = entry.key
    yield (
        f"Sequence={key.sequence}, table={table_name(key.table_name)}, "
        f"region={to_string_binary(key.encoded_region_name)}, "
        f"at write timestamp={format_time(key.write_time)} ({key.write_time}), "
        f"offset={entry.offset}, size={entry.size}"
    )
    for cell in cells:
        yield (
            f"row={to_string_binary(cell.row)}, column={to_string_binary(cell.family)}:"
            f"{to_string_binary(cell.qualifier)}, timestamp={cell.timestamp}, "
            f"type={type_name(cell.type)}"
        )
        if cell.tags:
            tags = ", ".join(f"{t.type}:{to_string_binary(t.value)}" for t in cell.tags)
            yield f"    tag: [{tags}]"
        if values:
            yield f"    value: {to_string_binary(cell.value)}"
        if cell.family == METAFAMILY:
            yield f"    marker: {json.dumps(marker_json(cell), sort_keys=True)}"
