"""The cross-file order of a replay: the file where a region was before it moved is replayed
before the file where it opened again, whatever the servers' names, and each server's files
stay in the order it wrote them; the target ends with the cell written last."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from hbase_migrate.config import load_config
from hbase_migrate.replay.job import FileTask, ReplayJob
from hbase_migrate.replay.ordering import RegionEvents, order_tasks, read_region_events
from hbase_migrate.replay.plan import OnePassScan, first_edit_scan
from hbase_migrate.replay.run import run_replay
from hbase_migrate.wal import markers as M
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, wal_file_name
from hbase_migrate.wal.writer import WalOptions, write_wal
from tests.support.replay import (
    REGION,
    Clusters,
    HBaseRoot,
    T,
    entry_offsets,
    scan_all,
    source_endpoints,
    write_config,
)

OTHER = b"fedcba9876543210fedcba9876543210"
RS_A = ServerName("a-rs.example.com", 16020, T - 30_000)  # sorts first
RS_B = ServerName("b-rs.example.com", 16020, T - 30_000)
ROW, TS = b"row-1", T + 1  # the cell written on both sides of the move


def put(value: bytes, row: bytes = ROW) -> Cell:
    return Cell(row, b"d", b"q", TS, CellType.PUT, value)


def event(kind: int, table: str, seq: int, server: ServerName) -> Cell:
    d = M.RegionEventDescriptor(kind, table.encode(), REGION, seq,
                                server=server)
    return M.region_event_marker(d, T + seq)


def write(root: HBaseRoot, server: ServerName, created: int,
          entries: Sequence[tuple[int, bytes, Sequence[Cell]]], table: str) -> Path:
    """A closed, archived WAL of ``server``: entries (sequence id, region, cells)."""
    folder = root.folder(server, "archived")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / wal_file_name(server, created)
    write_wal(path, [(WalKey(region, table.encode(), seq, T + seq), cells)
                     for seq, region, cells in entries], WalOptions())
    return path


def moved(root: HBaseRoot, table: str) -> tuple[Path, Path]:
    """Region REGION moved from B to A: B's file (put "before", REGION_CLOSE) and A's
    later file (REGION_OPEN, the same cell and timestamp put "after")."""
    before = write(root, RS_B, T - 1_000, [
        (10, REGION, [put(b"before")]),
        (11, OTHER, [put(b"unrelated", b"row-2")]),
        (12, REGION, [event(M.REGION_CLOSE, table, 12, RS_B)])], table)
    after = write(root, RS_A, T, [
        (13, REGION, [event(M.REGION_OPEN, table, 13, RS_A)]),
        (14, REGION, [put(b"after")])], table)
    return before, after


def task(path: Path, server: ServerName, created: int, offset: int = 0) -> FileTask:
    return FileTask(str(path), str(server), created, path.stat().st_size, "archived", offset)


def paths(tasks: Sequence[FileTask]) -> list[str]:
    return [t.path for t in tasks]


def test_the_file_before_the_move_comes_first(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    before, after = moved(root, "t")
    unrelated = write(root, RS_A, T - 5_000, [(3, OTHER, [put(b"x", b"row-3")])], "t")
    tasks = [task(unrelated, RS_A, T - 5_000), task(after, RS_A, T),
             task(before, RS_B, T - 1_000)]  # the plan's (server, time, path) order
    assert [t.path for t in order_tasks(tasks)] == [str(unrelated), str(before), str(after)]
    assert read_region_events(tasks[1]) == RegionEvents({REGION: 13}, {REGION: 13})
    assert read_region_events(tasks[2]) == RegionEvents({REGION: 10, OTHER: 11}, {})


def test_only_the_part_a_task_replays_counts(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    before, after = moved(root, "t")
    close_at = entry_offsets(before)[2][0]  # resumes at the close: R's puts already replayed
    resumed = FileTask(str(before), str(RS_B), T - 1_000, None, "archived", close_at)
    assert read_region_events(resumed) == RegionEvents({REGION: 12}, {})
    assert order_tasks([task(after, RS_A, T), resumed])[0].path == resumed.path
    past = FileTask(str(before), str(RS_B), T - 1_000, None, "archived",
                    before.stat().st_size)  # nothing left of R in it: no constraint
    assert read_region_events(past) == RegionEvents({}, {})
    first = task(after, RS_A, T)
    assert paths(order_tasks([first, past])) == paths([first, past])


def test_an_unreadable_file_keeps_its_place(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    _, after = moved(root, "t")
    missing = FileTask(str(tmp_path / "gone"), str(RS_B), T, None, "archived")
    assert read_region_events(missing) is None
    tasks = [missing, task(after, RS_A, T)]
    assert paths(order_tasks(tasks)) == paths(tasks)


def test_a_cycle_keeps_the_plan_order_and_warns(caplog: pytest.LogCaptureFixture) -> None:
    x, y, z = (FileTask(p, "s", 0, None, None) for p in ("x", "y", "z"))
    events = {"x": RegionEvents({REGION: 1}, {REGION: 21}),  # R moved back to x's server
              "y": RegionEvents({REGION: 11}, {REGION: 11}),
              "z": RegionEvents({OTHER: 5}, {})}
    with caplog.at_level(logging.WARNING, "hbase_migrate.replay.ordering"):
        assert paths(order_tasks([z, y, x], lambda t: events[t.path])) == ["z", "y", "x"]
    assert "cannot be ordered" in caplog.text and "x" in caplog.text


def test_the_order_is_otherwise_stable() -> None:
    names = ["p", "q", "r", "s", "t"]
    tasks = [FileTask(n, "s", 0, None, None) for n in names]
    events = {n: RegionEvents({bytes([i]): 1}, {}) for i, n in enumerate(names)}
    events["s"] = RegionEvents({REGION: 1}, {})  # R was on s, then opened on q
    events["q"] = RegionEvents({REGION: 7}, {REGION: 7})
    ordered = order_tasks(tasks, lambda t: events[t.path])
    assert [t.path for t in ordered] == ["p", "r", "s", "q", "t"]


def test_a_chain_keeps_its_order_when_a_move_holds_its_first_file_back() -> None:
    # R moved from B to A and was written on A before and after A rolled: A's second file
    # must not overtake its first while the first waits for B's file (the same cell and
    # timestamp written in both of A's files: the second one's is the later write)
    a1, a2 = (f"/hbase/oldWALs/{wal_file_name(RS_A, T + i)}" for i in (0, 1))
    b1 = f"/hbase/oldWALs/{wal_file_name(RS_B, T - 1_000)}"
    events = {a1: RegionEvents({REGION: 13}, {REGION: 13}),
              a2: RegionEvents({REGION: 20}, {}),
              b1: RegionEvents({REGION: 10}, {})}
    tasks = [FileTask(p, "s", 0, None, "archived") for p in (a1, a2, b1)]  # the plan's order
    ordered = order_tasks(tasks, lambda t: events[t.path])
    assert [t.path for t in ordered] == [b1, a1, a2]


@pytest.mark.integration
@pytest.mark.parametrize("end", [None, T + 60_000], ids=["catch-up", "window"])
def test_a_replay_ends_with_the_cell_written_after_the_move(
        clusters: Clusters, table: str, tmp_path: Path, end: int | None) -> None:
    clusters.create(table)
    root = HBaseRoot(tmp_path / "hbase")
    before, after = moved(root, table)
    config = write_config(tmp_path, target=clusters.dst_endpoints, tables=[table],
                          source=source_endpoints("localhost:9090", root=root.root))
    job = ReplayJob.from_spec(load_config(config), start=T - 60_000, end=end)
    summary = run_replay(job)
    assert summary.exit_code == 0, summary.to_json()
    assert scan_all(clusters.dst, table) == [
        (ROW, b"d", b"q", TS, b"after"), (b"row-2", b"d", b"q", TS, b"unrelated")]
    assert [o.path for o in summary.outcomes] == [str(before), str(after)]


@pytest.mark.parametrize("window", [(T - 60_000, T + 60_000), (T + 12, T + 60_000),
                                    (T + 100, T + 200), (T - 60_000, T - 50_000)])
def test_one_planning_read_answers_as_the_two_scans_do(tmp_path: Path,
                                                       window: tuple[int, int]) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    files = [*moved(root, "t"), write(root, RS_A, T - 5_000, [], "t")]
    damaged = write(root, RS_B, T - 9_000, [(1, REGION, [put(b"x")]), (2, REGION, [put(b"y")])],
                    "t")
    offset = entry_offsets(damaged)[1][0]
    data = bytearray(damaged.read_bytes())
    data[offset] = 0x7F  # the second entry's length prefix now points past the file's end
    damaged.write_bytes(bytes(data))
    one = OnePassScan()
    start, end = window
    for path in [*files, damaged]:
        try:
            expected = first_edit_scan(str(path), start, end, end + 1_000)
        except Exception as exc:  # the same error, from both
            with pytest.raises(type(exc)):
                one.scan(str(path), start, end, end + 1_000)
            continue
        assert one.scan(str(path), start, end, end + 1_000) == expected
        t = task(path, RS_A, T)
        assert one.region_events(t) == read_region_events(t)
