"""The CDC stream against a real Kafka broker: the messages a consumer group reads back are,
entry for entry, what ``wal dump`` prints for the same WAL files, in order per row; a rerun
sends nothing again; row images equal the source's rows."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from hbase_migrate.config import load_config
from hbase_migrate.lifecycle.cdc import cdc
from hbase_migrate.thrift.thrift2 import Thrift2Client
from realstack.kafka import KafkaBroker
from tests.support.cdc import (
    TABLE,
    Source,
    all_expected,
    consume,
    create_topic,
    expected_messages,
    identity,
    plain,
    wal_name,
)

pytestmark = pytest.mark.integration


def streamed_files(summary: dict[str, object]) -> list[str]:
    files = summary["files"]
    assert isinstance(files, list)
    return [f["path"] for f in files]


def test_messages_equal_wal_dump_entry_for_entry(source: Source, kafka_broker: KafkaBroker,
                                                 tmp_path: Path) -> None:
    topic = create_topic(kafka_broker.bootstrap)
    spec = load_config(source.config(tmp_path, kafka_broker.bootstrap, topic))
    summary = cdc(spec, start=source.start).to_json()
    assert summary["exit_code"] == 0, summary
    paths = streamed_files(summary)
    assert len(paths) >= 4
    expected = expected_messages(paths, TABLE, source.start)
    types = {c["type"] for m in expected for c in m["cells"]}
    assert types == {"Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"}

    got = consume(kafka_broker.bootstrap, topic)
    assert sorted(map(plain, got), key=identity) == sorted(expected, key=identity)
    # one row's messages come in WAL order (files in the order streamed, then offset)
    rank = {wal_name(p): i for i, p in enumerate(paths)}
    by_row: dict[bytes, list[tuple[int, int]]] = defaultdict(list)
    for message in got:
        assert message["_key"] == TABLE.encode() + b"\x00" + _row_bytes(message["row"])
        by_row[message["_key"]].append((rank[message["file"]], message["offset"]))
    assert all(order == sorted(order) for order in by_row.values())

    # all acknowledged: only live files looked at again
    again = cdc(spec, start=source.start).to_json()
    assert again["exit_code"] == 0 and again["entries"] == 0 and again["bytes"] == 0, again
    assert len(consume(kafka_broker.bootstrap, topic)) == len(got)


def _row_bytes(text: str) -> bytes:
    from hbase_migrate.bytesutil import to_bytes_binary

    return to_bytes_binary(text)


def test_row_images_equal_the_source_rows(source: Source, kafka_broker: KafkaBroker,
                                          tmp_path: Path) -> None:
    topic = create_topic(kafka_broker.bootstrap, partitions=2)
    spec = load_config(source.config(tmp_path, kafka_broker.bootstrap, topic,
                                     "row_image = true\n"))
    summary = cdc(spec, start=source.start).to_json()
    assert summary["exit_code"] == 0, summary
    last: dict[str, dict[str, object]] = {}
    for message in consume(kafka_broker.bootstrap, topic):
        last[message["row"]] = message  # partition order: the row's last edit wins
    assert last
    thrift2 = source.src.endpoints.thrift2
    assert thrift2 is not None
    with Thrift2Client(thrift2) as client:
        for row, message in last.items():
            now = sorted((c.family, c.qualifier, c.timestamp, c.value)
                         for c in client.get(TABLE, _row_bytes(row), max_versions=1))
            image = message["row_image"]
            assert isinstance(image, list)
            assert sorted((_row_bytes(c["family"]), _row_bytes(c["qualifier"]), c["timestamp"],
                           _row_bytes(c["value"])) for c in image) == now, row


def test_a_window_through_the_command_line(source: Source, kafka_broker: KafkaBroker,
                                           tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    from hbase_migrate.audit.ledger import Ledger
    from hbase_migrate.cli import main
    from hbase_migrate.lifecycle.cdc import CDC_STREAM

    topic = create_topic(kafka_broker.bootstrap)
    config = source.config(tmp_path, kafka_broker.bootstrap, topic)
    spec = load_config(config)
    with pytest.raises(SystemExit) as listed:  # every file listed, none sent
        main(["cdc", "--config", str(config), "--start", str(source.start), "--dry-run"])
    assert listed.value.code == 0
    with Ledger.open(spec.ledger_url) as ledger:
        assert ledger.migration(spec.name) is None  # a dry run records nothing
    everything = sorted(m["write_time"] for m in expected_messages(
        _listed(capsys.readouterr().out), TABLE, source.start))
    start, end = everything[len(everything) // 2], everything[-1]  # the window: 2nd half
    with pytest.raises(SystemExit) as ran:
        main(["cdc", "--config", str(config), "--start", str(start), "--end", str(end),
              "--json"])
    assert ran.value.code == 0, capsys.readouterr()
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        rows = ledger.wal_files(record.id, CDC_STREAM)
        assert [s.kind for s in ledger.steps(record.id)] == ["cdc-backfill"]
    assert rows and all(r.offset_reached == 0 for r in rows)  # a window records no offsets
    expected = [m for m in expected_messages([r.path for r in rows], TABLE, start)
                if m["write_time"] < end]
    got = consume(kafka_broker.bootstrap, topic)
    assert sorted(map(plain, got), key=identity) == sorted(expected, key=identity)


def _listed(manifest: str) -> list[str]:
    """The WAL files a dry run's text manifest names."""
    return [word for line in manifest.splitlines() for word in line.split()
            if word.startswith("webhdfs://")]


def test_follow_streams_until_stopped(source: Source, kafka_broker: KafkaBroker,
                                      tmp_path: Path) -> None:
    import threading

    from hbase_migrate.lifecycle.cdc import cdc_job, follow
    from hbase_migrate.replay.summary import RunSummary

    topic = create_topic(kafka_broker.bootstrap)
    job = cdc_job(load_config(source.config(tmp_path, kafka_broker.bootstrap, topic)),
                  start=source.start)
    stop = threading.Event()
    runs: list[int] = []

    def on_run(summary: RunSummary) -> None:
        runs.append(summary.exit_code)
        if len(runs) == 2:
            stop.set()

    assert follow(job, 0.1, stop, on_run=on_run).exit_code == 0 and runs == [0, 0]
    got = consume(kafka_broker.bootstrap, topic)
    assert sorted(map(plain, got), key=identity) == sorted(
        all_expected(job.spec, source.start), key=identity)
