"""A message's identity survives its WAL file's move: the edits of a live file are streamed,
HBase rolls and archives the file, and the same edits are streamed again from ``oldWALs/``
(what a follower killed between the broker's acknowledgement and the ledger's record sends
on its next run). Every message sent again equals its first copy, so a consumer that
de-duplicates on ``(file, offset, row)`` applies each edit once."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle.cdc import cdc
from minihbase.regionserver import WalSettings
from realstack.kafka import KafkaBroker
from tests.support.cdc import TABLE, Source, consume, create_topic, identity, plain
from tests.support.minicluster import EmbeddedClusters, copy_table_schema, run_workload

pytestmark = pytest.mark.integration


def test_a_message_sent_again_after_its_file_moved_is_the_same(
        kafka_broker: KafkaBroker, tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    start = now_ms() - 1_000
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=1))
    run_workload(src, TABLE, 7, 120)
    copy_table_schema(src, dst, TABLE)
    topic = create_topic(kafka_broker.bootstrap)
    spec = load_config(Source(src, dst, start).config(tmp_path / "m", kafka_broker.bootstrap,
                                                      topic))
    first = cdc(spec, start=start)
    assert first.exit_code == 0, first.to_json()
    live = [o.path for o in first.outcomes if "/WALs/" in o.path and o.run.cells]
    assert live, first.to_json()
    assert src.region_servers is not None
    src.region_servers.roll()  # the live file moves to oldWALs/ under its name
    again = cdc(spec, start=start, end=now_ms() + 1)  # the same edits, streamed again
    assert again.exit_code == 0, again.to_json()
    # every edit sent again came from the archive (the new live file holds markers only)
    assert all("/oldWALs/" in o.path for o in again.outcomes if o.run.cells)

    messages = consume(kafka_broker.bootstrap, topic)
    copies: dict[tuple[str, int, str], list[dict[str, object]]] = {}
    for message in messages:
        copies.setdefault(identity(message), []).append(plain(message))
    sent_twice = [found for found in copies.values() if len(found) == 2]
    assert len(sent_twice) == len(copies) == len(messages) // 2 > 0
    assert all(a == b for a, b in sent_twice)
    assert {str(m["file"]) for m in messages} == {p.rsplit("/", 1)[-1] for p in live}
