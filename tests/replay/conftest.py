"""Fixtures of the replay tests: a source and a target embedded cluster, WAL building."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.thrift.thrift1 import Thrift1Client
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, WalKey
from hbase_migrate.wal.writer import WalOptions, write_wal
from minihbase.server import MiniHBase

T = int(time.time() * 1000) - 3_600_000  # an hour ago: timestamps well inside any TTL
FAMILIES = (FamilyDescriptor(b"d", max_versions=3), FamilyDescriptor(b"m", max_versions=1))
REGION = b"0123456789abcdef0123456789abcdef"


class Clusters:
    """Thrift clients of a source and a target cluster."""

    def __init__(self, src: MiniHBase, dst: MiniHBase) -> None:
        assert src.endpoints.thrift2 and dst.endpoints.thrift2
        self.src = Thrift2Client(src.endpoints.thrift2)
        self.dst = Thrift2Client(dst.endpoints.thrift2)
        self.dst1 = Thrift1Client(dst.endpoints.thrift)
        self.dst_endpoints = dst.endpoints

    def close(self) -> None:
        self.src.close()
        self.dst.close()
        self.dst1.close()

    def create(self, table: str, families: Sequence[FamilyDescriptor] = FAMILIES, *,
               source: bool = True, target: bool = True) -> None:
        for side, client in ((source, self.src), (target, self.dst)):
            if side:
                client.create_table(TableDescriptor(table, tuple(families)))


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    base = tmp_path_factory.mktemp("replay")
    with MiniHBase(base / "src", "source") as src, MiniHBase(base / "dst", "target") as dst:
        both = Clusters(src, dst)
        yield both
        both.close()


@pytest.fixture
def table() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"


def entries_for(table: str, calls: Sequence[Sequence[Cell]], *, first_sequence: int = 1,
                write_time: int = T) -> list[tuple[WalKey, Sequence[Cell]]]:
    """One WAL entry per client call, sequence ids and write times increasing."""
    return [(WalKey(REGION, table.encode(), first_sequence + i, write_time + i), cells)
            for i, cells in enumerate(calls)]


def make_wal(path: Path, entries: Sequence[tuple[WalKey, Sequence[Cell]]],
             options: WalOptions | None = None, *, trailer: bool = True) -> Path:
    write_wal(path, entries, options or WalOptions(), trailer=trailer)
    return path


def scan_all(client: Thrift2Client, table: str) -> list[tuple[bytes, bytes, bytes, int, bytes]]:
    """Every visible version, sorted."""
    return sorted((c.row, c.family, c.qualifier, c.timestamp, c.value)
                  for row in client.scan(table) for c in row)
