"""CDC throughput: WAL files -> Kafka messages, side by side with the broker's raw produce
rate of the same messages from the same client.

Usage: ``python bench/cdc_throughput.py [--size-mb 10] [--quick] [--repeat 2]
[--batch-cells 5000]``

Starts an Apache Kafka broker (KRaft, ``realstack/kafka``) on loopback, writes a WAL file
with the project's writer (the entries of ``replay_throughput.py``: one row per entry, two
families, values of 60-140 bytes, about one entry in ten a delete) and prints, each into a
fresh topic of 3 partitions:

* messages/s of ``replay_file`` into :class:`~hbase_migrate.sinks.kafka.KafkaSink` (read,
  filter, convert, build the JSON, produce, wait for every batch's acknowledgements);
* messages/s of the same messages (keys and values built beforehand, untimed) produced by
  the same client with the same settings (idempotent, ``acks=all``) and one flush at the end;
* their ratio (the aim is at least 0.8);
* for scale, messages/s of the same ``replay_file`` into a target that discards what it gets
  (WAL read, filter and convert only: no message built or sent), the ceiling any sink has.

Each figure is the best of ``--repeat`` rounds in which the runs take turns. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic
from replay_throughput import (  # the sibling script
    FAMILIES,
    SOURCE_TABLE,
    DiscardTarget,
    make_entries,
    write_file,
)

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import CdcSettings
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.mutations import WalPosition, to_mutations
from hbase_migrate.sinks.kafka import KafkaSink
from hbase_migrate.sinks.messages import message_key, message_value, row_edits
from hbase_migrate.wal.reader import WalReader
from realstack.kafka import KafkaBroker


def new_topic(bootstrap: str) -> str:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(60)
    return topic


def messages_of(path: Path) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs the sink produces for ``path``, built the same way."""
    out = []
    with WalReader(path) as reader:
        for entry in reader:
            position = WalPosition(str(path), entry.offset, entry.index, entry.key.sequence,
                                   entry.key.write_time)
            for edit in row_edits(SOURCE_TABLE, to_mutations(entry.cells, position)):
                out.append((message_key(edit.table, edit.row), message_value(edit)))
    return out


def cdc_run(path: Path, bootstrap: str, batch_cells: int) -> tuple[int, float]:
    topic = new_topic(bootstrap)
    sink = KafkaSink(CdcSettings(bootstrap, topic))
    spec = ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={SOURCE_TABLE}"]), batch_cells)
    sink.check_topic(topic)  # topic checked and producer opened before timing, as for raw
    sink.producer().list_topics(topic, timeout=30)
    try:
        t0 = time.perf_counter()
        result = replay_file(path, spec, sink)
        seconds = time.perf_counter() - t0
    finally:
        sink.close()
    return result.progress.calls, seconds


def read_only_run(path: Path, batch_cells: int) -> tuple[int, float]:
    desc = TableDescriptor(SOURCE_TABLE, tuple(FamilyDescriptor(f) for f in FAMILIES))
    spec = ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={SOURCE_TABLE}"]), batch_cells)
    t0 = time.perf_counter()
    replay_file(path, spec, DiscardTarget(desc))
    seconds = time.perf_counter() - t0
    return len(messages_of(path)), seconds


def raw_run(messages: list[tuple[bytes, bytes]], bootstrap: str) -> tuple[int, float]:
    """The same messages straight through a producer configured as the sink's."""
    topic = new_topic(bootstrap)
    sink = KafkaSink(CdcSettings(bootstrap, topic))
    producer = Producer(sink._config())
    errors: list[object] = []

    def done(error: object, _msg: object) -> None:
        if error is not None:
            errors.append(error)

    producer.list_topics(topic, timeout=30)  # connected and warm, as the sink is
    t0 = time.perf_counter()
    for key, value in messages:
        while True:
            try:
                producer.produce(topic, value, key, on_delivery=done)
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush(120)
    seconds = time.perf_counter() - t0
    if errors:
        raise SystemExit(f"raw produce failed: {errors[0]}")
    return len(messages), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10, help="WAL size (MB)")
    parser.add_argument("--quick", action="store_true", help="smoke run (2 MB, 1 round)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (best run is kept)")
    parser.add_argument("--batch-cells", type=int, default=5000)
    args = parser.parse_args()
    size_mb, repeat = (2.0, 1) if args.quick else (args.size_mb, args.repeat)
    with tempfile.TemporaryDirectory(prefix="cdc-bench-") as tmp:
        folder = Path(tmp)
        path = folder / "bench.wal"
        write_file(path, make_entries(int(size_mb * 1024 * 1024)))
        messages = messages_of(path)
        t0 = time.perf_counter()
        with KafkaBroker(folder / "kafka") as broker:
            print(f"Kafka broker {broker.bootstrap} up in {time.perf_counter() - t0:.1f} s; "
                  f"WAL {path.stat().st_size / 1e6:.1f} MB, {len(messages)} messages "
                  f"(avg value {sum(len(v) for _, v in messages) / len(messages):.0f} B)")
            best_cdc = best_raw = best_read = 0.0
            for _ in range(repeat):
                count, seconds = read_only_run(path, args.batch_cells)
                best_read = max(best_read, count / seconds)
                count, seconds = cdc_run(path, broker.bootstrap, args.batch_cells)
                best_cdc = max(best_cdc, count / seconds)
                count, seconds = raw_run(messages, broker.bootstrap)
                best_raw = max(best_raw, count / seconds)
            print(f"{'WAL -> Kafka (KafkaSink, acked per batch)':<48}{best_cdc:>12,.0f} msg/s")
            print(f"{'raw produce, same messages, same client':<48}{best_raw:>12,.0f} msg/s")
            print(f"{'ratio (aim >= 0.8)':<48}{best_cdc / best_raw:>12.2f}")
            print(f"{'WAL read + convert only (no message), scale':<48}{best_read:>12,.0f} msg/s")


if __name__ == "__main__":
    main()
