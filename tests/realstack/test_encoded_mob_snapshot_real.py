"""``validate --from snapshot``'s source side on real HBase 2.6.1 (the session's stack) for a
table whose families are encoded, a MOB one in FAST_DIFF and a plain one in DIFF: their
store files and MOB files hold the cells' tags dictionary-compressed (``COMPRESS_TAGS``, on by
default), MOB reference tags and cells' own TTLs among them. Every range's digest read from
the snapshot's files equals the live scan's over HBase's RPC; the store files read over
WebHDFS say their tags are compressed. About a minute on the session's stack."""

from __future__ import annotations

import posixpath
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.mob import MOB_REFERENCE_TAG
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.visible import TTL_TAG_TYPE
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import range_stats
from hbase_migrate.rpc.admin_channel import NativeAdminChannel
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.snapshot.read import snapshot_range_stats
from minihbase.cli.minicluster import call_admin
from realstack.hbase import RealHBase

from .fixtures import native_cluster_json
from .mob_encoded_golden import FAMILIES, SPLIT, first_cells, second_cells

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "encoded_mob"


@pytest.fixture(scope="module")
def endpoints(real_hbase: RealHBase, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[ClusterEndpoints]:
    """The table created, written with its tags (``KeyValueCodecWithTags``) and flushed
    twice; dropped after."""
    folder = tmp_path_factory.mktemp("encoded-mob")
    endpoints = load_cluster_json(native_cluster_json(real_hbase, folder))
    assert endpoints.webhdfs and endpoints.hbase_root and endpoints.zookeeper
    with connect(endpoints) as client:
        if client.table_exists(TABLE):
            client.disable_table(TABLE)
            client.delete_table(TABLE)
        client.create_table(TableDescriptor(TABLE, FAMILIES), [SPLIT])
        ts = int(time.time() * 1000) - 60_000
        with NativeClient(endpoints.zookeeper, endpoints.znode_parent, tags=True) as tagged:
            tagged.write(TABLE, first_cells(ts))
            call_admin(real_hbase.cluster_json, "flush", {"table": TABLE})
            tagged.write(TABLE, second_cells(ts + 10))
            call_admin(real_hbase.cluster_json, "flush", {"table": TABLE})
        try:
            yield endpoints
        finally:
            client.disable_table(TABLE)
            client.delete_table(TABLE)


def test_store_files_over_webhdfs_hold_compressed_tags(endpoints: ClusterEndpoints) -> None:
    """Each store file of the MOB family, opened as a ``webhdfs://`` URL, says its tags are
    compressed, and its reference cells carry the MOB reference tag and a cell TTL."""
    from hdfs import InsecureClient

    assert endpoints.webhdfs and endpoints.hbase_root
    hdfs = InsecureClient(endpoints.webhdfs)
    table = posixpath.join(endpoints.hbase_root, "data/default", TABLE)
    files = [posixpath.join(folder, name) for folder, _dirs, names in hdfs.walk(table)
             for name in names if posixpath.basename(folder) == "m" and not name.startswith(".")]
    assert len(files) == 4  # two regions, two flushes
    authority = endpoints.webhdfs.split("://", 1)[1].rstrip("/")
    tags: set[int] = set()
    for path in files:
        with HFileReader(f"webhdfs://{authority}{path}") as reader:
            assert reader.compressed_tags, path
            assert reader.file_info[b"DATA_BLOCK_ENCODING"] == b"FAST_DIFF"
            tags |= {t.type for s in reader.cells() for t in s.cell.tags}
    assert {MOB_REFERENCE_TAG, TTL_TAG_TYPE} <= tags


def test_snapshot_digests_equal_the_live_scans(endpoints: ClusterEndpoints,
                                               tmp_path: Path) -> None:
    assert endpoints.webhdfs and endpoints.hbase_root and endpoints.zookeeper
    admin = NativeAdminChannel("source", endpoints.zookeeper, endpoints.znode_parent)
    name = f"{TABLE}_snapshot"
    admin.snapshot(TABLE, name, 3600)
    try:
        root = HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, "source")
        ranges = [KeyRange(TABLE), KeyRange(TABLE, b"", SPLIT), KeyRange(TABLE, b"row-2", b"row-8")]
        now = int(time.time() * 1000)
        ours = [snapshot_range_stats(root, name, r, now, scratch=tmp_path) for r in ranges]
        with connect(endpoints) as client:
            assert ours == [range_stats(client, r) for r in ranges]
        # ten rows; m:big, m:small, f:x each, row-2's m:big twice, row-3's twice, row-7's
        # deleted, row-8's m:new; the one-second cells gone
        assert (ours[0].rows, ours[0].cells) == (10, 32)
    finally:
        admin.delete(name)
