"""Bad input to the CDC stream, each a clear error naming the broker, the topic and the WAL
file and byte offset: an unreachable broker, a missing topic (the broker creates none), a
message over the topic's size limit; and a migration without a [cdc] section."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import main
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.lifecycle.cdc import CDC_STREAM
from hbase_migrate.wal.model import Cell, CellType
from realstack.kafka import KafkaBroker
from tests.cli_util import fails
from tests.support.cdc import create_topic
from tests.support.replay import (
    RS1,
    HBaseRoot,
    T,
    entry_offsets,
    source_endpoints,
    write_config,
)

pytestmark = pytest.mark.integration
START = T - 60_000


def setup(tmp_path: Path, bootstrap: str | None, topic: str, *, big: bool = False
          ) -> tuple[Path, Path, int]:
    """A local HBase root with one archived WAL of 5 puts (the 4th of 5,000 bytes when
    ``big``); the config, the file and the byte offset of the first (or the big) entry."""
    calls = [[Cell(b"row-%d" % i, b"d", b"q", T + i, CellType.PUT,
                   b"x" * 5000 if big and i == 3 else b"v%d" % i)] for i in range(5)]
    wal = HBaseRoot(tmp_path / "root").write(RS1, T, "orders", calls)
    # no waiting for outages (the default waits an hour for a broker to come back)
    cdc = (f'outage_tolerance = "0s"\n[cdc]\ntopic = "{topic}"\ndelivery_timeout = "3s"\n'
           'retries = 1\n')
    if bootstrap is not None:
        cdc += f'bootstrap = "{bootstrap}"\n'
    config = write_config(tmp_path, source=source_endpoints("127.0.0.1:1", root=tmp_path / "root"),
                          target=ClusterEndpoints(name="target", thrift="127.0.0.1:1"),
                          tables=["orders"], extra=cdc)
    return config, wal, entry_offsets(wal)[3 if big else 0][0]


def argv(config: Path) -> list[str]:
    return ["cdc", "--config", str(config), "--start", str(START)]


def test_an_unreachable_broker(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               closed_port: int) -> None:
    bootstrap = f"127.0.0.1:{closed_port}"
    config, wal, offset = setup(tmp_path, bootstrap, "orders-cdc")
    error = fails(argv(config), capsys)
    assert f"Kafka broker {bootstrap} unreachable" in error
    assert "topic 'orders-cdc'" in error and f"{wal} at byte offset {offset}" in error


def test_a_missing_topic(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                         kafka_broker: KafkaBroker) -> None:
    config, wal, offset = setup(tmp_path, kafka_broker.bootstrap, "no-such-topic")
    error = fails(argv(config), capsys)
    assert f"topic 'no-such-topic' on broker {kafka_broker.bootstrap} does not exist" in error
    assert f"{wal} at byte offset {offset}" in error
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        record = ledger.migration("orders")
        assert record is not None
        assert all(r.offset_reached == 0 for r in ledger.wal_files(record.id, CDC_STREAM))


def test_a_message_over_the_size_limit_fails_its_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], kafka_broker: KafkaBroker) -> None:
    topic = create_topic(kafka_broker.bootstrap, 1, {"max.message.bytes": "2000"})
    config, wal, offset = setup(tmp_path, kafka_broker.bootstrap, topic, big=True)
    with pytest.raises(SystemExit) as exit_info:
        main(argv(config))
    out, _ = capsys.readouterr()
    assert exit_info.value.code == 1, out
    failed = next(line for line in out.splitlines() if line.startswith("FAILED"))
    assert f"topic {topic!r} on broker {kafka_broker.bootstrap}" in failed
    assert f"{wal} at byte offset {offset}" in failed and "max.message.bytes 2000" in failed
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        record = ledger.migration("orders")
        assert record is not None
        (row,) = ledger.wal_files(record.id, CDC_STREAM)
        assert row.status == "failed" and row.offset_reached <= offset


def test_a_migration_without_a_cdc_section(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, source=source_endpoints("127.0.0.1:1", root=tmp_path),
                          target=ClusterEndpoints(name="target", thrift="127.0.0.1:1"),
                          tables=["orders"])
    assert "has no [cdc] section" in fails(argv(config), capsys)
