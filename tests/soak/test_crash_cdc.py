"""The crash harness with the CDC stream (``soak-crash --cdc``) on the session's real Kafka
broker: the copy, then a kill of ``hbase-migrate cdc`` and one of ``cdc --follow`` with a fixed
seed, each run again (the follow: started again until one of its runs succeeded);
the harness's CDC invariant holds, and the topic read back here holds every edit the
source's WAL files hold since T0, by ``wal dump`` (not the harness's reader), with its
sequence id. ``make soak-crash`` kills the stream once per round of every step."""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.soak.crash_checks import message_id
from minihbase.crash_cdc import CLIENT_ID, open_topic
from realstack.kafka import KafkaBroker
from tests.support.cdc import METAFAMILY, consume, wal_dump

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SEED = 78  # both CDC kills drawn late in the run: mid-delivery on this machine
STEPS = "prepare,snapshot,cdc,cdc-follow"
BYTES_PER_SECOND = 20_000  # the first CDC run's backlog (some 100 kB) takes seconds


def test_killed_cdc_runs_leave_every_edit_in_the_topic_with_its_sequence(
        kafka_broker: KafkaBroker, tmp_path: Path) -> None:
    kafka_broker.limit_producer(CLIENT_ID, BYTES_PER_SECOND)
    root = tmp_path / "crash"
    done = subprocess.run(
        [sys.executable, "-m", "minihbase.cli.soak_crash", "--kills", "4", "--seed",
         str(SEED), "--cdc", "--kafka", kafka_broker.bootstrap, "--steps", STEPS,
         "--dir", str(root)], capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    print(done.stderr)  # the kills, shown with -s or on failure
    assert f"OK: seed {SEED}, 4 kills, every invariant held" in done.stdout
    summary = json.loads((root / "summary.json").read_text())
    assert summary["kills_per_step"] == {"prepare": 1, "snapshot": 1, "cdc": 1,
                                         "cdc-follow": 1}
    assert summary["invariants"]["cdc_edits_missing"]["holds"]
    assert summary["cdc"]["kills"] == 2
    cdc_kills = [k for k in summary["per_kill"] if k["step"].startswith("cdc")]
    assert [k["hit"] for k in cdc_kills] == [True, True], cdc_kills
    assert all(k["rerun_exit"] == 0 for k in cdc_kills)
    end = summary["end"]["cdc"]
    assert end["drain_exit"] == 0

    # the topic read here against `wal dump` of every WAL file the source holds
    migration = load_config(root / "migration.toml")
    with Ledger.open(migration.ledger_url) as ledger:
        record = ledger.migration(migration.name)
        assert record is not None and record.watermark is not None
        t0 = record.watermark
    hbase = root / "source" / "hbase"
    files = sorted(str(p) for folder in ("WALs", "oldWALs") for p in (hbase / folder).rglob("*")
                   if p.is_file())
    table = migration.tables[0].source
    expected: dict[tuple[str, int, str], int] = {}
    for entry in wal_dump(files):
        if entry["table"] != table or entry["write_time"] < t0:
            continue
        for cell in entry["cells"]:
            if cell["family"] != METAFAMILY:
                expected[(entry["file"].rsplit("/", 1)[-1], entry["offset"], cell["row"])] = (
                    entry["sequence"])
    assert len(expected) > 100  # the writer's edits since T0
    got: dict[tuple[str, int, str], set[int]] = {}
    for message in consume(kafka_broker.bootstrap, end["topic"]):
        got.setdefault(message_id(message), set()).add(message["sequence"])
    assert sum(map(len, got.values())) == len(got)  # one sequence id per edit
    missing = {key for key in expected if key not in got}
    assert not missing, sorted(missing)[:5]
    assert all(got[key] == {sequence} for key, sequence in expected.items())
    assert end["edits_since_t0"] == len(expected)


def test_without_maven_the_cdc_step_is_left_out_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn on it
    said: list[str] = []
    with ExitStack() as stack:
        assert open_topic(stack, tmp_path, None, said.append) is None
    assert said == ["soak-crash: the CDC step is left out: no Kafka broker (HBaseMigrateError: "
                    "Maven ('mvn') is needed to fetch Apache Kafka from Maven Central)"]
