"""The CDC message: one per (WAL entry, row), its key and its JSON (byte strings as
``Bytes.toStringBinary``, reversible), and the ``[cdc]`` section of the migration file."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.bytesutil import to_bytes_binary, to_string_binary
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.mutations import WalPosition, to_mutations
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value, row_edits
from hbase_migrate.wal.dump import cell_json
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType, Tag

P1 = WalPosition("wal.1", 100, 3, 42, 1_700_000_000_123)
P2 = WalPosition("wal.1", 180, 4, 43, 1_700_000_000_124)


def test_one_edit_per_entry_and_row_in_first_appearance_order() -> None:
    a1 = Cell(b"a", b"d", b"q", 5, CellType.PUT, b"1")
    b1 = Cell(b"b", b"d", b"q", 5, CellType.DELETE_COLUMN)
    a2 = Cell(b"a", b"d", b"r", 5, CellType.DELETE)
    a3 = Cell(b"a", b"m", b"", 6, CellType.PUT, b"\x00\\\xff")
    mutations = to_mutations([a1, b1, a2], P1) + to_mutations([a3], P2)
    edits = list(row_edits("ns:t", mutations))
    assert [(e.row, e.position, e.cells) for e in edits] == [
        (b"a", P1, (a1, a2)), (b"b", P1, (b1,)), (b"a", P2, (a3,))]
    assert message_key("ns:t", b"a") == b"ns:t\x00a"
    value = json.loads(message_value(edits[2]))
    assert value == {"table": "ns:t", "row": "a", "file": "wal.1", "offset": 180, "entry": 4,
                     "sequence": 43, "write_time": 1_700_000_000_124,
                     "cells": [{"row": "a", "family": "m", "qualifier": "", "timestamp": 6,
                                "type": "Put", "value": "\\x00\\x5C\\xFF"}]}
    assert to_bytes_binary(value["cells"][0]["value"]) == b"\x00\\\xff"
    image = json.loads(message_value(edits[0], [Cell(b"a", b"d", b"q", 5, CellType.PUT, b"1")]))
    assert image["row_image"] == [{"family": "d", "qualifier": "q", "timestamp": 5,
                                   "value": "1"}]
    assert [c["type"] for c in image["cells"]] == ["Put", "Delete"]


def config(tmp_path: Path, cdc: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text('[migration]\nname = "m"\n[source]\nthrift = "h:1"\n[target]\nthrift = "h:2"\n'
                    f'[[tables]]\nsource = "ns:t"\n{cdc}', encoding="utf-8")
    return path


def test_the_cdc_section(tmp_path: Path) -> None:
    assert load_config(config(tmp_path, "")).cdc is None
    spec = load_config(config(tmp_path, '[cdc]\nbootstrap = "k1:9092,k2:9092"\n'
                              'delivery_timeout = "10s"\nproducer = { "linger.ms" = 20 }\n'))
    assert spec.cdc is not None
    assert spec.cdc.topic_of("ns:t") == "hbase-cdc.ns.t" and spec.cdc.delivery_timeout == 10_000
    assert spec.cdc.producer == (("linger.ms", "20"),) and spec.cdc.retries == 3
    assert MigrationSpec.from_dict(spec.to_dict()).cdc == spec.cdc
    one = load_config(config(tmp_path, '[cdc]\nbootstrap = "k:9092"\ntopic = "all-edits"\n'))
    assert one.cdc is not None and one.cdc.topic_of("ns:t") == "all-edits"


@pytest.mark.parametrize(("cdc", "says"), [
    ("[cdc]\n", "[cdc] bootstrap: missing"),
    ('[cdc]\nbootstrap = "k:1"\nretries = -1\n', "[cdc] retries: expected a number"),
    ('[cdc]\nbootstrap = "k:1"\nproducer = { acks = "1" }\n', "guarantees rest on them"),
    ('[cdc]\nbootstrap = "k:1"\ntopic = "a b"\n', "[cdc] topic"),
    ('[cdc]\nbootstrap = "k:1"\nrow_images = true\n', "unknown key 'row_images'"),
])
def test_bad_cdc_sections(tmp_path: Path, cdc: str, says: str) -> None:
    with pytest.raises(ConfigError, match=r"m\.toml") as error:
        load_config(config(tmp_path, cdc))
    assert says in str(error.value)


def documented_value(edit: RowEdit, image: list[Cell] | None = None) -> bytes:
    """The message as the format states it: ``wal dump --json --values`` cells in a dict,
    compact JSON."""
    p = edit.position
    data: dict[str, Any] = {
        "table": edit.table, "row": to_string_binary(edit.row),
        "file": p.file.rsplit("/", 1)[-1],
        "offset": p.offset, "entry": p.entry, "sequence": p.sequence,
        "write_time": p.write_time, "cells": [cell_json(c, True) for c in edit.cells]}
    if image is not None:
        data["row_image"] = [{"family": to_string_binary(c.family),
                              "qualifier": to_string_binary(c.qualifier),
                              "timestamp": c.timestamp, "value": to_string_binary(c.value)}
                             for c in image]
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def test_values_are_byte_for_byte_the_documented_json() -> None:
    rng = random.Random(5)
    every_byte = bytes(range(256))
    cells = [Cell(b'r"\\\x00\xff', b"d", b'q"\\', -3, CellType.PUT, every_byte),
             Cell(b'r"\\\x00\xff', b"m", b"", 2**63 - 1, CellType.DELETE_FAMILY_VERSION),
             Cell(b'r"\\\x00\xff', b"d", b"t", 7, CellType.PUT, b"v", (Tag(8, b"\x01t"),)),
             Cell(b'r"\\\x00\xff', METAFAMILY, b"HBASE::FLUSH", 1, CellType.PUT, b"\x00"),
             Cell(b'r"\\\x00\xff', b"d", b"u", 1, 99, b""),
             Cell(b'r"\\\x00\xff', b"d", b'say "hi"', 1, CellType.PUT, b"printable ~ ok")]
    for _ in range(200):
        cells.append(Cell(b'r"\\\x00\xff', rng.randbytes(rng.randint(0, 3)),
                          rng.randbytes(rng.randint(0, 12)), rng.randrange(-2**63, 2**63),
                          rng.choice(list(CellType)), rng.randbytes(rng.randint(0, 200))))
    positions = [P1, WalPosition('WALs/rs,1,2/r\u00e9s "1"\\.1', 0, 0),
                 WalPosition("wal.2", 7, 1, None, 5)]
    for i, position in enumerate(positions):
        for table in ("ns:t", "t\u00e9"):
            edit = RowEdit(table, cells[0].row, position, tuple(cells[i::2]))
            assert message_value(edit) == documented_value(edit)
            image = list(cells[5 + i:40])
            assert message_value(edit, image) == documented_value(edit, image)
