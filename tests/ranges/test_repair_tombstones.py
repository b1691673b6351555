"""``validate --repair`` against delete markers on the target (embedded cluster, in-process):
a cell deleted with a newer tombstone, a whole row deleted and a changed value. The repair's
puts leave the first two hidden (HBase's masking); the repair asks for a major compaction,
puts them again and ends equal to the source. ``--no-compact`` refuses, naming the hidden
cells and the shell command that drops the markers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.admin import AdminShellError
from hbase_migrate.config import load_config
from hbase_migrate.validate.tombstones import run_admin_shell
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.cli_util import run
from tests.support.minicluster import EmbeddedClusters, compare, run_workload, t2
from tests.support.ranges import TABLE, configure

pytestmark = pytest.mark.integration


def damage(src: MiniHBase, dst: MiniHBase) -> list[Cell]:
    """Delete a column with a newer tombstone and a whole row on the target, change a value;
    return the source cells the markers hide (what a repair's puts cannot bring back)."""
    with t2(src) as source:
        rows = [r for r in source.scan(TABLE) if len(r) > 1]
    column_row, deleted_row, changed_row = rows[1], rows[len(rows) // 2], rows[-1]
    cell = column_row[0]
    newest = max(c.timestamp for r in rows for c in r) + 1000
    column_marker = Cell(cell.row, cell.family, cell.qualifier, cell.timestamp + 1,
                         CellType.DELETE_COLUMN, b"")
    row_markers = [Cell(deleted_row[0].row, family, b"", newest, CellType.DELETE_FAMILY, b"")
                   for family in sorted({c.family for c in deleted_row})]
    with t2(dst) as target:
        target.write_cells(TABLE, [column_marker, *row_markers])
        target.put_cells(TABLE, [changed_row[0]._replace(value=b"changed!")])
    hidden = [c for c in column_row if (c.family, c.qualifier) == (cell.family, cell.qualifier)
              and c.timestamp <= column_marker.timestamp]
    return hidden + list(deleted_row)


def migrated(tmp_path: Path, src: MiniHBase, dst: MiniHBase,
             capsys: pytest.CaptureFixture[str]) -> str:
    run_workload(src, TABLE, seed=61, ops=150)
    config = str(configure(tmp_path, src, dst, master="in-process"))
    assert run(["prepare", "--config", config], capsys)[0] == 0
    assert run(["snapshot", "--config", config], capsys)[0] == 0
    return config


def described(cells: list[Cell]) -> list[str]:
    return [f"row={to_string_binary(c.row)} column={to_string_binary(c.family)}:"
            f"{to_string_binary(c.qualifier)} ts={c.timestamp}" for c in cells]


def test_repair_compacts_past_newer_tombstones(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               make_embedded: EmbeddedClusters,
                                               transport: str) -> None:
    """For a target reached over Thrift, through its Thrift1 gateway (regions asked to
    compact, polled), or for one whose client is native (registered in ZooKeeper) over
    HBase's RPC (the table flushed and compacted, waited for), both through the front
    door's compactor: the claim is about each (the source is reached over Thrift)."""
    native = transport == "native"
    src = make_embedded("source", folder=tmp_path / "src")
    dst = make_embedded("target", over=transport, folder=tmp_path / "dst")
    assert dst.endpoints.native == native
    config = migrated(tmp_path, src, dst, capsys)
    hidden = damage(src, dst)
    code, out = run(["validate", "--config", config, "--repair", "--recompare-wait",
                     "0s", "--compact-wait", "20s", "--json"], capsys)
    result = json.loads(out)
    assert code == 0 and result["verdict"] == "match", out
    assert compare(src, dst, TABLE).equal
    found = [t for r in result["tables"][0]["repaired"] if (t := r["tombstones"])]
    assert sum(t["hidden_cells"] for t in found) == len(hidden)
    assert sorted(d for t in found for d in t["hidden"]) == sorted(described(hidden))
    assert all(t["regions"] and not t["still_hidden"] for t in found), found
    assert all(t["native"] is native for t in found), found
    with Ledger.open(load_config(config).ledger_url) as ledger:
        actions = [r.detail.get("action", "repair") for r in ledger.repairs(1)]
        after = [r for r in ledger.repairs(1)
                 if r.detail.get("action") == "put-after-compaction"]
    assert actions.count("compact") == len(found) == len(after)
    assert all(r.verdict == "match" for r in after)
    assert sum(r.puts for r in after) >= len(hidden)

    code, out = run(["validate", "--config", config, "--repair", "--recompare-wait",
                     "0s"], capsys)  # as lines, now with nothing left to repair
    assert code == 0 and "verdict: match" in out


def test_no_compact_refuses_naming_the_cells_and_the_command(
        tmp_path: Path, make_embedded: EmbeddedClusters,
        capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = make_embedded.pair()
    config = migrated(tmp_path, src, dst, capsys)
    hidden = damage(src, dst)
    code, out = run(["validate", "--config", config, "--repair", "--no-compact",
                     "--recompare-wait", "0s"], capsys)
    assert code == 1 and "verdict: mismatch" in out, out
    refusals = [line for line in out.splitlines() if "refused:" in line]
    assert refusals and all(
        "--no-compact: run \"flush 'orders'; major_compact 'orders'\" in the hbase shell"
        in line for line in refusals), out
    assert all(any(d in line for line in refusals) for d in described(hidden)), out
    comparison = compare(src, dst, TABLE)
    assert (comparison.only_in_source, comparison.only_in_target,
            comparison.different_values) == (len(hidden), 0, 0)  # the value was fixed
    with Ledger.open(load_config(config).ledger_url) as ledger:
        refused = [r for r in ledger.repairs(1) if r.detail.get("action") == "refused"]
    assert len(refused) == len(refusals)
    assert all(r.verdict == "mismatch" and r.detail["command"] ==
               "flush 'orders'; major_compact 'orders'" for r in refused)


def test_an_admin_shell_gets_the_statements_and_its_failure_is_one_line(
        tmp_path: Path) -> None:
    seen = tmp_path / "statements"
    run_admin_shell(f"tee {seen}", "ns:orders")
    assert seen.read_text() == "flush 'ns:orders'\nmajor_compact 'ns:orders'\n"
    with pytest.raises(AdminShellError) as failed:
        run_admin_shell("sh -c 'echo ERROR: Unknown table ns:orders! >&2; exit 1'",
                        "ns:orders")
    assert str(failed.value) == (
        "target admin_shell \"sh -c 'echo ERROR: Unknown table ns:orders! >&2; exit 1'\": "
        "\"flush 'ns:orders'; major_compact 'ns:orders'\" exited with 1: ERROR: Unknown "
        "table ns:orders!")
    with pytest.raises(AdminShellError, match="cannot run it"):
        run_admin_shell(str(tmp_path / "no-such-shell"), "orders")
