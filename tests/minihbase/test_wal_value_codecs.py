"""The embedded cluster runs with each WAL value codec: what it acknowledged is in its WAL
files, read back value for value (empty, small, and longer than one codec block)."""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import CellType
from minihbase.cli.minicluster import WAL_COMPRESSION
from minihbase.model import ClientCell, Mutation
from minihbase.regionserver import WalSettings
from tests.support.minicluster import EmbeddedClusters

from .walutil import all_entries, data_edits

pytestmark = pytest.mark.integration

VALUES = {b"empty": b"", b"small": b"v" * 40, b"large": bytes(range(256)) * 1200}


@pytest.mark.parametrize("codec", ["snappy", "lz4", "bzip2", "zstd", "lzma", "brotli"])
def test_cluster_writes_every_value_codec(make_embedded: EmbeddedClusters, codec: str) -> None:
    options = WAL_COMPRESSION[f"dict+tags+{codec}"]
    mini = make_embedded(wal=WalSettings(region_servers=1, options=options))
    assert mini.cluster is not None
    mini.cluster.create_table("t", [FamilyDescriptor(b"f")])
    mini.cluster.mutate("t", [
        Mutation(row, (ClientCell(b"f", b"q", 7, CellType.PUT, value),))
        for row, value in VALUES.items()
    ])
    with Thrift2Client(mini.endpoints.thrift2) as t2:
        served = {c.row: c.value for row in t2.scan("t") for c in row}
    written = {c.row: c.value for e in data_edits(all_entries(mini.hbase_root_dir))
               if e.key.table_name == b"t" for c in e.cells}
    assert served == written == VALUES
