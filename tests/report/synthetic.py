"""A ledger written through the ledger's own API with known facts, as a migration of
``servers`` region servers and ``files_per_server`` WAL files each would leave it: a copy by
the command line, catch-up runs by an Airflow DAG, a backfill, a file that failed, one that
vanished (a gap), a stretch no listing saw (a missing gap), a bulk load, approximated
deletes, two validation runs (the newest with one range that still differs after recompare),
a GX result and Data Docs path, and a no-go cutover check. Shared by the report's tests and
its benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepStatus, TableMapping, Verdict

T0 = 1_780_000_000_000  # the watermark
ROLL = 60_000  # one WAL file per server per minute
NAME = "orders-move"
CUTOVER_HOST = "worker-2.example.com"  # the Airflow worker the cutover check ran on
# the report's plots, by id
PLOTS = {"timeline", "lag", "throughput", "wal-status", "wal-lanes", "ranges"}


@dataclass(frozen=True)
class Facts:
    """What was written, for tests to compare the report with."""

    url: str
    files: int
    failed_path: str
    gap_path: str
    replay_runs: int
    backfill_runs: int
    cells_replayed: int
    ranges: int
    mismatched_range: tuple[bytes, bytes]
    gx_result: str
    data_docs: str
    bulk_load_region: str
    approximated: int
    now: int


def wal_path(server: str, name_time: int, archived: bool = True) -> str:
    folder = "oldWALs" if archived else f"WALs/{server}"
    return f"/hbase/{folder}/{server.replace(',', '%2C')}.{name_time}"


def build(folder: Path, *, servers: int = 2, files_per_server: int = 12,
          runs: int = 10) -> Facts:
    url = f"sqlite:///{folder / 'ledger.db'}"
    artifacts = folder / "artifacts"
    (artifacts / "data_docs").mkdir(parents=True, exist_ok=True)
    gx_result = artifacts / "validate-7.json"
    gx_result.write_text('{"success": false}', encoding="utf-8")
    docs = artifacts / "data_docs" / "index.html"
    docs.write_text("<html><body>Data Docs</body></html>", encoding="utf-8")
    names = [f"rs{i}.example.com,16020,1779990000000" for i in range(1, servers + 1)]
    end = T0 + files_per_server * ROLL
    with Ledger.open(url) as ledger:
        m = ledger.ensure_migration(NAME, "src-cluster-id", "dst-cluster-id",
                                    [TableMapping("orders", "orders")], now=T0 - 120_000)
        mid = m.id

        def step(kind: str, start: int, stop: int, metrics: dict[str, object], *,
                 dag: tuple[str, str, str] | None = None, status: str = "succeeded",
                 error: str | None = None, host: str | None = None) -> int:
            dag_id, run_id, task_id = dag or (None, None, None)
            sid = ledger.start_step(mid, kind, dag_id=dag_id, run_id=run_id, task_id=task_id,
                                    now=start, host=host)
            ledger.finish_step(sid, StepStatus(status), metrics, error, now=stop)
            return sid

        step("prepare", T0 - 90_000, T0 - 88_000, {"tables": [{"target": "orders"}]})
        ledger.update_migration(mid, watermark=T0, state="copied", now=T0)
        step("snapshot", T0 - 1_000, T0 + 40_000, {"watermark": T0, "rows": 5000,
                                                    "cells": 15000})
        total, failed_path, gap_path = 0, "", ""
        for s_index, server in enumerate(names):
            for i in range(files_per_server):
                name_time = T0 - ROLL + i * ROLL
                last = i == files_per_server - 1
                path = wal_path(server, name_time, archived=not last)
                ledger.record_wal_seen(mid, "source", server, path, 4096, name_time,
                                       now=name_time + 1000)
                if s_index == 0 and i == 3:
                    gap_path = path
                    ledger.mark_wal_vanished(mid, "source", path, now=name_time + ROLL * 3)
                    continue
                ledger.mark_wal_replaying(mid, "source", path, now=name_time + 2000)
                if s_index == servers - 1 and i == 5:
                    failed_path = path
                    ledger.mark_wal_failed(mid, "source", path, f"{path}: corrupt entry at "
                                           "byte offset 812", now=name_time + 3000)
                    continue
                ledger.record_wal_progress(
                    mid, "source", path, offset_reached=4096 if not last else 2048,
                    entries=40, cells_by_type={"Put": 100, "DeleteColumn": 4},
                    markers={"BULK_LOAD": 1} if (s_index, i) == (0, 2) else {},
                    approximated_deletes=2 if i == 1 else 0, last_write_time=name_time + ROLL,
                    closed=not last, now=name_time + ROLL + 2000)
        ledger.record_missing_gap(mid, names[-1], "", T0 + 7 * ROLL, T0 + 8 * ROLL,
                                  "no WAL file listed between two rolls", now=end)
        per_run = 104 * files_per_server * servers // runs
        for r in range(runs):
            start = T0 + r * (end - T0) // runs
            dag = ("hbase_migrate_replay", f"asset_triggered__{r}", "replay")
            bulk = [{"table": "orders", "region": "orders,row-5,1779990000001.abcd", "families":
                     ["d"], "write_time": T0 + 90_000, "file": wal_path(names[0], T0 + ROLL),
                     "offset": 1234}] if r == 2 else []
            step("replay", start, start + 4_000 + 300 * r,
                 {"cells": {"Put": per_run - 4, "DeleteColumn": 4}, "entries": 40,
                  "files_read": 3, "bulk_loads": bulk, "lag": (runs - r) * 9_000,
                  "files": [{"path": wal_path(names[0], T0)}]}, dag=dag)
            total += per_run
        step("backfill", end - 30_000, end - 20_000,
             {"cells": {"Put": 500}, "files_read": 2, "window": {"start": T0, "end": T0 + ROLL}})
        total += 500
        first = step("validate", end - 15_000, end - 10_000, {"verdict": "mismatch"},
                     dag=("hbase_migrate_validate", "manual__a", "validate"), status="failed")
        bounds = [b"", b"row-2", b"row-5", b"row-8", b""]
        for a, b in pairwise(bounds):
            ledger.record_validation(mid, first, "orders", a, b, source_rows=10, target_rows=9,
                                     source_cells=30, target_cells=27, source_digest="aa",
                                     target_digest="bb", verdict=Verdict.MISMATCH,
                                     now=end - 11_000)
        last_step = step("validate", end - 5_000, end - 1_000,
                         {"verdict": "mismatch", "gx": {"result": str(gx_result),
                                                        "data_docs": str(docs)},
                          # it continued the first, stopped after 2 of its ranges
                          "resumed": {"from_step": first, "ranges": 2, "since": end - 11_000,
                                      "note": "resumed 2 of 4 key ranges"},
                          "source_requests": 6},
                         dag=("hbase_migrate_validate", "manual__b", "validate"),
                         status="failed")
        for a, b in pairwise(bounds):
            bad = a == b"row-5"
            vid = ledger.record_validation(
                mid, last_step, "orders", a, b, source_rows=10, target_rows=10 - bad,
                source_cells=30, target_cells=30 - 3 * bad, source_digest="aa",
                target_digest="bb" if bad else "aa",
                verdict=Verdict.MISMATCH if a in (b"row-2", b"row-5") else Verdict.MATCH,
                now=end - 2_000)
            if a in (b"row-2", b"row-5"):
                ledger.record_recompare(vid, Verdict.MISMATCH if bad else Verdict.MATCH,
                                        now=end - 1_500)
        step("cutover-check", end, end + 500, {
            "verdict": "no-go", "lag": 9_000, "max_lag": 60_000, "open_gaps": 2,
            "files_not_drained": 1 + servers,
            "reasons": ["2 open gap(s): edits lost for the target",
                        "the last validation found 1 of 4 range(s) different"]},
             dag=("hbase_migrate_cutover", "manual__c", "cutover_check"), status="failed",
             host=CUTOVER_HOST)
    return Facts(url=url, files=servers * files_per_server, failed_path=failed_path,
                 gap_path=gap_path, replay_runs=runs, backfill_runs=1, cells_replayed=total,
                 ranges=4, mismatched_range=(b"row-5", b"row-8"), gx_result=str(gx_result),
                 data_docs=str(docs), bulk_load_region="orders,row-5,1779990000001.abcd",
                 approximated=2 * servers, now=end + 60_000)
