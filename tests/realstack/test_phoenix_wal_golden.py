"""WAL files written by real HBase through Apache Phoenix's ``IndexedWALEditCodec`` (plain and
dictionary-compressed), read without a JVM, against HBase's view of the same file (committed
beside it as ``*.hbase.json.gz``; see tests/data/phoenix-wal/README.md for how each was made):

* HBase 1.4.13 with phoenix-core 4.14.3: every entry, cell and index update (its index table
  and every cell of its mutation) as HBase's own WAL reader read them (1.x's printer cannot
  print an index update);
* HBase 2.6.1 with Phoenix 5.2.1: every entry and cell as HBase's WALPrettyPrinter printed
  them, an index update as Phoenix 5 shows it (the index row, METAFAMILY, the time of its
  mutation's first cell; as qualifier and value that cell's, or for a delete its KeyValue's
  bytes: Phoenix hands the cell's whole backing array over).

Replay counts the index updates as markers and applies none."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.bytesutil import to_string_binary as sb
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.replay.apply import AppliedCounts, count_cells
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.rpc.multi import PUT, decode_mutation
from hbase_migrate.wal.cells import encode_plain_cell
from hbase_migrate.wal.model import METAFAMILY, Cell, Entry, type_name
from hbase_migrate.wal.phoenix import decode_index_update, is_index_update
from hbase_migrate.wal.reader import WalReader

from .golden import PRINTOUT
from .phoenix_golden import OPTION_SETS

pytestmark = pytest.mark.usefixtures("both_hot_loops")

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "phoenix-wal"
FILES = sorted(p.with_name(p.name.split(PRINTOUT)[0]) for p in GOLDEN.rglob(f"*{PRINTOUT}.gz"))
IDS = [f"{p.parent.parent.name}/{p.parent.name}/{p.name[-24:]}" for p in FILES]


def _version(wal: Path) -> str:
    return wal.parent.parent.name.removeprefix("hbase-")


def _hbase(wal: Path) -> dict[str, Any]:
    view: dict[str, Any] = json.loads(
        gzip.decompress(wal.with_name(wal.name + PRINTOUT + ".gz").read_bytes()))
    return view


def _cell(cell: Cell) -> dict[str, Any]:
    return {"row": sb(cell.row), "family": sb(cell.family), "qualifier": sb(cell.qualifier),
            "timestamp": cell.timestamp, "type": type_name(cell.type), "value": sb(cell.value),
            "tags": [f"{t.type}:{sb(t.value)}" for t in cell.tags]}


def _index_update(cell: Cell) -> dict[str, Any]:
    update = decode_index_update(cell.value)
    mutation = decode_mutation(update.mutation, b"", 0)[0]
    assert (cell.row, cell.timestamp) == (mutation.row, mutation.cells[0].timestamp)
    return {"index_table": sb(update.table), "row": sb(mutation.row),
            "mutation": "Put" if mutation.kind == PUT else "Delete",
            "cells": [_cell(c) for c in mutation.cells]}


def _ours(entry: Entry) -> dict[str, Any]:
    """An entry in the shape of the Java reader's view (its ``reads`` with ``--cells``)."""
    return {"types": ["IndexedKeyValue" if is_index_update(c) else type_name(c.type)
                      for c in entry.cells],
            "end": entry.offset + entry.size, "sequence": entry.key.sequence,
            "region": entry.key.encoded_region_name.decode(),
            "table": entry.key.table_name.decode(),
            "cells": [_index_update(c) if is_index_update(c) else _cell(c)
                      for c in entry.cells]}


def _printed(cell: Cell) -> dict[str, Any]:
    """A cell as 2.x's printer prints it: an index update as Phoenix 5 presents it."""
    qualifier, value = cell.qualifier, cell.value
    if is_index_update(cell):
        mutation = decode_mutation(decode_index_update(cell.value).mutation, b"", 0)[0]
        first = mutation.cells[0]
        if mutation.kind == PUT:
            qualifier, value = first.qualifier, first.value
        else:
            serialized = bytearray()
            encode_plain_cell(serialized, first)
            qualifier = value = bytes(serialized[4:])
    return {**_cell(cell), "qualifier": sb(qualifier), "value": sb(value), "vlen": len(value)}


def _index_updates(entry: dict[str, Any]) -> int:
    if "types" in entry:  # 1.x: HBase's reader's view
        return int(entry["types"].count("IndexedKeyValue"))
    return sum(c["family"] == "METAFAMILY" and not c["qualifier"].startswith("HBASE::")
               for c in entry["cells"])


def test_every_option_set_has_index_updates() -> None:
    """Each version's option sets have files holding the data table's entries with index
    updates in them and the index table's own entries."""
    assert {_version(p) for p in FILES} == {"1.4.13", "2.6.1"}
    for version in ("1.4.13", "2.6.1"):
        assert {p.parent.name for p in FILES if _version(p) == version} == set(OPTION_SETS)
        for option_set in OPTION_SETS:
            entries = [e for p in FILES if p.parent.name == option_set
                       and _version(p) == version for e in _hbase(p)["entries"]]
            assert sum(map(_index_updates, entries)) >= 4, (version, option_set)
            assert {"ORDERS", "ORDERS_BY_CUSTOMER"} <= {e["table"] for e in entries}


@pytest.mark.parametrize("wal", FILES, ids=IDS)
def test_reader_agrees_with_hbase_and_phoenix(wal: Path) -> None:
    hbase = _hbase(wal)["entries"]
    with WalReader(wal) as reader:
        entries = list(reader)
        assert reader.end_reason == "trailer"
    if _version(wal).startswith("1."):
        ours = [_ours(e) for e in entries if e.cells]  # its reader lists no empty entry
    else:
        ours = [{"sequence": e.key.sequence, "region": e.key.encoded_region_name.decode(),
                 "table": e.key.table_name.decode(), "end": e.offset + e.size,
                 "cells": [_printed(c) for c in e.cells]} for e in entries]
    assert len(ours) == len(hbase)
    for index, (mine, theirs) in enumerate(zip(ours, hbase, strict=True)):
        assert mine == theirs, f"{wal.name} entry #{index}"


class Recorder:
    """A replay target that keeps every cell it is sent, by table."""

    name = "recorder"

    def __init__(self) -> None:
        self.cells: dict[str, list[Cell]] = {}

    def describe(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, (FamilyDescriptor(b"0"),))

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        self.cells.setdefault(table, []).extend(c for m in mutations for c in m.cells)
        return AppliedCounts(count_cells(mutations), 1)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("wal", FILES, ids=IDS)
def test_replay_never_applies_index_updates(wal: Path) -> None:
    """Replay sends each table exactly its own cells, the data table's without the index
    updates (each counted as a marker), the index table its own entries' rows; resuming
    mid-file reads the same entries."""
    with WalReader(wal) as reader:
        entries = list(reader)
    target = Recorder()
    result = replay_file(wal, ReplaySpec(), target)
    expected: dict[str, list[Cell]] = {}
    for entry in entries:
        expected.setdefault(entry.key.table_name.decode(), []).extend(
            c for c in entry.cells if c.family != METAFAMILY)
    assert target.cells == {table: cells for table, cells in expected.items() if cells}
    updates = sum(map(is_index_update, (c for e in entries for c in e.cells)))
    assert updates and result.progress.markers == {"PHOENIX_INDEX_UPDATE": updates}
    middle = entries[len(entries) // 2]
    with WalReader(wal, start_offset=middle.offset) as reader:
        assert list(reader) == entries[len(entries) // 2:]
