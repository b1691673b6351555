"""``open_cluster`` (the front door's handle): the endpoints read once whatever is asked of
it (``cluster.json`` reads counted as ``test_endpoints_cache.py`` counts them), the transport
chosen from the cluster's config (native, Thrift2, Thrift1 alone, Bigtable), and the door's
errors raised in the words they had. Nothing here reaches a server: every client opened
connects at its first call."""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest

from hbase_migrate.cluster import endpoints as E
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import ClusterSpec
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import Cluster, open_cluster
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.targets import open_target
from hbase_migrate.replay.thrift1_target import Thrift1Target

NATIVE = ClusterEndpoints("n", thrift="127.0.0.1:3", zookeeper="127.0.0.1:2", client="native")
THRIFT2 = ClusterEndpoints("t2", thrift="127.0.0.1:3", thrift2="127.0.0.1:4")
THRIFT1 = ClusterEndpoints("t1", thrift="127.0.0.1:3")  # no Thrift2, no ZooKeeper
BIGTABLE = BigtableSettings("proj-123", "inst-123", emulator_host="127.0.0.1:5")


def write(path: Path, endpoints: ClusterEndpoints) -> Path:
    """``endpoints`` as a cluster.json replacing any file there (a new inode), older than a
    clock tick as a running cluster's file is."""
    fresh = path.with_suffix(".new")
    fresh.write_text(json.dumps({k: v for k, v in endpoints.to_json().items() if v is not None}))
    os.replace(fresh, path)
    time.sleep(2 * E.FINE_TICK_NS / 1e9)
    return path


def test_the_endpoints_are_read_once_whatever_the_steps_ask(
        tmp_path: Path, reads: Counter[Path]) -> None:
    path = write(tmp_path / "cluster.json", THRIFT2)
    cluster = open_cluster(ClusterSpec("target", cluster_json=path))
    assert reads == {}  # nothing read before it is asked for
    assert cluster.endpoints.thrift2 == "127.0.0.1:4"
    assert (cluster.name, cluster.transport, cluster.has_client) == ("t2", "thrift2", True)
    assert cluster.writes_exactly() and not cluster.writes_exactly(force_thrift1=True)
    assert cluster.status() is None and cluster.registry_status() is None  # no RPC here
    assert not cluster.issues_tokens and cluster.delegation_token() is None
    assert cluster.cluster_id() == "t2"  # names no quorum: known by its name
    with cluster.client() as client:  # a Thrift2 client, connecting at its first call
        assert client.endpoint == "127.0.0.1:4"
    cluster.replay_gateway().close()
    assert reads == {path: 1}
    write(path, THRIFT1)  # the cluster restarted with its Thrift1 gateway alone
    assert (cluster.transport, cluster.writes_exactly()) == ("thrift1", False)
    assert cluster.endpoints.thrift2 is None and not cluster.has_client
    assert reads == {path: 2}  # read again once, as any reader of the file does


@pytest.mark.parametrize(("endpoints", "transport", "client"), [
    (NATIVE, "native", "NativeCluster"),
    (THRIFT2, "thrift2", "Thrift2Client"),
    (THRIFT1, "thrift1", None),
])
def test_the_transport_is_the_clusters_config(endpoints: ClusterEndpoints, transport: str,
                                               client: str | None) -> None:
    for cluster in (open_cluster(ClusterSpec("target", explicit=endpoints)),
                    open_cluster(endpoints)):
        assert cluster.transport == transport
        assert cluster.has_client == (client is not None)
        assert cluster.writes_exactly() == (client is not None)
        assert not cluster.writes_exactly(force_thrift1=True)
        assert cluster.reached_natively == (transport == "native")
        if client is not None:
            with cluster.client() as opened:
                assert type(opened).__name__ == client
        target = open_target(cluster, probe=False)
        try:
            assert isinstance(target, ClientTarget if client else Thrift1Target)
        finally:
            target.close()
        forced = open_target(cluster, force_thrift1=True, probe=False)
        forced.close()
        assert isinstance(forced, Thrift1Target)


def test_a_bigtable_target_is_written_over_its_own_client_and_has_no_endpoints() -> None:
    pytest.importorskip("google.cloud.bigtable")
    cluster = open_cluster(ClusterSpec("target", bigtable=BIGTABLE))
    assert cluster.transport == "bigtable" and cluster.has_client
    assert cluster.writes_exactly(force_thrift1=True)  # Bigtable has no Thrift1 to force
    assert cluster.name == BIGTABLE.where
    assert not cluster.reached_natively and cluster.status() is None
    with pytest.raises(ConfigError, match=r"^\[target\] is Bigtable projects/proj-123/"
                       r"instances/inst-123 on the emulator 127.0.0.1:5: it has no HBase "
                       r"endpoints \(gateways, WAL folder\): this needs an HBase cluster$"):
        cluster.endpoints  # noqa: B018
    with cluster.client() as client:
        assert type(client).__name__ == "BigtableClient"


