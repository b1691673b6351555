"""CDC throughput: WAL files -> Kafka messages, side by side with the broker's raw produce
rate of the same messages from the same client.

Usage: ``python bench/cdc_throughput.py [--size-mb 10] [--quick] [--repeat 2]
[--batch-cells 5000] [--envelope native|debezium]``

Starts an Apache Kafka broker (KRaft, ``realstack/kafka``) on loopback, writes a WAL file
with the project's writer (the entries of ``replay_throughput.py``: one row per entry, two
families, values of 60-140 bytes, about one entry in ten a delete) and prints, each into a
fresh topic of 3 partitions:

* messages/s of ``replay_file`` into :class:`~hbase_migrate.sinks.kafka.KafkaSink` (read,
  filter, convert, build the JSON, produce, wait for every batch's acknowledgements);
* messages/s of the same messages (keys and values built beforehand, untimed) produced by
  the same client with the same settings (the sink's producer configuration: idempotent,
  ``acks=all``, its linger and delivery reports), in the sink's batches, each flushed
  (every acknowledgement awaited) before the next, as the sink waits;
* their ratio (the aim is at least 0.8);
* for scale, messages/s of the same ``replay_file`` into a target that discards what it gets
  (WAL read, filter and convert only: no message built or sent), the ceiling any sink has.

Beside each rate: the CPU time of the calling (Python) thread per message, steadier than
wall time on a loaded machine, that of the whole process (every thread: librdkafka's own
too), and the broker's (the JVM sharing the machine's cores). Each figure is the best of
``--repeat`` rounds in which the runs take turns, after one warm-up round (a fresh broker's
first run is two to three times slower, whichever it is); the ratio is given both of the
best rates and as the median of each round's ratio (its two runs side by side in time, so a
machine that slows down for a while weighs on both). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
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
from hbase_migrate.config import ENVELOPES, CdcSettings
from hbase_migrate.replay.apply import AppliedCounts
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.sinks.debezium import debezium_value
from hbase_migrate.sinks.kafka import KafkaSink
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value, row_edits
from realstack.kafka import KafkaBroker


def new_topic(bootstrap: str) -> str:
    topic = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(60)
    return topic


class Collect(DiscardTarget):
    """Keeps the (key, value) pairs the sink would produce, batch by batch."""

    def __init__(self, desc: TableDescriptor, envelope: str) -> None:
        super().__init__(desc)
        self.envelope = envelope
        self.batches: list[list[tuple[bytes, bytes]]] = []

    def value(self, edit: RowEdit) -> bytes:
        return message_value(edit) if self.envelope == "native" else debezium_value(edit, "")

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        self.batches.append([(message_key(e.table, e.row), self.value(e))
                             for e in row_edits(table, mutations)])
        return super().apply(table, mutations)


def batches_of(path: Path, batch_cells: int, envelope: str
               ) -> list[list[tuple[bytes, bytes]]]:
    """The messages the sink produces for ``path``, built the same way, in its batches."""
    target = Collect(TableDescriptor(SOURCE_TABLE, tuple(FamilyDescriptor(f) for f in FAMILIES)),
                     envelope)
    replay_file(path, ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={SOURCE_TABLE}"]),
                                 batch_cells), target)
    return target.batches


class Clock:
    """Wall, calling-thread CPU and process CPU seconds from its creation to :meth:`stop`."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()
        self.process = time.process_time()

    def stop(self) -> tuple[float, float]:
        return (time.perf_counter() - self.wall, time.thread_time() - self.cpu,
                time.process_time() - self.process)


Timing = tuple[int, float, float, float]  # messages, wall, thread CPU, process CPU seconds


