"""The crash harness's invariants and redo counts on ledgers and WAL folders made by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepRecord, StepStatus, WalStatus
from hbase_migrate.soak.crash_checks import (
    LedgerView,
    RangeCopy,
    SourceWal,
    WalEdit,
    WalRow,
    cdc_duplicates,
    duplicate_rows,
    leftover_steps,
    list_source_wals,
    missing_cdc_edits,
    missing_wal_files,
    read_view,
    redo,
    resent_acknowledged,
    unfinished_wal_files,
    wal_edits,
)
from hbase_migrate.wal.model import METAFAMILY, Cell, CellType
from minihbase.webhdfs import WebHdfsServer
from tests.support.replay import RS1, RS2, HBaseRoot, T, entry_offsets

NAME = "crash"
OLD = "hdfs:/hbase/oldWALs"


def _put(row: bytes, ts: int) -> list[Cell]:
    return [Cell(row, b"l", b"prev", ts, CellType.PUT, b"x")]


def _step(id_: int, kind: str, status: StepStatus, pid: int | None = None,
          started: int = T) -> StepRecord:
    return StepRecord(id_, 1, kind, None, None, None, started,
                      None if status is StepStatus.RUNNING else started + 1, status,
                      {} if pid is None else {"pid": pid}, None, "here")


def test_the_source_wal_files_are_read_on_their_own(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    live = root.write(RS1, T, "lists", [_put(b"a", T + 5), _put(b"b", T + 9)], state="live")
    archived = root.write(RS2, T - 9000, "lists", [_put(b"c", T - 100)], write_time=T + 70)
    other = root.write(RS2, T + 1000, "other", [_put(b"d", T)], state="splitting")
    found = {Path(w.path).name: w for w in list_source_wals(tmp_path / "hbase", [b"lists"])}
    # write times are the entries' (write_time + index), not the cells' timestamps
    assert found[live.name] == SourceWal(str(live), T, T + 1)
    assert found[archived.name] == SourceWal(str(archived), T - 9000, T + 70)
    assert found[other.name].newest_edit is None and found[other.name].name_time == T + 1000
    assert len(found) == 3


def test_a_real_hbase_s_wal_files_are_read_over_webhdfs(tmp_path: Path) -> None:
    """A real HBase's WALs live on HDFS (``soak-crash --stack real``): the same folder read
    through WebHDFS gives the same files, times and edits as read on disk."""
    root = HBaseRoot(tmp_path / "hbase")
    live = root.write(RS1, T, "lists", [_put(b"a", T + 5), _put(b"b", T + 9)], state="live")
    root.write(RS2, T - 9000, "lists", [_put(b"c", T - 100)], write_time=T + 70)
    root.write(RS2, T + 1000, "other", [_put(b"d", T)], state="splitting")
    with WebHdfsServer(tmp_path / "hbase") as server:
        url = f"webhdfs://127.0.0.1:{server.port}/hbase"
        over_http = list_source_wals(url, [b"lists"])
        edits = wal_edits(url, [b"lists"], 0)
    on_disk = list_source_wals(tmp_path / "hbase", [b"lists"])
    assert sorted((Path(w.path).name, w.name_time, w.newest_edit) for w in over_http) == \
        sorted((Path(w.path).name, w.name_time, w.newest_edit) for w in on_disk)
    assert len(over_http) == 3 and all(w.path.startswith(f"{url}/") for w in over_http)
    assert any(w.path.endswith(f"/{live.name}") and w.newest_edit == T + 1 for w in over_http)
    assert edits == wal_edits(tmp_path / "hbase", [b"lists"], 0) and len(edits) == 3


def test_a_file_with_edits_after_t0_named_before_the_listing_must_be_in_the_ledger() -> None:
    view = LedgerView(T, T - 60_000, wal={
        f"{OLD}/rs1.1000": WalRow(f"{OLD}/rs1.1000", WalStatus.REPLAYED, 90, 90, T)})
    on_source = [
        SourceWal("/x/oldWALs/rs1.1000", 1000, T),  # in the ledger (under its archived path)
        SourceWal("/x/WALs/rs2/rs2.2000", 2000, T),  # missing
        SourceWal("/x/oldWALs/rs3.3000", 3000, T - 200_000),  # edits only before T0 - margin
        SourceWal("/x/WALs/rs1/rs1.9000", T + 5, T + 5),  # named after the listing began
        SourceWal("/x/WALs/rs1/rs1.meta.4000", 4000, None),  # no edit of the tables
    ]
    missing = missing_wal_files(view, on_source, T - 120_000, T)
    assert missing == [f"/x/WALs/rs2/rs2.2000: edits up to {T} (since {T - 120_000}), not in "
                       "the ledger"]
    assert missing_wal_files(view, on_source[:1], T - 120_000, T) == []


def test_at_the_end_only_finished_files_and_live_files_read_to_their_end_pass() -> None:
    rows = [WalRow("a", WalStatus.REPLAYED, 10, 10, T), WalRow("b", WalStatus.SKIPPED, 0, 8, T),
            WalRow("c", WalStatus.GAP, 3, 9, T), WalRow("d", WalStatus.REPLAYING, 50, 50, T),
            WalRow("e", WalStatus.REPLAYING, 40, 50, T), WalRow("f", WalStatus.SEEN, 0, 0, T),
            WalRow("g", WalStatus.FAILED, 7, 20, T)]
    view = LedgerView(T, T, wal={r.path: r for r in rows})
    assert unfinished_wal_files(view) == ["e: replaying at offset 40 of 50",
                                          "f: seen at offset 0 of 0",
                                          "g: failed at offset 7 of 20"]


def test_a_running_step_counts_only_while_its_process_lives() -> None:
    steps = [_step(1, "snapshot", StepStatus.RUNNING, pid=4242),  # the killed copy
             _step(2, "replay", StepStatus.RUNNING, pid=5151),  # the follow, alive
             _step(3, "validate", StepStatus.FAILED, pid=6161),
             _step(4, "replay", StepStatus.RUNNING),  # no pid recorded: allowed by id
             _step(5, "validate", StepStatus.RUNNING)]  # no pid, not allowed
    view = LedgerView(T, T, steps=steps)
    found = leftover_steps(view, [5151], running_allowed=[4])
    assert found == [f"step #1 snapshot running since {T} (pid 4242, gone)",
                     f"step #5 validate running since {T}"]
    assert leftover_steps(LedgerView(T, T, steps=steps[1:4]), [5151], [4]) == []


def test_duplicate_rows_in_a_ledger(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with Ledger.open(url) as ledger:
        mid = ledger.ensure_migration(NAME, "src", "dst", []).id
        # one file listed under its live path and, not merged, under its archived path
        ledger.record_wal_seen(mid, "source", "rs1", "hdfs:/hbase/WALs/rs1/rs1.1000", 10, 1000)
        ledger.record_wal_seen(mid, "source", "rs1", f"{OLD}/rs1.1000", 10, 1000)
        ledger.record_wal_seen(mid, "source", "rs1", f"{OLD}/rs1.2000", 10, 2000)
        ledger.record_wal_seen(mid, "cdc", "rs1", f"{OLD}/rs1.2000", 10, 2000)  # another stream
        ledger.plan_key_ranges(mid, "lists", [(b"", b"m", 5), (b"m", b"", 5)])
        view = read_view(ledger, NAME, T)
        assert read_view(ledger, "none", T) == LedgerView(T)
    assert sorted(view.wal) == ["hdfs:/hbase/WALs/rs1/rs1.1000", f"{OLD}/rs1.1000",
                                f"{OLD}/rs1.2000"]
    assert [k for k, _ in view.ranges] == [("lists", b"", b"m"), ("lists", b"m", b"")]
    assert duplicate_rows(view) == ["WAL file rs1.1000: 2 rows"]
    # the same range twice in one step's verdicts and checksums
    view.validated = [(7, ("lists", b"", b"m")), (7, ("lists", b"", b"m")),
                      (8, ("lists", b"", b"m"))]
    view.checksums = {7: [(("lists", b"m", b""), None), (("lists", b"m", b""), 3)]}
    assert duplicate_rows(view)[1:] == ["step #7: 2 verdicts on range lists:-6d",
                                        "step #7: 2 checksums of range lists:6d-"]


def _wal(path: str, status: WalStatus, offset: int, size: int, at: int) -> WalRow:
    return WalRow(path, status, offset, size, at)


def test_the_work_a_killed_replay_leaves_to_its_rerun() -> None:
    before = LedgerView(T, wal={"a": _wal("a", WalStatus.REPLAYING, 100, 300, T - 5)})
    killed = LedgerView(T + 50, wal={
        "a": _wal("a", WalStatus.REPLAYING, 250, 400, T + 20),  # 150 acknowledged, 150 left
        "b": _wal("b", WalStatus.REPLAYED, 80, 80, T + 30),  # done by the killed run
        "c": _wal("c", WalStatus.SEEN, 0, 60, T + 40)})  # listed, not begun
    assert redo(before, killed, killed, [9], "wal") == {
        "wal_files_in_flight": 2, "wal_bytes_acknowledged": 150 + 80,
        "wal_bytes_unacknowledged": 150 + 60}


def test_the_work_a_killed_copy_leaves_and_a_range_copied_again() -> None:
    r1, r2, r3 = (("lists", b"", b"g"), ("lists", b"g", b"p"), ("lists", b"p", b""))
    before = LedgerView(T)
    killed = LedgerView(T + 9, ranges=[(r1, RangeCopy(4, T + 1)), (r2, RangeCopy(None, None)),
                                       (r3, RangeCopy(4, T + 2))])
    after = LedgerView(T + 20, ranges=[(r1, RangeCopy(4, T + 1)), (r2, RangeCopy(6, T + 15)),
                                       (r3, RangeCopy(6, T + 16))])
    assert redo(before, killed, after, [4], "copy") == {
        "ranges_copied_kept": 2, "ranges_left_to_rerun": 1, "ranges_recopied": 1}


def test_the_ranges_a_killed_validation_had_checked() -> None:
    r1, r2, r3 = (("lists", b"", b"g"), ("lists", b"g", b"p"), ("lists", b"p", b""))
    killed = LedgerView(T + 9, checksums={5: [(r1, None), (r2, None)]},
                        repairs=[(5, r2)])
    after = LedgerView(T + 20, checksums={5: [(r1, None), (r2, None)],
                                          8: [(r1, 5), (r2, None), (r3, None)]},
                       repairs=[(5, r2), (8, r2), (8, r3)])
    assert redo(LedgerView(T), killed, after, [5], "validation") == {
        "ranges_checked_kept": 1, "ranges_rechecked": 1, "ranges_repaired_again": 1}
    with pytest.raises(ValueError, match="kind 'disk'"):
        redo(killed, killed, after, [5], "disk")


def test_the_edits_a_cdc_topic_must_hold_are_read_from_the_wal_files(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    batch = [*_put(b"a", T), *_put(b"b\x00", T), *_put(b"a", T + 1)]
    marker = [Cell(b"c", METAFAMILY, b"HBASE::FLUSH", T, CellType.PUT, b"")]
    archived = root.write(RS1, T, "lists", [_put(b"a", T), batch, marker], write_time=T + 10)
    live = root.write(RS2, T, "lists", [_put(b"z", T)], state="live", write_time=T + 5)
    root.write(RS2, T + 1, "other", [_put(b"y", T)], state="splitting", write_time=T + 50)
    found = wal_edits(tmp_path / "hbase", [b"lists"], T + 11)
    first, second, _ = (offset for offset, _ in entry_offsets(archived))
    # write times T+10, T+11, T+12 (the flush marker alone: no edit); the live file's T+5
    # is before ``since``; the other table is not migrated
    assert found == {
        (archived.name, second, "a"): WalEdit(archived.name, second, "a", 2, T + 11),
        (archived.name, second, "b\\x00"): WalEdit(archived.name, second, "b\\x00", 2,
                                                   T + 11)}
    assert first < second and live.exists()
    assert len(wal_edits(tmp_path / "hbase", [b"lists"], 0)) == 4


def test_a_cdc_topic_must_hold_each_edit_written_before_the_run_with_its_sequence() -> None:
    edits = {e.id: e for e in (WalEdit("rs1.1", 10, "a", 7, T), WalEdit("rs1.1", 40, "b", 8, T),
                               WalEdit("rs1.1", 90, "c", 9, T + 500))}

    def message(file: str, offset: int, row: str, sequence: int) -> dict[str, object]:
        return {"file": file, "offset": offset, "row": row, "sequence": sequence}

    sent = [message("rs1.1", 10, "a", 7), message("rs1.1", 10, "a", 7),
            message("rs1.1", 40, "b", 8)]
    # c was written after the run began: not yet owed; a twice is at least once
    assert missing_cdc_edits(edits, sent, T + 500) == []
    assert cdc_duplicates(sent) == 1
    assert missing_cdc_edits(edits, sent, T + 501) == [
        f"rs1.1@90 row c (sequence 9, written {T + 500}): not in the CDC topic"]
    wrong = [*sent[:2], message("rs1.1", 40, "b", 3)]
    assert missing_cdc_edits(edits, wrong, T + 1) == [
        "rs1.1@40 row b: sequence ids [3] in the topic, 8 in the WAL"]
    # a message of a file no longer on the source is not judged
    assert missing_cdc_edits(edits, [*sent, message("gone.1", 5, "x", 1)], T + 1) == []


def test_a_rerun_may_send_again_only_past_the_acknowledged_offsets() -> None:
    acknowledged = {"rs1.1": 100, "rs2.1": 0}
    again = [("rs1.1", 100, "a"), ("rs2.1", 0, "b"), ("rs3.1", 5, "c"), ("rs1.1", 99, "d")]
    assert resent_acknowledged(again, acknowledged) == [
        "rs1.1@99 row d: sent again, the ledger had it acknowledged (offset 100 reached)"]
