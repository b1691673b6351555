"""HBase 3.0.0-alpha-4, a stack apart (``make test-stacks``), bulk-loads files of
the project's HFile writer as 2.6.1 does (``test_hfile_writer_real.py``): per-region files
and one over both regions, which its ``BulkLoadHFilesTool`` splits; its Java client's raw
scan returns every cell written, tags and delete markers included, and gets of single
columns pass the ROWCOL Bloom filter. Its Maven Central release has no codec module: the
families are GZ and uncompressed. About two minutes, most of it the stack's start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hfile.writer import HFileSettings

from .fixtures import HBASE_3, native_cluster_json, skip_without_real_stack
from .hfile_bulk import load_and_scan, rowcol_gets_missing, table_of
from .stacks import Stacks

pytestmark = [pytest.mark.own_stack, pytest.mark.realstack, pytest.mark.integration]
TABLE = "hfile_writer_bulk3"
FAMILIES = {
    b"f": (FamilyDescriptor(b"f", max_versions=1000, compression="GZ", bloom_filter="ROW",
                            data_block_encoding="PREFIX", block_size=4096),
           HFileSettings(block_size=4096, encoding="PREFIX", compression="GZ", bloom="ROW",
                         historical=False)),
    b"r": (FamilyDescriptor(b"r", max_versions=1000, bloom_filter="ROWCOL",
                            data_block_encoding="FAST_DIFF", block_size=2048),
           HFileSettings(block_size=2048, encoding="FAST_DIFF", bloom="ROWCOL",
                         index_chunk_size=256, bloom_chunk_size=64, historical=False)),
    b"d": (FamilyDescriptor(b"d", max_versions=1000, compression="GZ", bloom_filter="NONE",
                            data_block_encoding="ROW_INDEX_V1"),
           HFileSettings(encoding="ROW_INDEX_V1", compression="GZ", historical=False)),
}


@pytest.fixture(scope="module")
def described(real_stacks: Stacks, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    """HBase 3.0.0-alpha-4 lent by the session's registry (started for this module unless
    another asked for the same), the table made and dropped after."""
    skip_without_real_stack()
    folder = tmp_path_factory.mktemp("hfile-bulk3")
    with real_stacks.lend(HBASE_3) as stack:
        endpoints = load_cluster_json(native_cluster_json(stack, folder))
        with table_of(endpoints, TABLE, FAMILIES):
            yield {**stack.described, "folder": folder, "endpoints": endpoints}


def test_bulk_load_and_rowcol_gets(described: dict[str, Any]) -> None:
    folder: Path = described["folder"] / "load"
    load_and_scan(described, TABLE, FAMILIES, folder, b"f")
    assert rowcol_gets_missing(described["endpoints"], TABLE, b"r") == []
