"""The ledger API on SQLite and PostgreSQL: migrations, steps, the WAL-file state machine,
gaps and validations."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.errors import (
    LedgerError,
    MigrationMismatchError,
    MigrationStateError,
    WalStateError,
)
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import (
    GateVerdict,
    Provenance,
    StepStatus,
    TableMapping,
    Verdict,
    WalStatus,
)
from hbase_migrate.config import load_config

ORDERS = (TableMapping("orders", "orders", ("d",)), TableMapping("ns:items", "items"))
WAL = "/hbase/oldWALs/rs1%2C16020%2C1700000000000.1700000000000"


def progress(ledger: Ledger, mid: int, offset: int, *, closed: bool = False,
             path: str = WAL, write_time: int | None = None) -> None:
    """Progress whose counters are derived from the offset, so that a row mixing two
    reports is visible."""
    ledger.record_wal_progress(
        mid, "source", path, offset_reached=offset, entries=offset // 10,
        cells_by_type={"Put": offset // 10, "DeleteColumn": 1}, markers={"BULK_LOAD": 0},
        approximated_deletes=0, last_write_time=write_time or 1_700_000_000_000 + offset,
        closed=closed)


@pytest.fixture
def mid(ledger: Ledger) -> int:
    migration = ledger.ensure_migration("orders", "src", "dst", ORDERS, now=1000)
    ledger.record_wal_seen(migration.id, "source", "rs1", WAL, 100, 1_700_000_000_000, now=2000)
    return migration.id


def status_of(ledger: Ledger, mid: int, path: str = WAL) -> WalStatus:
    record = ledger.wal_file(mid, "source", path)
    assert record is not None
    return record.status


def test_ensure_migration_is_idempotent_and_refuses_another_definition(ledger: Ledger) -> None:
    first = ledger.ensure_migration("orders", "src", "dst", ORDERS, now=1000)
    again = ledger.ensure_migration("orders", "src", "dst", tuple(reversed(ORDERS)), now=5000)
    assert again == first
    assert first.tables == tuple(sorted(ORDERS, key=lambda t: t.source))
    assert (first.state, first.created_at, first.watermark) == ("created", 1000, None)
    with pytest.raises(MigrationMismatchError, match=r"'orders'.*target 'dst' \(this "
                                                     r"definition: 'other'\)"):
        ledger.ensure_migration("orders", "src", "other", ORDERS)
    with pytest.raises(MigrationMismatchError, match="tables"):
        ledger.ensure_migration("orders", "src", "dst", ORDERS[:1])
    assert [m.name for m in ledger.migrations()] == ["orders"]


def test_update_migration(ledger: Ledger, mid: int) -> None:
    ledger.update_migration(mid, state="replaying", watermark=1_700_000_000_000, now=3000)
    record = ledger.migration("orders")
    assert record is not None
    assert (record.state, record.watermark, record.updated_at) == (
        "replaying", 1_700_000_000_000, 3000)
    with pytest.raises(LedgerError, match="no migration with id 999"):
        ledger.update_migration(999, state="validated")
    with pytest.raises(MigrationStateError, match="unknown migration state 'x'"):
        ledger.update_migration(mid, state="x")


def test_the_migration_state_moves_forward_only(ledger: Ledger, mid: int) -> None:
    def state() -> str:
        record = ledger.migration("orders")
        assert record is not None
        return record.state

    ledger.update_migration(mid, state="copying")
    ledger.update_migration(mid, state="copying")  # staying put is fine
    for back in ("created", "schema_ready"):
        with pytest.raises(MigrationStateError, match=f"is copying: it cannot move back to {back}"):
            ledger.update_migration(mid, state=back)
    assert state() == "copying"
    ledger.update_migration(mid, state="failed")  # from anywhere
    ledger.update_migration(mid, state="copying")  # a retry leaves failed
    ledger.update_migration(mid, state="cut_over")
    for other in ("validated", "failed"):
        with pytest.raises(MigrationStateError):
            ledger.update_migration(mid, state=other)
    assert state() == "cut_over"


def test_steps_and_the_step_context(ledger: Ledger, mid: int) -> None:
    sid = ledger.start_step(mid, "copy", dag_id="migrate", run_id="r1", task_id="copy", now=10)
    ledger.finish_step(sid, "succeeded", {"rows": 5}, now=20)
    with pytest.raises(LedgerError, match="already ended"):
        ledger.finish_step(sid, "failed")
    with ledger.step(mid, "replay", Provenance("follow", "r2", "replay")) as step:
        step.metrics["files"] = 2
    with pytest.raises(ZeroDivisionError), ledger.step(mid, "validate") as step:
        step.metrics["ranges"] = 1
        _ = 1 / 0
    with ledger.step(mid, "cutover-check") as step:
        step.metrics["verdict"] = GateVerdict.NO_GO
        step.fail("lag 5m above 1m")
    copy, replay, validate, gate = ledger.steps(mid)
    assert (copy.kind, copy.dag_id, copy.run_id, copy.task_id) == ("copy", "migrate", "r1",
                                                                   "copy")
    assert (copy.started_at, copy.ended_at, copy.status, copy.metrics) == (
        10, 20, StepStatus.SUCCEEDED, {"rows": 5})
    assert (replay.status, replay.metrics, replay.error) == (StepStatus.SUCCEEDED,
                                                             {"files": 2}, None)
    assert validate.status is StepStatus.FAILED
    assert validate.error == "ZeroDivisionError: division by zero"
    assert validate.metrics == {"ranges": 1}
    assert (replay.dag_id, replay.run_id, replay.task_id) == ("follow", "r2", "replay")
    assert (gate.status, gate.error, gate.metrics) == (StepStatus.FAILED, "lag 5m above 1m",
                                                       {"verdict": "no-go"})
    assert validate.ended_at is not None


def test_wal_seen_upserts_one_row(ledger: Ledger, mid: int) -> None:
    first = ledger.record_wal_seen(mid, "source", "rs1", WAL, 100, 1_700_000_000_000, now=2000)
    again = ledger.record_wal_seen(mid, "source", "rs1", WAL, 150, 1_700_000_000_000, now=4000)
    stale = ledger.record_wal_seen(mid, "source", "rs1", WAL, 120, 1_700_000_000_000, now=3000)
    assert first == again == stale
    (record,) = ledger.wal_files(mid)
    assert (record.size, record.first_seen, record.last_seen, record.status) == (
        150, 2000, 4000, WalStatus.SEEN)
    ledger.record_wal_seen(mid, "target", "rs1", WAL, 1, None, now=2000)
    assert len(ledger.wal_files(mid)) == 2
    assert len(ledger.wal_files(mid, "source")) == 1


def test_status_moves_forward_only(ledger: Ledger, mid: int) -> None:
    ledger.mark_wal_replaying(mid, "source", WAL)
    progress(ledger, mid, 100)
    assert status_of(ledger, mid) is WalStatus.REPLAYING
    ledger.mark_wal_failed(mid, "source", WAL, "target refused a put")
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.status, record.offset_reached, record.error) == (
        WalStatus.FAILED, 100, "target refused a put")
    ledger.mark_wal_replaying(mid, "source", WAL)  # a retry
    progress(ledger, mid, 300, closed=True)
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.status, record.offset_reached, record.entries, record.error) == (
        WalStatus.REPLAYED, 300, 30, None)
    assert record.cells_by_type == {"Put": 30, "DeleteColumn": 1}
    assert record.last_write_time == 1_700_000_000_300
    for attempt in (lambda: ledger.mark_wal_replaying(mid, "source", WAL),
                    lambda: ledger.mark_wal_failed(mid, "source", WAL, "x"),
                    lambda: ledger.mark_wal_skipped(mid, "source", WAL, "x"),
                    lambda: progress(ledger, mid, 400)):
        with pytest.raises(WalStateError, match="status replayed is final"):
            attempt()
    progress(ledger, mid, 300, closed=True)  # the same final record again: accepted
    with pytest.raises(WalStateError, match="final"):
        progress(ledger, mid, 300, closed=False)
    assert status_of(ledger, mid) is WalStatus.REPLAYED


def test_offset_never_decreases(ledger: Ledger, mid: int) -> None:
    progress(ledger, mid, 500)
    progress(ledger, mid, 500)  # the same offset again is fine
    with pytest.raises(WalStateError, match=r"already 500 and offsets never decrease") as info:
        progress(ledger, mid, 499)
    assert WAL in str(info.value)
    ledger.mark_wal_failed(mid, "source", WAL, "boom")
    with pytest.raises(WalStateError, match="never decrease"):
        progress(ledger, mid, 10)
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.offset_reached, record.entries, record.status) == (500, 50,
                                                                       WalStatus.FAILED)


def test_unknown_wal_file_is_refused(ledger: Ledger, mid: int) -> None:
    with pytest.raises(WalStateError, match=r"/nope \(source, migration #\d+\) is not in"):
        progress(ledger, mid, 10, path="/nope")


def test_skipped_file_may_be_selected_later(ledger: Ledger, mid: int) -> None:
    ledger.mark_wal_skipped(mid, "source", WAL, "name time before the window")
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.status, record.error) == (WalStatus.SKIPPED, "name time before the window")
    progress(ledger, mid, 10)
    assert status_of(ledger, mid) is WalStatus.REPLAYING
    with pytest.raises(WalStateError, match="cannot mark skipped from status replaying"):
        ledger.mark_wal_skipped(mid, "source", WAL, "x")


def test_vanished_before_replay_is_a_gap(ledger: Ledger, mid: int) -> None:
    progress(ledger, mid, 200, write_time=1_700_000_050_000)
    gap_id = ledger.mark_wal_vanished(mid, "source", WAL, now=1_700_000_900_000)
    assert gap_id is not None
    assert ledger.mark_wal_vanished(mid, "source", WAL, now=1_700_000_999_999) == gap_id
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.status, record.vanished_at) == (WalStatus.GAP, 1_700_000_900_000)
    (gap,) = ledger.gaps(mid)
    assert (gap.id, gap.server, gap.path, gap.first_time, gap.last_time, gap.detected_at) == (
        gap_id, "rs1", WAL, 1_700_000_050_000, 1_700_000_900_000, 1_700_000_900_000)
    assert "re-copy" in gap.remedy
    with pytest.raises(WalStateError, match="status gap is final"):
        progress(ledger, mid, 300)
    ledger.resolve_gap(gap_id, now=1_700_001_000_000)
    assert ledger.gaps(mid) == []
    (resolved,) = ledger.gaps(mid, include_resolved=True)
    assert resolved.resolved_at == 1_700_001_000_000


def test_vanished_without_progress_spans_from_the_name_time(ledger: Ledger, mid: int) -> None:
    ledger.mark_wal_vanished(mid, "source", WAL, now=1_700_000_700_000, remedy="re-copy r1")
    (gap,) = ledger.gaps(mid)
    assert (gap.first_time, gap.last_time, gap.remedy) == (
        1_700_000_000_000, 1_700_000_700_000, "re-copy r1")


def test_vanished_after_replay_is_no_gap(ledger: Ledger, mid: int) -> None:
    progress(ledger, mid, 200, closed=True)
    assert ledger.mark_wal_vanished(mid, "source", WAL, now=9000) is None
    record = ledger.wal_file(mid, "source", WAL)
    assert record is not None
    assert (record.status, record.vanished_at) == (WalStatus.REPLAYED, 9000)
    assert ledger.gaps(mid) == []


def test_moved_file_keeps_its_progress(ledger: Ledger, mid: int) -> None:
    live = "/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000001"
    archived = "/hbase/oldWALs/rs1%2C16020%2C1.1700000000001"
    ledger.record_wal_seen(mid, "source", "rs1", live, 10, 1_700_000_000_001, now=2000)
    progress(ledger, mid, 80, path=live)
    ledger.record_wal_seen(mid, "source", "rs1", archived, 90, 1_700_000_000_001, now=3000)
    ledger.record_wal_moved(mid, "source", live, archived, now=3000)
    ledger.record_wal_moved(mid, "source", live, archived, now=3001)  # a re-run: no change
    assert ledger.wal_file(mid, "source", live) is None
    record = ledger.wal_file(mid, "source", archived)
    assert record is not None
    assert (record.offset_reached, record.status, record.first_seen) == (
        80, WalStatus.REPLAYING, 2000)
    with pytest.raises(WalStateError, match="is not in the ledger"):
        ledger.record_wal_moved(mid, "source", "/missing", "/elsewhere")


def test_validations_and_the_last_run(ledger: Ledger, mid: int) -> None:
    first = ledger.start_step(mid, "validate", now=10)
    ledger.record_validation(mid, first, "orders", b"", b"\x00m", source_rows=5, target_rows=4,
                             source_cells=9, target_cells=8, source_digest="aa",
                             target_digest="bb", verdict="mismatch", now=100)
    second = ledger.start_step(mid, "validate", now=200)
    a = ledger.record_validation(mid, second, "orders", b"", b"\x00m", source_rows=5,
                                 target_rows=5, source_cells=9, target_cells=9,
                                 source_digest="aa", target_digest="aa",
                                 verdict=Verdict.MATCH, now=300)
    b = ledger.record_validation(mid, second, "orders", b"\x00m", b"", source_rows=1,
                                 target_rows=2, source_cells=1, target_cells=2,
                                 source_digest="cc", target_digest="dd",
                                 verdict=Verdict.MISMATCH, now=301)
    ledger.record_recompare(b, "match", now=400)
    last = ledger.last_validations(mid)
    assert [v.id for v in last] == [a, b]
    assert (last[0].range_start, last[0].range_end) == (b"", b"\x00m")
    assert (last[1].verdict, last[1].recompare_verdict, last[1].final_verdict,
            last[1].recompared_at) == (Verdict.MISMATCH, Verdict.MATCH, Verdict.MATCH, 400)
    assert len(ledger.validations(mid)) == 3
    with pytest.raises(ValueError, match="'same'"):
        ledger.record_validation(mid, None, "orders", b"", b"", source_rows=None,
                                 target_rows=None, source_cells=None, target_cells=None,
                                 source_digest=None, target_digest=None, verdict="same")


def test_ensure_spec_uses_the_cluster_identities(ledger: Ledger, tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    (tmp_path / "src.json").write_text('{"name": "s", "thrift": "a:9090"}')
    path.write_text('[migration]\nname = "orders"\n[source]\ncluster_json = "src.json"\n'
                    '[target]\nthrift = "b:9090"\n[[tables]]\nsource = "orders"\n'
                    'families = ["d"]\n')
    record = ledger.ensure_spec(load_config(path), now=5)
    assert (record.source, record.target, record.tables) == (
        "thrift:a:9090", "thrift:b:9090", (TableMapping("orders", "orders", ("d",)),))
    with ledger.step(record.id, "snapshot"):  # copied: the definition is kept from now on
        pass
    path.write_text(path.read_text().replace("b:9090", "c:9090"))
    with pytest.raises(MigrationMismatchError, match="target 'thrift:b:9090'"):
        ledger.ensure_spec(load_config(path))


def test_snapshot_files_count_copies_and_keep_the_newest_check(ledger: Ledger, mid: int) -> None:
    path = "archive/data/default/orders/r1/d/f1"
    checksum = {"method": "sha256", "source": "aa", "target": "aa"}
    ledger.record_snapshot_file(mid, "s1", path, source_path="data/default/orders/r1/d/f1",
                                size=10, status="copied", checksum=checksum, step_id=None,
                                now=1000)
    ledger.record_snapshot_file(mid, "s1", path, source_path="archive/" + path[8:], size=10,
                                status="kept", checksum=checksum, step_id=None, now=2000)
    ledger.record_snapshot_file(mid, "s1", path, source_path="archive/" + path[8:], size=10,
                                status="copied", checksum=checksum,
                                step_id=None, now=3000)
    ledger.record_snapshot_file(mid, "s2", path, source_path="x", size=1, status="copied",
                                checksum=checksum, step_id=None, now=4000)
    first, other = ledger.snapshot_files(mid)
    assert (first.snapshot, first.status, first.copies, first.recorded_at, first.source_path,
            first.checksum) == ("s1", "copied", 2, 3000, "archive/" + path[8:], checksum)
    assert (other.snapshot, other.copies) == ("s2", 1)
    assert [r.path for r in ledger.snapshot_files(mid, "s2")] == [path]