def cpu_seconds(pid: int | None) -> float:
    """User and system CPU seconds of process ``pid`` so far (0 when unknown)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cdc_run(path: Path, bootstrap: str, batch_cells: int, envelope: str) -> Timing:
    topic = new_topic(bootstrap)
    sink = KafkaSink(CdcSettings(bootstrap, topic, envelope=envelope))
    spec = ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={SOURCE_TABLE}"]), batch_cells)
    sink.check_topic(topic)  # topic checked and producer opened before timing, as for raw
    sink.producer().list_topics(topic, timeout=30)
    try:
        clock = Clock()
        result = replay_file(path, spec, sink)
        seconds = clock.stop()
    finally:
        sink.close()
    return result.progress.calls, *seconds


def read_only_run(path: Path, batch_cells: int, count: int) -> Timing:
    desc = TableDescriptor(SOURCE_TABLE, tuple(FamilyDescriptor(f) for f in FAMILIES))
    spec = ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={SOURCE_TABLE}"]), batch_cells)
    clock = Clock()
    replay_file(path, spec, DiscardTarget(desc))
    return count, *clock.stop()


def raw_run(batches: list[list[tuple[bytes, bytes]]], bootstrap: str) -> Timing:
    """The same messages straight through a producer configured as the sink's, waiting
    for the acknowledgements of each batch as the sink does."""
    topic = new_topic(bootstrap)
    sink = KafkaSink(CdcSettings(bootstrap, topic))
    producer = Producer(sink._config())
    errors: list[object] = []

    def done(error: object, _msg: object) -> None:
        if error is not None:
            errors.append(error)

    producer.list_topics(topic, timeout=30)  # connected and warm, as the sink is
    clock = Clock()
    for batch in batches:
        for key, value in batch:
            while True:
                try:
                    producer.produce(topic, value, key, -1, done)  # as the sink calls it
                    break
                except BufferError:
                    producer.poll(0.1)
        if producer.flush(120):
            raise SystemExit("raw produce: messages left unacknowledged")
    seconds = clock.stop()
    if errors:
        raise SystemExit(f"raw produce failed: {errors[0]}")
    return sum(len(b) for b in batches), *seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=10, help="WAL size (MB)")
    parser.add_argument("--quick", action="store_true", help="smoke run (2 MB, 1 round)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (best run is kept)")
    parser.add_argument("--batch-cells", type=int, default=5000)
    parser.add_argument("--envelope", choices=ENVELOPES, default=ENVELOPES[0])
    args = parser.parse_args()
    size_mb, repeat = (2.0, 1) if args.quick else (args.size_mb, args.repeat)
    with tempfile.TemporaryDirectory(prefix="cdc-bench-") as tmp:
        folder = Path(tmp)
        path = folder / "bench.wal"
        write_file(path, make_entries(int(size_mb * 1024 * 1024)))
        batches = batches_of(path, args.batch_cells, args.envelope)
        messages = [m for batch in batches for m in batch]
        t0 = time.perf_counter()
        with KafkaBroker(folder / "kafka") as broker:
            print(f"Kafka broker {broker.bootstrap} up in {time.perf_counter() - t0:.1f} s; "
                  f"WAL {path.stat().st_size / 1e6:.1f} MB, {len(messages)} {args.envelope} "
                  "messages "
                  f"(avg value {sum(len(v) for _, v in messages) / len(messages):.0f} B)")
            runs: dict[str, Callable[[], Timing]] = {
                "WAL -> Kafka (KafkaSink, acked per batch)":
                    lambda: cdc_run(path, broker.bootstrap, args.batch_cells, args.envelope),
                "raw produce, same messages, same client":
                    lambda: raw_run(batches, broker.bootstrap),
                "WAL read + convert only (no message), scale":
                    lambda: read_only_run(path, args.batch_cells, len(messages)),
            }
            rate: dict[str, float] = dict.fromkeys(runs, 0.0)
            cpu: dict[str, float] = dict.fromkeys(runs, float("inf"))
            all_cpu: dict[str, float] = dict.fromkeys(runs, float("inf"))
            broker_cpu: dict[str, float] = dict.fromkeys(runs, float("inf"))
            cdc, raw, ceiling = runs
            for run in runs.values():  # a warm-up round, not counted: the broker's JIT
                run()
            ratios = []
            for _ in range(repeat):
                this: dict[str, float] = {}
                for name, run in runs.items():
                    before = cpu_seconds(broker.pid)
                    count, wall, thread, process = run()
                    broker_cpu[name] = min(broker_cpu[name],
                                           (cpu_seconds(broker.pid) - before) / count * 1e6)
                    this[name] = count / wall
                    rate[name] = max(rate[name], count / wall)
                    cpu[name] = min(cpu[name], thread / count * 1e6)
                    all_cpu[name] = min(all_cpu[name], process / count * 1e6)
                ratios.append(this[cdc] / this[raw])
            print(f"{'':<48}{'msg/s':>12}{'thread CPU/msg':>17}{'process CPU/msg':>18}"
                  f"{'broker CPU/msg':>17}")
            for name in (cdc, raw, ceiling):
                print(f"{name:<48}{rate[name]:>12,.0f}{cpu[name]:>14.1f} us"
                      f"{all_cpu[name]:>15.1f} us{broker_cpu[name]:>14.1f} us")
            print(f"{'ratio (aim >= 0.8): best rates':<48}{rate[cdc] / rate[raw]:>12.2f}")
            print(f"{'ratio: median of the rounds (lowest-highest)':<48}"
                  f"{statistics.median(ratios):>12.2f} ({min(ratios):.2f}-{max(ratios):.2f})")

if __name__ == "__main__":
    main()
