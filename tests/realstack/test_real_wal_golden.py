"""WAL files written by real Apache HBase, read without a JVM: ``hbase-migrate wal dump
--json --values`` must agree, field by field on every entry, with what HBase's own
WALPrettyPrinter printed for the same file (committed beside it as ``*.hbase.json``; see
tests/data/real-wal/README.md for how each was made)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .agreement import disagreements, dump
from .golden import OPTION_SETS

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "real-wal"
FILES = sorted(p.with_suffix("").with_suffix("") for p in GOLDEN.glob("*/*.hbase.json"))


def test_every_option_set_has_files() -> None:
    """Each option set of the README has real WAL files with entries of both tables."""
    sets = {p.parent.name for p in FILES}
    assert sets == set(OPTION_SETS)
    for option_set in sets:
        tables = {entry["table"] for p in FILES if p.parent.name == option_set
                  for entry in json.loads(p.with_name(p.name + ".hbase.json").read_text())}
        assert {"golden_a", "golden_b", "hbase:meta"} <= tables


@pytest.mark.parametrize("wal", FILES, ids=[f"{p.parent.name}/{p.name[-24:]}" for p in FILES])
def test_reader_agrees_with_walprettyprinter(wal: Path) -> None:
    hbase = json.loads(wal.with_name(wal.name + ".hbase.json").read_text(encoding="utf-8"))
    ours = dump(wal)
    assert ours, f"{wal} has no entries"
    assert disagreements(wal.name, ours, hbase) == []
