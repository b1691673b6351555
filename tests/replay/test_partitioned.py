"""Several writers per replay task (``[replay] writers``): rows split among connections,
each row's edits in order, a batch acknowledged only once every part is; and a catch-up
through three writers converging with interleaved puts and deletes of the same rows."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import now_ms
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.apply import AppliedCounts, count_cells
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.mutations import Kind, RowMutation, WalPosition
from hbase_migrate.replay.partitioned import RowPartitionedTarget
from hbase_migrate.replay.run import run_replay
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from tests.support.minicluster import EmbeddedClusters


class Recording:
    """A target that keeps what it was given, and on which thread."""

    def __init__(self, name: str, fail_on: bytes | None = None) -> None:
        self.name, self.fail_on = name, fail_on
        self.got: list[tuple[str, RowMutation]] = []
        self.threads: set[str] = set()
        self.closed = False

    def describe(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, (FamilyDescriptor(b"d"),))

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        self.threads.add(threading.current_thread().name)
        if self.fail_on is not None and any(m.row == self.fail_on for m in mutations):
            raise RuntimeError(f"{self.name} refuses {self.fail_on!r}")
        self.got.extend((table, m) for m in mutations)
        return AppliedCounts(count_cells(mutations), 1)

    def close(self) -> None:
        self.closed = True


def mutations(n: int) -> list[RowMutation]:
    out = []
    for i in range(n):
        row = b"row-%d" % (i % 7)
        kind = Kind.DELETE if i % 5 == 4 else Kind.PUT
        cell = Cell(row, b"d", b"q", 1000 + i,
                    CellType.DELETE_COLUMN if kind is Kind.DELETE else CellType.PUT, b"%d" % i)
        out.append(RowMutation(row, kind, (cell,), WalPosition("w", i, i, i, 1000 + i)))
    return out


def test_rows_split_among_writers_keep_their_order() -> None:
    writers = [Recording(f"w{i}") for i in range(3)]
    target = RowPartitionedTarget(writers)
    batches = [mutations(40)[:25], mutations(40)[25:]]
    counts = AppliedCounts()
    for batch in batches:
        counts.add(target.apply("t", batch))
    target.close()
    assert all(w.closed for w in writers)
    assert sum(counts.cells.values()) == 40 and counts.calls == 6
    everything = [m for b in batches for m in b]
    for row in {m.row for m in everything}:
        holders = [w for w in writers if any(m.row == row for _, m in w.got)]
        assert len(holders) == 1, row  # a row always goes to one writer
        assert [m for _, m in holders[0].got if m.row == row] == \
            [m for m in everything if m.row == row]
    assert sum(len(w.got) for w in writers) == 40
    assert len({t for w in writers for t in w.threads}) >= 2  # written at once


def test_a_failed_part_fails_the_batch_after_the_others() -> None:
    writers = [Recording(f"w{i}", fail_on=b"row-3") for i in range(3)]
    target = RowPartitionedTarget(writers)
    batch = mutations(14)
    with pytest.raises(RuntimeError, match="refuses b'row-3'"):
        target.apply("t", batch)
    target.close()
    written = {m.row for w in writers for _, m in w.got}
    assert b"row-3" not in written
    # the parts without the refused row were all written (waited for, not abandoned)
    assert written == {m.row for m in batch} - {
        m.row for m in batch if zlib.crc32(m.row) % 3 == zlib.crc32(b"row-3") % 3}


def test_writers_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[migration]\nname = "m"\nledger = "sqlite://"\n'
                    '[source]\nthrift = "h:1"\n[target]\nthrift = "h:2"\n'
                    '[[tables]]\nsource = "t"\n[replay]\nwriters = 0\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"writers.*an integer from 1 to 32"):
        load_config(path)


@pytest.mark.integration
def test_catch_up_through_three_writers(tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    start = now_ms() - 60_000
    src, dst = make_embedded.pair()
    assert src.endpoints.thrift2 and dst.endpoints.thrift2
    source, target = Thrift2Client(src.endpoints.thrift2), Thrift2Client(dst.endpoints.thrift2)
    desc = TableDescriptor("events", (FamilyDescriptor(b"d", max_versions=3),))
    source.create_table(desc)
    target.create_table(desc)
    now = now_ms()
    for i in range(300):  # the same 40 rows over and over, deletes among the puts
        row = b"r%02d" % (i % 40)
        source.write_cells("events", [Cell(row, b"d", b"q%d" % (i % 3), now + i,
                                           CellType.PUT, b"v%d" % i)])
        if i % 7 == 6:
            source.write_cells("events", [Cell(row, b"d", b"q%d" % (i % 3), now + i,
                                               CellType.DELETE_COLUMN)])
    (tmp_path / "m.toml").write_text(
        f'[migration]\nname = "writers"\nledger = "sqlite:///{tmp_path / "l.db"}"\n'
        f'[source]\ncluster_json = "{src.write_cluster_json()}"\n'
        f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
        '[[tables]]\nsource = "events"\n[replay]\nwriters = 3\n', encoding="utf-8")
    job = ReplayJob.from_spec(load_config(tmp_path / "m.toml"), start=start)
    summary = run_replay(job)
    assert summary.exit_code == 0, summary.to_json()
    comparison = compare_tables(source, target, "events")
    assert comparison.equal and comparison.source_cells > 100, comparison
    source.close()
    target.close()
