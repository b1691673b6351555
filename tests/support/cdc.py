"""The CDC stream's building blocks: topics on the real Kafka broker, a consumer group that
reads a topic to its end, what ``wal dump`` says the stream must hold, and a source whose
WAL files hold a workload of every operation."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from hbase_migrate.config import MigrationSpec
from minihbase.server import MiniHBase

TABLE = "orders"
METAFAMILY = "METAFAMILY"
Message = dict[str, Any]


def create_topic(bootstrap: str, partitions: int = 3, config: dict[str, str] | None = None,
                 name: str | None = None) -> str:
    topic = name or f"cdc-{uuid.uuid4().hex[:10]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(60)
    return topic


def consume(bootstrap: str, topic: str, timeout: float = 120.0) -> list[Message]:
    """Every message of ``topic``, read with a new consumer group to the end of each
    partition, in partition order (each value parsed, with its ``_key``)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    metadata = consumer.list_topics(topic, timeout=30)
    partitions = sorted(metadata.topics[topic].partitions)
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
            for p in partitions}
    consumer.subscribe([topic])
    got: list[Message] = []
    seen = dict.fromkeys(partitions, 0)
    deadline = time.monotonic() + timeout
    try:
        while any(seen[p] < ends[p] for p in partitions):
            assert time.monotonic() < deadline, f"read {seen} of {ends} in {topic}"
            msg = consumer.poll(0.5)
            if msg is None or msg.error() is not None:
                continue
            value = json.loads(msg.value())
            value["_key"] = msg.key()
            got.append(value)
            seen[msg.partition()] = msg.offset() + 1
    finally:
        consumer.close()
    return got


def wal_dump(paths: Sequence[str]) -> list[dict[str, Any]]:
    """``hbase-migrate wal dump --json --values`` of ``paths``, one dict per entry."""
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", "wal", "dump", "--json",
                           "--values", *paths], capture_output=True, text=True, check=True,
                          timeout=300)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def wal_name(path: str) -> str:
    """A WAL file's name: what a message's ``file`` holds, wherever the file lies."""
    return path.rsplit("/", 1)[-1]


def expected_messages(paths: Sequence[str], table: str, start: int) -> list[Message]:
    """What the stream must carry for ``paths`` (in this order): per entry of ``table``
    written at or after ``start``, one message per row with that row's data cells."""
    out: list[Message] = []
    for entry in wal_dump(paths):
        if entry["table"] != table or entry["write_time"] < start:
            continue
        rows: dict[str, list[dict[str, Any]]] = {}
        for cell in entry["cells"]:
            if cell["family"] != METAFAMILY:
                rows.setdefault(cell["row"], []).append(cell)
        out += [{"table": table, "row": row, "file": wal_name(entry["file"]),
                 "offset": entry["offset"],
                 "entry": entry["index"], "sequence": entry["sequence"],
                 "write_time": entry["write_time"], "cells": cells}
                for row, cells in rows.items()]
    return out


def all_expected(spec: MigrationSpec, start: int) -> list[Message]:
    """What the stream must carry from every WAL file the CDC stream's ledger lists."""
    from hbase_migrate.audit.ledger import Ledger
    from hbase_migrate.lifecycle.cdc import CDC_STREAM

    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.migration(spec.name)
        assert record is not None
        paths = [r.path for r in ledger.wal_files(record.id, CDC_STREAM)]
    return expected_messages(paths, TABLE, start)


def identity(message: Message) -> tuple[str, int, str]:
    """What de-duplicates a message: its file, offset and row."""
    return message["file"], message["offset"], message["row"]


def plain(message: Message) -> Message:
    return {k: v for k, v in message.items() if k not in ("_key", "row_image")}


@dataclass
class Source:
    """A source whose WAL files hold a workload of every operation, and an empty target
    with the same schema."""

    src: MiniHBase
    dst: MiniHBase
    start: int  # before the table's first edit

    def config(self, folder: Path, bootstrap: str, topic: str, extra: str = "") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "migration.toml"
        path.write_text(
            f'[migration]\nname = "cdc"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
            f'[source]\ncluster_json = "{self.src.write_cluster_json()}"\n'
            f'[target]\ncluster_json = "{self.dst.write_cluster_json()}"\n'
            f'[[tables]]\nsource = "{TABLE}"\n'
            '[replay]\nroll_period = "1h"\nmargin = "1m"\n'
            f'[cdc]\nbootstrap = "{bootstrap}"\ntopic = "{topic}"\n{extra}', encoding="utf-8")
        return path
