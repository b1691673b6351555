"""Scans and puts sized by bytes (issue 29), on two embedded clusters over the real Thrift2
protocol: cells larger than the byte budget, a row wider than it, several versions. The
gateway counts the bytes of every call and can be made to stall calls (larger than a size,
or the next N): a stalled call never answers, so the client's call timeout fires
deterministically, however loaded the machine."""

from __future__ import annotations

import hashlib
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hbase_migrate.cli import main
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.ranges.copy import copy_range, copy_table
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.plan import plan_ranges
from hbase_migrate.ranges.stats import feed, range_stats
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.thrift.thrift2 import PutTimeoutError, Thrift2Client
from hbase_migrate.thrift.thrift2_scan import ScanFailedError
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.validate.repair import repair_range
from hbase_migrate.wal.model import Cell, CellType, cell_order
from minihbase.server import MiniHBase
from minihbase.thrift2 import Thrift2Handler
from tests.cli_util import fails
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration

KiB = 1024
BUDGET = 128 * KiB  # the client's byte budget per call, scaled down from MBs
T = int(time.time() * 1000) - 3_600_000
WIDE = b"row-wide"


@dataclass
class Stack:
    src: MiniHBase
    dst: MiniHBase

    @property
    def src_gateway(self) -> Thrift2Handler:
        assert self.src.thrift2_handler is not None
        return self.src.thrift2_handler

    @property
    def dst_gateway(self) -> Thrift2Handler:
        assert self.dst.thrift2_handler is not None
        return self.dst.thrift2_handler

    def client(self, side: str, **options: float) -> Thrift2Client:
        cluster = self.src if side == "src" else self.dst
        assert cluster.endpoints.thrift2
        settings: dict[str, float] = {"max_result_bytes": BUDGET, "max_put_bytes": BUDGET,
                                      "timeout": 5.0, "timeout_retries": 4, **options}
        return Thrift2Client(cluster.endpoints.thrift2, retries=1, backoff=0.05,
                             timeout=settings.pop("timeout"),
                             **{k: int(v) for k, v in settings.items()})


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Stack, list[Cell]]]:
    """Source table ``big``: 12 rows of 2-3 versions of 130-990 KiB cells (each larger than
    the budget, as 3-9.9 MB cells are larger than a few MB), a row of 300 columns x 3 KiB
    (900 KiB, seven budgets) and small rows around them; returns every cell written."""
    folder = tmp_path_factory.mktemp("large-cells")
    with EmbeddedClusters(folder) as clusters:
        src, dst = clusters.pair()
        stack = Stack(src, dst)
        rng = random.Random(29)
        cells: list[Cell] = []
        for i in range(12):
            row = b"row-big-%02d" % i
            for v in range(rng.choice((2, 3))):
                size = rng.randrange(130 * KiB, 990 * KiB)
                cells.append(Cell(row, b"d", b"doc", T + v, CellType.PUT, rng.randbytes(size)))
        cells += [Cell(WIDE, b"d", b"c%04d" % q, T, CellType.PUT, rng.randbytes(3 * KiB))
                  for q in range(300)]
        cells += [Cell(b"row-small-%02d" % i, b"d", b"q", T + v, CellType.PUT, b"v%d" % v)
                  for i in range(20) for v in range(3)]
        with stack.client("src", max_put_bytes=4 * 1024 * KiB) as client:
            client.create_table(TableDescriptor("big", (FamilyDescriptor(b"d", max_versions=3),)),
                                [b"row-s"])
            client.put_cells("big", cells)
        yield stack, cells


def expected_digest(cells: list[Cell]) -> tuple[int, int, str]:
    """Rows, cells and digest of ``cells`` computed from what was written, not read."""
    digest = hashlib.sha256()
    for cell in sorted(cells, key=cell_order):
        feed(digest, cell)
    return len({c.row for c in cells}), len(cells), digest.hexdigest()


def fresh_target(stack: Stack, name: str) -> None:
    with stack.client("src") as src, stack.client("dst") as dst:
        copy_schema(src, dst, "big", name)


