"""WAL files written by real Apache HBase, read without a JVM: ``hbase-migrate wal dump
--json --values`` must agree, field by field on every entry, with what HBase's own
WALPrettyPrinter printed for the same file (committed beside it as ``*.hbase.json``, or
gzipped; see tests/data/real-wal/README.md for how each was made)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.wal.reader import WalReader
from realstack.hbase import DEFAULT_VERSION

from .agreement import disagreements, dump
from .golden import OPTION_SETS, PRINTOUT

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "real-wal"
# A folder per option set: the default version's at the top, another version's under hbase-V/
FILES = sorted(p.with_name(p.name.split(PRINTOUT)[0]) for p in GOLDEN.rglob(f"*{PRINTOUT}*"))
# The option sets each version's files cover (HBase 2.5.8 and 3.0.0-alpha-4 here: no codec
# module beyond GZ; 1.x: no WAL value compression)
COVERED = {DEFAULT_VERSION: set(OPTION_SETS),
           "2.5.8": {"plain", "dict", "dict+tags", "dict+tags+gz"},
           "3.0.0-alpha-4": {"plain", "dict", "dict+tags", "dict+tags+gz"},
           "1.4.13": {"plain", "dict", "dict+tags"}}


def _version(wal: Path) -> str:
    folder = wal.parent.parent
    return DEFAULT_VERSION if folder == GOLDEN else folder.name.removeprefix("hbase-")


def _printed(wal: Path) -> list[dict[str, Any]]:
    """HBase's entries of ``wal``, from ``X.hbase.json`` or ``X.hbase.json.gz``."""
    plain = wal.with_name(wal.name + PRINTOUT)
    text = plain.read_bytes() if plain.exists() else gzip.decompress(
        plain.with_name(plain.name + ".gz").read_bytes())
    entries: list[dict[str, Any]] = json.loads(text)
    return entries


@pytest.mark.parametrize("version", COVERED)
def test_every_option_set_has_files(version: str) -> None:
    """Each version's option sets of the README have real WAL files with entries of both
    tables and of hbase:meta, and no other version's files are there."""
    assert {_version(p) for p in FILES} == set(COVERED)
    wals = [p for p in FILES if _version(p) == version]
    assert {p.parent.name for p in wals} == COVERED[version]
    for option_set in COVERED[version]:
        tables = {entry["table"] for p in wals if p.parent.name == option_set
                  for entry in _printed(p)}
        assert {"golden_a", "golden_b", "hbase:meta"} <= tables


@pytest.mark.parametrize("wal", FILES, ids=[f"{_version(p)}/{p.parent.name}/{p.name[-24:]}"
                                            for p in FILES])
def test_reader_agrees_with_walprettyprinter(wal: Path) -> None:
    hbase = _printed(wal)
    ours = dump(wal)
    assert ours, f"{wal} has no entries"
    assert disagreements(wal.name, ours, hbase) == []


@pytest.mark.parametrize("wal", FILES, ids=[f"{_version(p)}/{p.parent.name}/{p.name[-24:]}"
                                            for p in FILES])
def test_cell_blocks_hold_the_cells_hbase_wrote(wal: Path, both_hot_loops: str) -> None:
    """Read as the CDC stream reads them, the same entries: an uncompressed file's usual
    entries as compiled cell blocks holding exactly the Cells, every other entry as Cells."""
    with WalReader(wal) as reader:
        cells = list(reader)
    with WalReader(wal, cell_blocks=True) as reader:
        blocks = list(reader)
    assert [e._replace(cells=tuple(e.cells)) for e in blocks] == cells
    made = sum(type(e.cells) is not tuple for e in blocks)
    usual = both_hot_loops == "compiled" and wal.parent.name == "plain"
    assert made > len(blocks) // 3 if usual else made == 0
