"""The CDC message formats against a real Kafka broker: every message a consumer reads back
is valid against the format's JSON Schema (``hbase_migrate/sinks/schemas/``) and says what
the WAL files say (``wal dump``); the Debezium envelope's ``op``, ``before`` and ``after``
follow each row's history, and ``source.cluster`` is the source's cluster id."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from hbase_migrate.bytesutil import to_bytes_binary
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.lifecycle.cdc import cdc
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.regionserver import WalSettings
from minihbase.server import cluster_id
from minihbase.zookeeper import ZooKeeperServer
from realstack.kafka import KafkaBroker
from tests.support.cdc import (
    TABLE,
    Message,
    Source,
    consume,
    create_topic,
    expected_messages,
    identity,
    plain,
)
from tests.support.minicluster import EmbeddedClusters, copy_table_schema, run_workload

pytestmark = pytest.mark.integration
SCHEMAS = Path(__file__).resolve().parents[2] / "hbase_migrate" / "sinks" / "schemas"
WAL_FIELDS = ("file", "offset", "entry", "sequence", "write_time")


def validator(envelope: str) -> Draft202012Validator:
    registry: Registry[Any] = Registry()
    for path in SCHEMAS.glob("*.schema.json"):
        registry = registry.with_resource(path.name,
                                          Resource.from_contents(json.loads(path.read_text())))
    schema = json.loads((SCHEMAS / f"{envelope}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry)


def invalid(envelope: str, messages: list[Message]) -> list[str]:
    check = validator(envelope)
    return [f"{m.get('row')}: {e.message}" for m in messages
            for e in check.iter_errors({k: v for k, v in m.items() if k != "_key"})]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, zookeeper: ZooKeeperServer
           ) -> Iterator[Source]:
    """Like the CDC tests' source, registered in ZooKeeper (its cluster id there)."""
    from hbase_migrate.audit.ledger import now_ms

    base = tmp_path_factory.mktemp("envelope")
    start = now_ms() - 1_000
    with EmbeddedClusters(base, lambda: zookeeper) as clusters:
        src = clusters("source", over="native", folder=base / "src",
                       wal=WalSettings(region_servers=2))
        dst = clusters("target", folder=base / "dst")
        for seed in range(3):
            run_workload(src, TABLE, seed, 150)
            assert src.region_servers is not None
            src.region_servers.roll()
        copy_table_schema(src, dst, TABLE)
        yield Source(src, dst, start)


def stream(source: Source, broker: KafkaBroker, folder: Path, extra: str
           ) -> tuple[list[Message], list[Message]]:
    """(messages read back, what the WAL files say they must carry)."""
    got, expected, _ = streamed(source, broker, folder, extra)
    return got, expected


def streamed(source: Source, broker: KafkaBroker, folder: Path, extra: str
             ) -> tuple[list[Message], list[Message], MigrationSpec]:
    topic = create_topic(broker.bootstrap, partitions=2)
    spec = load_config(source.config(folder, broker.bootstrap, topic, extra))
    summary = cdc(spec, start=source.start).to_json()
    assert summary["exit_code"] == 0, summary
    paths = [f["path"] for f in summary["files"]]
    return (consume(broker.bootstrap, topic), expected_messages(paths, TABLE, source.start),
            spec)


def test_native_messages_match_their_schema(source: Source, kafka_broker: KafkaBroker,
                                            tmp_path: Path) -> None:
    got, expected = stream(source, kafka_broker, tmp_path, "row_image = true\n")
    assert got and invalid("native", got) == []
    assert sorted(map(plain, got), key=identity) == sorted(expected, key=identity)
    # the schema is no rubber stamp: a Debezium event is not a native message
    assert invalid("native", [{"op": "u", **got[0]}])