def test_copy_and_checksums_of_multi_mb_cells_match_cell_for_cell(
        written: tuple[Stack, list[Cell]]) -> None:
    stack, cells = written
    fresh_target(stack, "big_a")
    stack.src_gateway.call_sizes.clear()
    stack.dst_gateway.call_sizes.clear()
    with stack.client("src") as src, stack.client("dst") as dst:
        stats = copy_table(src, dst, "big", "big_a")
        rows, n_cells, digest = expected_digest(cells)
        assert (stats.rows, stats.cells) == (rows, n_cells)
        result = compare_tables(src, dst, "big", "big_a")
        assert result.equal and result.source_cells == n_cells, result.examples
        whole = KeyRange("big")
        for client, table in ((src, "big"), (dst, "big_a")):
            got = range_stats(client, whole, table)
            assert (got.rows, got.cells, got.digest) == (rows, n_cells, digest)
        # the wide row came in pieces (it holds seven budgets), and still counted as one
        pieces = [p for p in src.scan("big", WIDE, WIDE + b"\x00")]
        assert len(pieces) > 1 and {p[0].row for p in pieces} == {WIDE}
        assert [c for p in pieces for c in p] == sorted(
            (c for c in cells if c.row == WIDE), key=cell_order)
        # the range plan counts the wide row's cells as one row's
        planned = plan_ranges(src, "big", max_cells=100)
        assert sum(p.cells for p in planned) == n_cells
        assert any(p.range.contains(WIDE) and p.cells >= 300 for p in planned)
    # Scan answers stay within twice the budget or hold a single cell (larger than the
    # budget: it cannot be split), except once per scan where the data changes shape (the
    # wide row of 3 KiB cells after rows of 2-byte cells): the next calls are sized again.
    # Every put stays within the budget or holds one cell.
    calls = stack.src_gateway.call_sizes
    scans = [(size, n) for call, size, n in calls if call == "getScannerRows"]
    over = [(size, n) for size, n in scans if size > 2 * BUDGET and n > 1]
    opened = sum(1 for call, _, _ in calls if call == "openScanner")
    scans_run = 7  # copy and plan: a scan per region (2); compare, stats, the wide row: 1
    assert len(over) <= scans_run < len(scans) / 4, (over, len(scans), opened)
    puts = [(size, n) for call, size, n in stack.dst_gateway.call_sizes if call == "putMultiple"]
    assert scans and puts
    assert all(size <= BUDGET or n == 1 for size, n in puts), sorted(puts)[-5:]
    assert sum(size for size, _ in puts) == sum(
        len(c.value) + len(c.row) + len(c.family) + len(c.qualifier) for c in cells)


def test_the_budget_bounds_every_call_and_a_digest_ignores_splits(
        written: tuple[Stack, list[Cell]]) -> None:
    """The same range scanned with budgets from 4 KiB to 64 MiB: same cells, same digest;
    the calls of the small budgets are small."""
    stack, cells = written
    seen = set()
    for budget in (4 * KiB, 32 * KiB, BUDGET, 64 * 1024 * KiB):
        stack.src_gateway.call_sizes.clear()
        with stack.client("src", max_result_bytes=budget) as src:
            got = range_stats(src, KeyRange("big"))
            calls = src.last_scan.calls if src.last_scan else 0
        seen.add((got.rows, got.cells, got.digest))
        sizes = [(s, n) for c, s, n in stack.src_gateway.call_sizes if c == "getScannerRows"]
        assert len(sizes) == calls
        # answers over the budget hold one cell (the 130-990 KiB cells), but for the one
        # where the scan first meets the wide row of 3 KiB cells after the 2-byte ones
        over = [(s, n) for s, n in sizes if s > 2 * budget and n > 1]
        assert len(over) <= 1, (budget, over)
        if budget >= 32 * KiB:  # the budget is used: far fewer calls than cells
            assert calls < len(cells) / 4, (budget, calls)
    assert seen == {expected_digest(cells)}


def test_timed_out_calls_are_retried_smaller_and_the_copy_completes(
        written: tuple[Stack, list[Cell]]) -> None:
    """Both gateways stall any call above 1.2 MiB (a gateway that cannot carry more within
    the call timeout); the clients' budgets are far larger (16 MiB): scans and puts time
    out, are retried smaller, and the copy is exact."""
    stack, cells = written
    fresh_target(stack, "big_b")
    limit = 1200 * KiB
    stack.src_gateway.stall_over_bytes = stack.dst_gateway.stall_over_bytes = limit
    try:
        with stack.client("src", max_result_bytes=16 * 1024 * KiB, timeout=2.0) as src, \
                stack.client("dst", max_put_bytes=16 * 1024 * KiB, timeout=2.0) as dst:
            stats = copy_range(src, dst, "big", "big_b", batch_cells=100_000)
            assert src.last_scan is not None and src.last_scan.reopens >= 1
        with stack.client("src") as src, stack.client("dst") as dst:
            result = compare_tables(src, dst, "big", "big_b")
    finally:
        stack.src_gateway.stall_over_bytes = stack.dst_gateway.stall_over_bytes = None
    assert result.equal, result.examples
    assert (stats.rows, stats.cells) == expected_digest(cells)[:2]


