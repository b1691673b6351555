"""``NativeCluster``'s translations into the RPC's terms, without a cluster: the protocol's
``(family, qualifier or None)`` columns as one ``Column`` per family, and a located region
as the protocol's ``RegionDescriptor``; and a native replay target whose ZooKeeper does not
answer stops the run before any file is read."""

from __future__ import annotations

import pytest

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.replay.apply import TargetUnavailableError
from hbase_migrate.replay.targets import open_target
from hbase_migrate.rpc.cluster import region_descriptor, rpc_columns
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.messages import Column


def test_columns_one_per_family_a_whole_family_covering_its_qualifiers() -> None:
    assert rpc_columns(None) == rpc_columns([]) == ()
    assert rpc_columns([(b"f", b"a"), (b"g", None), (b"f", b"b")]) == (
        Column(b"f", (b"a", b"b")), Column(b"g", ()))
    assert rpc_columns([(b"f", b"a"), (b"f", None), (b"f", b"b")]) == (Column(b"f", ()),)


def test_a_region_as_the_protocols_descriptor() -> None:
    name = b"ns:t,g,1700000000000.0123456789abcdef0123456789abcdef."
    region = Region("ns:t", b"g", b"p", 1700000000000, name, "rs1", 16020, 42)
    assert region_descriptor(region) == RegionDescriptor(
        "ns:t", b"g", b"p", 1700000000000, "rs1", 16020, 42, name)


def test_a_native_target_whose_zookeeper_is_down_stops_the_run(closed_port: int) -> None:
    down = ClusterEndpoints("dst", zookeeper=f"127.0.0.1:{closed_port}")
    with pytest.raises(TargetUnavailableError, match=r"target cluster 'dst': .*ZooKeeper") as e:
        open_target(down)
    assert e.value.service == "target ZooKeeper"  # what waits name: no gateway here
    assert "gateway" not in str(e.value)
