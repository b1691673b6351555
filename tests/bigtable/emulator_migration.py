"""A migration from an embedded source to the Bigtable emulator, as the Bigtable tests set
it up: the source cluster and its Thrift2 client (a fixture), the cells written to it and
the migration's config naming both."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.regionserver import WalSettings
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters


def put(row: bytes, family: bytes, qualifier: bytes, ts: int) -> Cell:
    """A put whose value names its row, qualifier and timestamp."""
    return Cell(row, family, qualifier, ts, CellType.PUT, b"%s/%s@%d" % (row, qualifier, ts))


@pytest.fixture
def source(make_embedded: EmbeddedClusters) -> Iterator[tuple[MiniHBase, Thrift2Client]]:
    """An embedded source of two region servers and a Thrift2 client of it."""
    cluster = make_embedded("source", wal=WalSettings(region_servers=2))
    thrift2 = cluster.endpoints.thrift2
    assert thrift2 is not None
    with Thrift2Client(thrift2) as client:
        yield cluster, client


def write_config(folder: Path, cluster: MiniHBase, emulator: Emulator, table: str,
                 accept: list[str] | None = None) -> Path:
    """``folder/migration.toml``: ``table`` of ``cluster`` to an instance of its own (one
    per test folder) on ``emulator``, the losses ``accept`` names accepted."""
    instance = f"i-{uuid.uuid5(uuid.NAMESPACE_URL, str(folder)).hex[:8]}"  # one per test
    path = folder / "migration.toml"
    path.write_text(
        f'[migration]\nname = "to-bigtable"\nledger = "sqlite:///ledger.db"\n\n'
        f'[source]\ncluster_json = "{cluster.write_cluster_json()}"\n\n'
        f'[[tables]]\nsource = "{table}"\n\n'
        f'[target]\nkind = "bigtable"\nproject = "proj"\ninstance = "{instance}"\n'
        f'emulator_host = "{emulator.host}"\naccept = {accept or []!r}\n'.replace("'", '"'),
        encoding="utf-8")
    return path