def test_the_doors_errors_are_raised_in_their_words() -> None:
    native = open_cluster(ClusterSpec("source", explicit=ClusterEndpoints(
        "n", zookeeper="127.0.0.1:2")))  # reached natively, with no gateway
    with pytest.raises(ConfigError) as e:
        native.thrift1("to major-compact")
    assert str(e.value) == ("source cluster 'n' names no Thrift1 gateway (thrift = "
                            "\"host:9090\"): to major-compact")
    with pytest.raises(ConfigError) as e:  # the Thrift1 gateway alone has no data client
        open_cluster(ClusterSpec("target", explicit=THRIFT1)).client()
    assert str(e.value) == ("target cluster 't1' names no Thrift2 gateway (thrift2 = "
                            "\"host:9090\") and its client is \"thrift\": name one, or set "
                            "client = \"native\" with zookeeper = \"host:2181\"")
    with pytest.raises(ConfigError) as e, open_cluster(THRIFT2).bulk_load():
        pass
    assert str(e.value).startswith("cluster 't2': a bulk load goes over HBase's own RPC")


def test_a_closed_handle_is_not_used_again() -> None:
    with open_cluster(THRIFT2) as cluster:
        assert isinstance(cluster, Cluster) and cluster.name == "t2"
    with pytest.raises(RuntimeError, match="closed"):
        cluster.client()



def test_the_file_root_reuse_key_and_shipped_section_come_from_the_one_read(
        tmp_path: Path, reads: Counter[Path]) -> None:
    named = ClusterEndpoints("w", thrift="127.0.0.1:3", thrift2="127.0.0.1:4",
                             webhdfs="http://127.0.0.1:9870", hbase_root="/hbase")
    path = write(tmp_path / "cluster.json", named)
    spec = ClusterSpec("source", cluster_json=path, security=(("qop", "auth-conf"),))
    cluster = open_cluster(spec)
    root = cluster.file_root()
    assert root is not None
    assert root.where("archive") == "source WebHDFS http://127.0.0.1:9870, path /hbase/archive"
    shipped = cluster.shipped()  # what a task on another host gets: nothing to read there
    assert (shipped.cluster_json, shipped.security, shipped.role) == (None, (), "source")
    assert shipped.explicit is not None and shipped.explicit.security is not None
    assert shipped.explicit.security.qop == "auth-conf"  # the section's key merged in
    assert shipped.explicit.webhdfs == named.webhdfs and shipped.explicit.thrift2 == "127.0.0.1:4"
    key = cluster.reuse_key
    assert open_cluster(spec).reuse_key == key  # a client kept for the next task fits it
    assert reads == {path: 1}
    write(path, THRIFT2)  # the cluster restarted on other ports, without WebHDFS
    assert open_cluster(spec).reuse_key != key and cluster.file_root() is None
    assert reads == {path: 2}
    assert open_cluster(THRIFT1).file_root() is None


def test_a_bigtable_target_has_no_file_root_and_is_not_shipped_as_endpoints() -> None:
    cluster = open_cluster(ClusterSpec("target", bigtable=BIGTABLE))
    assert cluster.file_root() is None
    assert cluster.reuse_key == repr(BIGTABLE)
    with pytest.raises(ConfigError, match="it has no HBase endpoints"):
        cluster.shipped()


def test_a_bigtable_targets_losses_and_delete_markers_are_kept_by_its_handle() -> None:
    from hbase_migrate.bigtable.losses import shared  # what the Bigtable clients count into

    spec = ClusterSpec("target", bigtable=BIGTABLE)
    memory = open_cluster(spec).marker_memory()
    assert memory is not None and open_cluster(spec).marker_memory() is memory  # per process
    metrics: dict[str, object] = {}
    with open_cluster(spec).recorded_losses(metrics):
        shared(BIGTABLE)[1]["cell_too_large"] += 2  # as a write leaving two cells out
    assert metrics == {"bigtable": {"known_losses": {"cell_too_large": 2}, "masked_puts": 0}}
    hbase: dict[str, object] = {}
    with open_cluster(THRIFT2).recorded_losses(hbase):
        pass
    assert hbase == {} and open_cluster(THRIFT2).marker_memory() is None