def test_a_call_that_can_never_succeed_fails_in_one_line(
        written: tuple[Stack, list[Cell]]) -> None:
    """A gateway that stalls anything above 100 KiB cannot return one of the large cells:
    the scan gives up after its retries with one line naming the table, the range, the row
    reached and what to change; the put likewise."""
    stack, cells = written
    stack.src_gateway.stall_over_bytes = 100 * KiB
    began = time.monotonic()
    try:
        with stack.client("src", timeout=1.0, timeout_retries=2) as src, \
                pytest.raises(ScanFailedError) as failed:
            for _ in src.scan("big", b"row-big-03", b"row-big-06"):
                pass
    finally:
        stack.src_gateway.stall_over_bytes = None
    message = str(failed.value)
    assert "\n" not in message
    assert "table big range [726f772d6269672d3033, 726f772d6269672d3036)" in message
    assert "at row row-big-03 (nothing read yet)" in message
    assert "3 calls in a row timed out" in message
    assert "raise [gateway] call_timeout (now 1 s)" in message
    assert time.monotonic() - began < 60  # three timeouts of 1 s, not an endless loop

    # the small rows come back, then the wide row's 3 KiB cells cannot: the row reached
    stack.src_gateway.stall_over_bytes = 2 * KiB
    got: list[bytes] = []
    try:
        with stack.client("src", timeout=1.0, timeout_retries=1) as src, \
                pytest.raises(ScanFailedError) as failed:
            for piece in src.scan("big", b"row-small"):
                got.append(piece[0].row)
    finally:
        stack.src_gateway.stall_over_bytes = None
    # row-small-19 came in the same call as the start of the wide row, so it was not
    # known complete: the scan had reached row-small-18 (and would resume after it)
    assert got == [b"row-small-%02d" % i for i in range(19)]
    assert "failed at row row-small-18: 2 calls in a row timed out" in str(failed.value)

    fresh_target(stack, "big_c")
    stack.dst_gateway.stall_over_bytes = 100 * KiB
    big = [c for c in cells if len(c.value) > 100 * KiB][:3]
    try:
        with stack.client("dst", timeout=1.0, timeout_retries=1) as dst, \
                pytest.raises(PutTimeoutError) as put_failed:
            dst.put_cells("big_c", big)
    finally:
        stack.dst_gateway.stall_over_bytes = None
    message = str(put_failed.value)
    assert "\n" not in message and "table big_c" in message
    assert f"at row {big[0].row.decode()} (1 cell(s)" in message
    assert "lower [gateway] max_put_bytes" in message


def test_a_timeout_inside_a_wide_row_resumes_at_the_cell_reached(
        written: tuple[Stack, list[Cell]]) -> None:
    """The scanner is lost in the middle of the wide row (a stalled call, then a gateway
    answering OutOfOrderScannerNextException with a Java stack trace): the scan reopens
    inside the row, and every cell comes exactly once."""
    stack, cells = written
    wide = sorted((c for c in cells if c.row == WIDE), key=cell_order)
    with stack.client("src", max_result_bytes=16 * KiB, timeout=1.0) as src:
        pieces = src.scan("big", WIDE, WIDE + b"\x00")
        got = next(pieces) + next(pieces)
        assert 0 < len(got) < len(wide)
        stack.src_gateway.stall_calls = 1
        got += next(pieces)
        stack.src_gateway.scan_errors.append(
            "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException: Expected "
            "nextCallSeq: 3 But the nextCallSeq got from client: 2; request=scanner_id: 1\n"
            "\tat org.apache.hadoop.hbase.regionserver.RSRpcServices.scan(RSRpcServices.java)")
        for piece in pieces:
            got += piece
        assert src.last_scan is not None and src.last_scan.reopens >= 2
    assert got == wide


def test_another_server_error_is_one_line(written: tuple[Stack, list[Cell]]) -> None:
    stack, _ = written
    stack.src_gateway.scan_errors.append(
        "java.io.IOException: region too busy\n\tat org.apache.hadoop.hbase.Foo(Foo.java:1)")
    with stack.client("src") as src, pytest.raises(Exception) as failed:
        list(src.scan("big"))
    assert str(failed.value).endswith("scan big: java.io.IOException: region too busy")


