"""Faults mid-stream against the real broker: a CDC process killed with SIGKILL and run
again loses no edit and sends again only what the broker had not acknowledged; a broker
restart mid-stream is retried through and the run converges.

The stream is slowed for real so that a fault lands mid-way on any machine: the broker
holds the producer's ``client.id`` to a byte rate (a Kafka client quota), which makes the
test's few hundred kilobytes take several seconds after the first file is acknowledged."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.lifecycle.cdc import CDC_STREAM, cdc
from realstack.kafka import KafkaBroker
from tests.support.cdc import Source, all_expected, consume, create_topic, identity

pytestmark = pytest.mark.integration
THROTTLED = "cdc-throttled"  # the client.id the broker holds to BYTES_PER_SECOND
BYTES_PER_SECOND = 50_000  # the test's stream is about 280 kB: some 5 s
SLOW = f'producer = {{ "client.id" = "{THROTTLED}" }}\n'


@pytest.fixture(scope="module", autouse=True)
def throttled(kafka_broker: KafkaBroker) -> None:
    """The broker holds producers with the client.id of ``SLOW`` to a byte rate."""
    kafka_broker.limit_producer(THROTTLED, BYTES_PER_SECOND)


def progress(spec: MigrationSpec) -> dict[str, int]:
    """The CDC stream's acknowledged offset per WAL file (by base name)."""
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        rows = ledger.wal_files(record.id, CDC_STREAM) if record else []
    return {os.path.basename(r.path): r.offset_reached for r in rows}


def wait_for_progress(spec: MigrationSpec, timeout: float = 120.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            done = progress(spec)
        except Exception:
            done = {}
        if any(done.values()):
            return done
        time.sleep(0.02)
    raise AssertionError("no CDC progress recorded")


def test_sigkill_mid_stream_then_rerun(source: Source, kafka_broker: KafkaBroker,
                                       tmp_path: Path) -> None:
    topic = create_topic(kafka_broker.bootstrap)
    config = source.config(tmp_path, kafka_broker.bootstrap, topic, SLOW)
    spec = load_config(config)
    proc = subprocess.Popen([sys.executable, "-m", "hbase_migrate", "cdc", "--config",
                             str(config), "--start", str(source.start)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_progress(spec)
        assert proc.poll() is None, "the stream ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(30)
    acknowledged = progress(spec)
    # the rerun at full speed: the same migration and ledger, another client.id
    summary = cdc(load_config(source.config(tmp_path, kafka_broker.bootstrap, topic)),
                  start=source.start).to_json()
    assert summary["exit_code"] == 0, summary

    expected = all_expected(spec, source.start)
    got = Counter(identity(m) for m in consume(kafka_broker.bootstrap, topic))
    assert set(got) == {identity(m) for m in expected}  # none missing, none foreign
    duplicates = [key for key, n in got.items() if n > 1]
    assert all(offset >= acknowledged.get(os.path.basename(file), 0)
               for file, offset, _ in duplicates), (duplicates, acknowledged)
    assert all(n == 1 for (file, offset, _), n in got.items()
               if offset < acknowledged.get(os.path.basename(file), 0))


def test_a_broker_restart_mid_stream_is_retried_through(
        source: Source, kafka_broker: KafkaBroker, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    topic = create_topic(kafka_broker.bootstrap)
    spec = load_config(source.config(tmp_path, kafka_broker.bootstrap, topic,
                                     SLOW + 'delivery_timeout = "3s"\nretries = 8\n'))
    result: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: result.update(cdc(spec, start=source.start).to_json()))
    runner.start()
    try:
        wait_for_progress(spec)
        kafka_broker.stop()
        assert runner.is_alive(), "the stream ended before the broker stopped"
        time.sleep(4)  # longer than a delivery attempt: some sends fail and are retried
    finally:
        kafka_broker.start()
        runner.join(300)
    assert not runner.is_alive()
    assert result.get("exit_code") == 0, result
    assert any("sending again" in r.getMessage() for r in caplog.records
               if r.name == "hbase_migrate.sinks.kafka"), "no delivery failed and was retried"
    expected = {identity(m) for m in all_expected(spec, source.start)}
    assert {identity(m) for m in consume(kafka_broker.bootstrap, topic)} == expected