def shown_in_status_and_report(spec: MigrationSpec, sent: int) -> None:
    """``status --json`` and the report show the stream: the messages a consumer read, each
    server's newest WAL file and the offset the ledger keeps for it."""
    from hbase_migrate.audit.ledger import Ledger
    from hbase_migrate.lifecycle import report

    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        files = ledger.wal_files(record.id, "cdc")
    newest = {f.server: f for f in files}  # by server, then name time
    def status(*more: str) -> str:
        done = subprocess.run([sys.executable, "-m", "hbase_migrate", "status", "--config",
                               str(spec.path), *more], capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert f"cdc: {sent} messages acknowledged, lag 0" in " ".join(status().split())
    figures = json.loads(status("--json"))["migrations"][0]["streams"]["cdc"]
    assert figures["messages"] == sent and figures["open_gaps"] == 0 and figures["lag"] == 0
    assert sorted((o["server"], o["file"], o["offset"]) for o in figures["offsets"]) == sorted(
        (f.server, f.path.rsplit("/", 1)[-1], f.offset_reached) for f in newest.values())
    assert all(o["offset"] > 0 for o in figures["offsets"])
    page = Path(report(spec, out=spec.path.parent / "report.html").metrics["path"]
                ).read_text("utf-8")
    assert 'id="cdc"' in page and f"{sent} messages acknowledged" in page


def as_native(event: Message) -> Message:
    """What a Debezium event says of the WAL, in the native message's terms."""
    src = event["source"]
    return {"table": src["table"], "row": event["row"], "cells": event["cells"],
            **{k: src[k] for k in WAL_FIELDS}}


def test_debezium_events_without_row_images(source: Source, kafka_broker: KafkaBroker,
                                            tmp_path: Path) -> None:
    got, expected, spec = streamed(source, kafka_broker, tmp_path, 'envelope = "debezium"\n')
    shown_in_status_and_report(spec, len(got))
    assert got and invalid("debezium", got) == []
    assert invalid("debezium", [{**got[0], "op": "x"}])
    assert sorted(map(as_native, got), key=identity) == sorted(expected, key=identity)
    cluster = cluster_id(source.src.hbase_root_dir)
    for event in got:
        assert event["source"]["cluster"] == cluster and event["source"]["name"] == cluster
        assert event["before"] is None and event["after"] is None
        assert event["source"]["ts_ms"] == event["source"]["write_time"]
        row_delete = all(c["type"] == "DeleteFamily" for c in event["cells"])
        assert event["op"] == ("d" if row_delete else "u"), event
    assert {e["op"] for e in got} == {"u", "d"}


def test_debezium_events_with_row_images_follow_each_row(
        source: Source, kafka_broker: KafkaBroker, tmp_path: Path,
        make_embedded: EmbeddedClusters) -> None:
    fresh = make_embedded("fresh")  # empty: every row's story from its start
    copy_table_schema(source.src, fresh, TABLE)
    got, expected = stream(Source(source.src, fresh, source.start), kafka_broker,
                           tmp_path / "cdc", 'envelope = "debezium"\nrow_image = true\n')
    assert got and invalid("debezium", got) == []
    assert sorted(map(as_native, got), key=identity) == sorted(expected, key=identity)
    history: dict[str, list[Message]] = defaultdict(list)
    for event in got:  # one row's events come in order in its partition
        history[event["row"]].append(event)
    for row, events in history.items():
        before = None  # the target was empty when the stream started
        for event in events:
            assert event["before"] == before, (row, event)
            assert event["op"] == ("d" if event["after"] is None
                                   else "c" if before is None else "u"), event
            before = event["after"]
    assert {e["op"] for e in got} == {"c", "u", "d"}
    # the last image of each row is the source's row now
    thrift2 = source.src.endpoints.thrift2
    assert thrift2 is not None
    with Thrift2Client(thrift2) as client:
        for row, events in history.items():
            now = {f"{c.family.decode()}:{c.qualifier.decode()}": c.value
                   for c in client.get(TABLE, to_bytes_binary(row), max_versions=1)}
            after = events[-1]["after"] or {"row": row}
            assert {k: to_bytes_binary(v) for k, v in after.items() if k != "row"} == now
