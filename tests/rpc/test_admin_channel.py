"""Which admin channel the ``hbase`` copy method takes: the admin shell when one is named,
the native admin for a cluster whose client is native, else the Java helper."""

from __future__ import annotations

from typing import Any

from hbase_migrate.cluster.admin import JavaAdmin, ShellAdmin
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase.admin import connect_admin
from hbase_migrate.rpc.admin_channel import NativeAdminChannel


def cluster(admin_shell: str | None = None, **endpoints: Any) -> ClusterSpec:
    found = ClusterEndpoints(**{"name": "c", "zookeeper": "zk:2181", "znode_parent": "/hb",
                                **endpoints})
    return ClusterSpec("target", explicit=found, admin_shell=admin_shell)


def test_a_native_cluster_needs_no_jvm() -> None:
    channel = connect_admin(cluster(client="native"), "2.6.1")
    assert isinstance(channel, NativeAdminChannel)
    assert (channel.role, channel.quorum, channel.znode_parent) == ("target", "zk:2181", "/hb")
    # a cluster naming no Thrift2 gateway is native without saying so
    assert isinstance(connect_admin(cluster(thrift="t:9090"), "2.6.1"), NativeAdminChannel)


def test_the_shell_when_named_and_the_java_helper_otherwise() -> None:
    assert isinstance(connect_admin(cluster("hbase shell -n", client="native"), "2.6.1"),
                      ShellAdmin)
    assert isinstance(connect_admin(cluster(thrift="t:9090", client="thrift"), "2.6.1"),
                      JavaAdmin)
    assert isinstance(connect_admin(cluster(thrift="t:9090", thrift2="t:9091"), "2.6.1"),
                      JavaAdmin)