def test_repair_of_large_cells_writes_in_calls_within_the_budget(
        written: tuple[Stack, list[Cell]]) -> None:
    """A target missing everything but one changed large cell and one extra cell: the
    repair puts the rest in calls within the put budget (or of one cell) and deletes the
    extra version; the tables are then equal."""
    stack, cells = written
    fresh_target(stack, "big_r")
    big = next(c for c in cells if len(c.value) > BUDGET)
    with stack.client("dst") as dst:
        dst.put_cells("big_r", [big._replace(value=b"changed"),
                                big._replace(timestamp=big.timestamp + 99, value=b"extra")])
    stack.dst_gateway.call_sizes.clear()
    with stack.client("src") as src, stack.client("dst") as dst:
        fixed = repair_range(src, dst, KeyRange("big"), "big_r")
        assert (fixed.puts, fixed.deletes) == (len(cells), 1)
        assert compare_tables(src, dst, "big", "big_r").equal
    puts = [(size, n) for call, size, n in stack.dst_gateway.call_sizes if call == "putMultiple"]
    assert len(puts) > 10 and all(size <= BUDGET or n == 1 for size, n in puts), puts


def test_the_snapshot_command_fails_in_one_line_then_a_larger_timeout_copies(
        written: tuple[Stack, list[Cell]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``hbase-migrate snapshot`` against a source gateway that cannot return a large cell
    within ``[gateway] call_timeout``: exit 2, one line naming the range, the row reached
    and the setting. With the gateway healthy again and the timeout raised as the message
    says, the rerun copies and validates."""
    stack, _ = written
    config = tmp_path / "migration.toml"
    config.write_text(
        f'[migration]\nname = "big"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{stack.src.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{stack.dst.write_cluster_json()}"\n'
        '[[tables]]\nsource = "big"\ntarget = "big_cli"\n[spark]\nmaster = "in-process"\n'
        '[gateway]\nmax_result_bytes = "128KiB"\ncall_timeout = "1s"\ntimeout_retries = 1\n',
        encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["prepare", "--config", str(config)])
    assert done.value.code == 0
    capsys.readouterr()
    stack.src_gateway.stall_over_bytes = 100 * KiB
    try:
        message = fails(["snapshot", "--config", str(config)], capsys)
    finally:
        stack.src_gateway.stall_over_bytes = None
    # the planning pass over the first region, before any row came back
    assert "scan of table big range [-inf, 726f772d73) failed at its first row (nothing " \
        "read yet): 2 calls in a row timed out" in message, message
    assert "raise [gateway] call_timeout (now 1 s)" in message
    config.write_text(config.read_text(encoding="utf-8").replace(
        'call_timeout = "1s"', 'call_timeout = "30s"'), encoding="utf-8")
    for command in (["snapshot"], ["validate", "--recompare-wait", "0s"]):
        with pytest.raises(SystemExit) as done:
            main([*command, "--config", str(config)])
        assert done.value.code == 0, capsys.readouterr()


def test_cells_just_over_the_budget_then_a_wide_row_do_not_make_the_scan_flap(
        written: tuple[Stack, list[Cell]]) -> None:
    """Rows of three versions of 1.4 budgets, then a row of 100 small columns (the shape
    that made a scan reopen with larger, then smaller Results at the same place, forever,
    on real HBase): the scan reopens only after progress, and finishes."""
    stack, _ = written
    rng = random.Random(7)
    cells = [Cell(b"r%d" % r, b"d", b"doc", T + v, CellType.PUT, rng.randbytes(183 * KiB))
             for r in range(4) for v in range(3)]
    cells += [Cell(b"w", b"d", b"c%04d" % q, T, CellType.PUT, rng.randbytes(3 * KiB))
              for q in range(100)]
    got: list[Cell] = []
    with stack.client("src", max_put_bytes=4 * 1024 * KiB) as src:
        src.create_table(TableDescriptor("flap", (FamilyDescriptor(b"d", max_versions=3),)))
        src.put_cells("flap", cells)
        scan = threading.Thread(target=lambda: got.extend(c for p in src.scan("flap")
                                                          for c in p), daemon=True)
        scan.start()
        scan.join(60)
        assert not scan.is_alive(), "the scan did not finish"
        assert src.last_scan is not None and src.last_scan.reopens <= 4
    assert got == sorted(cells, key=cell_order)
