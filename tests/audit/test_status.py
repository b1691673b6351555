"""The status report against hand-computed expectations, and the ``status`` and ``ledger``
commands end to end (exit codes, JSON, text)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import DEFAULT_GAP_REMEDY, Ledger, now_ms
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.audit.schema import latest_version
from hbase_migrate.audit.status import compute_status
from hbase_migrate.cli import main
from hbase_migrate.timeutil import format_time, human_duration

T = 1_700_000_000_000
NOW = T + 600_000
HERE = socket.gethostname()  # where the command-line steps ran
OLD = "/hbase/oldWALs/"
LIVE = "/hbase/WALs/"


def seen(ledger: Ledger, mid: int, server: str, path: str, first_seen: int,
         cluster: str = "source") -> None:
    ledger.record_wal_seen(mid, cluster, server, path, 1000, T, now=first_seen)


def replay(ledger: Ledger, mid: int, path: str, offset: int, write_time: int,
           closed: bool) -> None:
    ledger.record_wal_progress(mid, "source", path, offset_reached=offset, entries=1,
                               cells_by_type={"Put": 1}, markers={}, approximated_deletes=0,
                               last_write_time=write_time, closed=closed)


def populate(ledger: Ledger) -> None:
    """rs1: replayed up to T+250s; rs2: nothing replayed, one archived file near the TTL;
    rs3: a gap after replaying up to T+50s; a target-side file that status ignores."""
    mid = ledger.ensure_migration("orders", "src", "dst", [TableMapping("orders", "orders")],
                                  now=T).id
    ledger.update_migration(mid, state="replaying", watermark=T - 1000)
    seen(ledger, mid, "rs1", LIVE + "rs1/f1", NOW - 400_000)
    replay(ledger, mid, LIVE + "rs1/f1", 10, T + 100_000, closed=False)
    seen(ledger, mid, "rs1", OLD + "f2", NOW - 590_000)
    replay(ledger, mid, OLD + "f2", 10, T + 250_000, closed=True)
    seen(ledger, mid, "rs2", OLD + "f3", NOW - 500_000)  # 500s >= 0.8 * 600s: warn
    seen(ledger, mid, "rs2", OLD + "f4", NOW - 100_000)  # young: no warning
    seen(ledger, mid, "rs2", LIVE + "rs2/f5", NOW - 590_000)  # old but live: no warning
    ledger.mark_wal_failed(mid, "source", LIVE + "rs2/f5", "timeout")
    seen(ledger, mid, "rs3", LIVE + "rs3/f6", NOW - 300_000)
    replay(ledger, mid, LIVE + "rs3/f6", 10, T + 50_000, closed=False)
    ledger.mark_wal_vanished(mid, "source", LIVE + "rs3/f6", now=NOW - 60_000)
    seen(ledger, mid, "rs9", OLD + "t1", NOW - 590_000, cluster="target")
    step = ledger.start_step(mid, "validate", now=NOW - 30_000)
    ledger.record_validation(mid, step, "orders", b"", b"m", source_rows=3, target_rows=3,
                             source_cells=3, target_cells=3, source_digest="a",
                             target_digest="a", verdict="match", now=NOW - 20_000)
    bad = ledger.record_validation(mid, step, "orders", b"m", b"", source_rows=3,
                                   target_rows=2, source_cells=3, target_cells=2,
                                   source_digest="b", target_digest="c", verdict="mismatch",
                                   now=NOW - 20_000)
    ledger.record_recompare(bad, "mismatch", now=NOW - 10_000)
    done = ledger.start_step(mid, "replay", dag_id="hbase_migrate_replay",
                             run_id="asset_triggered__1", task_id="replay", now=NOW - 9_000,
                             host="worker1@airflow")
    ledger.finish_step(done, "succeeded", {}, now=NOW - 8_000)
    outage = {"service": "target gateway", "endpoint": "dst:9090", "stream": "source",
              "error": "refused"}
    over = ledger.start_step(mid, "outage", now=NOW - 50_000, metrics=outage)
    ledger.finish_step(over, "succeeded", outage, now=NOW - 45_000)
    ledger.start_step(mid, "outage", now=NOW - 7_000, metrics=outage)  # waiting still
    ledger.ensure_migration("users", "src", "dst", [TableMapping("users", "users")], now=T)


NO_LIMITS = {"set": {}, "in_force": None, "steps": {}}


def expected(ledger: Ledger) -> dict[str, Any]:
    pending0 = {"seen": 0, "replaying": 0, "failed": 0}
    return {
        "now": NOW, "ledger": ledger.url, "schema_version": latest_version(),
        "archive_ttl": 600_000, "has_gaps": True,
        "migrations": [
            {
                "name": "orders", "state": "replaying", "source": "src", "target": "dst",
                # lag: now less the oldest edit not replayed yet (rs2's files, never read:
                # their creation time T); rs3's only file is a gap, nothing left to replay
                "watermark": T - 1000, "lag": 600_000,
                "servers": [
                    {"server": "rs1", "newest_replayed_write_time": T + 250_000,
                     "lag": 500_000, "pending": {**pending0, "replaying": 1}, "replayed": 1,
                     "gaps": 0},
                    {"server": "rs2", "newest_replayed_write_time": None, "lag": 600_000,
                     "pending": {"seen": 2, "replaying": 0, "failed": 1}, "replayed": 0,
                     "gaps": 0},
                    {"server": "rs3", "newest_replayed_write_time": T + 50_000,
                     "lag": 0, "pending": pending0, "replayed": 0, "gaps": 1},
                ],
                "gaps": [{"kind": "vanished", "server": "rs3", "path": LIVE + "rs3/f6",
                          "first_time": T + 50_000, "last_time": NOW - 60_000, "detail": None,
                          "detected_at": NOW - 60_000, "remedy": DEFAULT_GAP_REMEDY}],
                "retention": None,
                "retention_warnings": [
                    {"server": "rs2", "path": OLD + "f3", "status": "seen", "name_time": T,
                     "first_seen": NOW - 500_000, "deadline": NOW + 100_000,
                     "remaining": 100_000},
                ],
                "last_validation": {"step_id": 1, "validated_at": NOW - 10_000, "ranges": 2,
                                    "mismatched": 1, "verdict": "mismatch"},
                "steps": [
                    {"id": 1, "kind": "validate", "status": "running",
                     "started_at": NOW - 30_000, "ended_at": None, "by": "cli",
                     "dag_id": None, "run_id": None, "task_id": None, "error": None,
                     "host": HERE},
                    {"id": 2, "kind": "replay", "status": "succeeded",
                     "started_at": NOW - 9_000, "ended_at": NOW - 8_000,
                     "by": "hbase_migrate_replay/asset_triggered__1/replay",
                     "dag_id": "hbase_migrate_replay", "run_id": "asset_triggered__1",
                     "task_id": "replay", "error": None, "host": "worker1@airflow"},
                    {"id": 3, "kind": "outage", "status": "succeeded",
                     "started_at": NOW - 50_000, "ended_at": NOW - 45_000, "by": "cli",
                     "dag_id": None, "run_id": None, "task_id": None, "error": None,
                     "host": HERE},
                    {"id": 4, "kind": "outage", "status": "running",
                     "started_at": NOW - 7_000, "ended_at": None, "by": "cli",
                     "dag_id": None, "run_id": None, "task_id": None, "error": None,
                     "host": HERE},
                ],
                # the source stream only (the target-side file is no stream): a Put
                # acknowledged in each of f1, f2 and f6; 5 s of one outage, 7 s of another
                "streams": {"source": {
                    "stream": "source", "lag": 600_000, "cells": {"Put": 3},
                    "wal_files": {"replaying": 1, "replayed": 1, "seen": 2, "failed": 1,
                                  "gap": 1},
                    "open_gaps": 1, "outage_seconds": 12.0,
                    "waiting": {"service": "target gateway", "endpoint": "dst:9090",
                                "since": NOW - 7_000, "error": "refused"},
                    # each server's newest file (equal name times: the last path) and its
                    # offset; messages are the CDC stream's only
                    "offsets": [
                        {"server": "rs1", "file": "f2", "offset": 10, "status": "replayed"},
                        {"server": "rs2", "file": "f4", "offset": 0, "status": "seen"},
                        {"server": "rs3", "file": "f6", "offset": 10, "status": "gap"}],
                    "messages": None}},
                "copy": None, "limits": NO_LIMITS,
                "listed_at": NOW - 100_000,  # f4's listing, the newest
            },
            {"name": "users", "state": "created", "source": "src", "target": "dst",
             "watermark": None, "lag": None, "servers": [], "gaps": [],
             "retention_warnings": [], "retention": None, "last_validation": None,
             "steps": [], "streams": {}, "copy": None, "limits": NO_LIMITS,
             "listed_at": None},
        ],
    }


def test_status_report_matches_hand_computed_figures(ledger: Ledger) -> None:
    populate(ledger)
    report = compute_status(ledger, now=NOW)
    assert json.loads(json.dumps(report.to_json())) == expected(ledger)
    only = compute_status(ledger, now=NOW, names=["users"], archive_ttl=60_000)
    assert [m.name for m in only.migrations] == ["users"]
    assert not only.has_gaps


def test_shorter_ttl_warns_earlier(ledger: Ledger) -> None:
    populate(ledger)
    # 0.8 * 200s = 160s: f3 (first seen 500s ago) warns, f4 (100s) does not
    report = compute_status(ledger, now=NOW, names=["orders"], archive_ttl=200_000)
    assert [(w.path, w.remaining) for w in report.migrations[0].retention_warnings] == [
        (OLD + "f3", -300_000)]
    # 0.8 * 120s = 96s: both
    report = compute_status(ledger, now=NOW, names=["orders"], archive_ttl=120_000)
    assert [(w.path, w.deadline) for w in report.migrations[0].retention_warnings] == [
        (OLD + "f3", NOW - 380_000), (OLD + "f4", NOW + 20_000)]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_status_command_exits_3_on_gaps(ledger: Ledger, ledger_url: str,
                                        capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    populate(ledger)
    code, out, _ = run(["status", "--url", ledger_url, "--json"], capsys)
    assert code == 3
    report = json.loads(out)
    assert out == json.dumps(report, sort_keys=True, indent=2) + "\n"
    assert report["has_gaps"] is True
    assert [m["name"] for m in report["migrations"]] == ["orders", "users"]
    code, out, _ = run(["status", "--url", ledger_url], capsys)
    assert code == 3
    assert "GAPS" in out and "rs3" in out and "near the cleaner TTL" in out
    assert "mismatch (1 of 2 ranges differ)" in out
    assert "remedy: re-copy the affected key ranges" in out
    # orders' steps ran on two hosts (a worker's and this one): each step names its host
    orders = out[out.index("orders"):out.index("users")]
    assert "host" in orders and "worker1@airflow" in orders and HERE in orders


def test_status_command_with_config(ledger: Ledger, ledger_url: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    populate(ledger)
    config = tmp_path / "users.toml"
    config.write_text(f'[migration]\nname = "users"\nledger = "{ledger_url}"\n'
                      '[source]\nthrift = "a:9090"\n[target]\nthrift = "b:9090"\n'
                      '[[tables]]\nsource = "users"\n[replay]\narchive_ttl = "1h"\n')
    code, out, _ = run(["status", "--config", str(config), "--json"], capsys)
    report = json.loads(out)
    assert code == 0
    assert (report["archive_ttl"], [m["name"] for m in report["migrations"]]) == (
        3_600_000, ["users"])


def test_ledger_commands(ledger_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    for reading in (["ledger", "info"], ["status"]):  # no ledger yet: they create none
        code, _, err = run([*reading, "--url", ledger_url], capsys)
        assert code == 2 and "no ledger at" in err and "ledger upgrade" in err
    code, out, _ = run(["ledger", "upgrade", "--url", ledger_url], capsys)
    assert (code, f"schema version {latest_version()} (upgraded from 0" in out) == (0, True)
    code, out, _ = run(["ledger", "upgrade", "--url", ledger_url], capsys)
    assert "(is up to date)" in out
    with Ledger.open(ledger_url) as ledger:
        populate(ledger)
    code, out, _ = run(["ledger", "info", "--url", ledger_url, "--json"], capsys)
    info = json.loads(out)
    assert (info["schema_version"], [m["name"] for m in info["migrations"]]) == (
        latest_version(), ["orders", "users"])
    orders = info["migrations"][0]
    assert orders["wal_files"] == {"failed": 1, "gap": 1, "replayed": 1, "replaying": 1,
                                   "seen": 3}
    assert orders["open_gaps"] == 1


def test_ledger_source_is_required_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["ledger", "upgrade"], capsys)
    assert code == 2 and "exactly one of --config" in err
    code, _, err = run(["status", "--url", "mysql://x/y"], capsys)
    assert code == 2 and "hbase-migrate: error: ledger URL 'mysql://x/y'" in err


def test_a_drained_lag_is_bounded_by_the_last_listing_not_zero(
        ledger: Ledger, ledger_url: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every listed edit replayed while a writer goes on: the lag is no more than the time
    since the listing (edits written since are pending), not 0 ms."""
    monkeypatch.setenv("COLUMNS", "300")
    mid = ledger.ensure_migration("orders", "src", "dst", [TableMapping("orders", "orders")],
                                  now=T).id
    listed = now_ms() - 100_000
    seen(ledger, mid, "rs1", LIVE + "rs1/f1", listed)  # 1000 bytes as listed
    replay(ledger, mid, LIVE + "rs1/f1", 1000, listed - 10_000, closed=False)
    before = now_ms()
    code, out, _ = run(["status", "--url", ledger_url], capsys)
    after = now_ms()
    assert code == 0
    line = next(x for x in out.splitlines() if x.startswith("orders: "))
    shown = line.split("replay lag under ")[1].split(" (")[0]
    assert shown in {human_duration(t - listed) for t in range(before, after + 1)}, line
    assert f"(every edit of the last WAL listing, {format_time(listed)}, replayed)" in line
