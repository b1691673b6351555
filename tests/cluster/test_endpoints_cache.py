"""A ``cluster.json`` is read once per process (``tests/lifecycle/test_cluster_json_reads.py``
counts a whole snapshot and replay): asked again, its endpoints come from memory while the
file is the one read; a replaced file is read again once; a reconnect reads it again
whatever it looks like (a rewrite in place within one clock tick keeps the file's inode,
size and times), so a gateway moved to new ports is found; a read within a tick of the
file's change is not trusted. The memory stays in the process:
a ``ClusterSpec`` pickled for a Spark executor carries none."""

from __future__ import annotations

import json
import os
import pickle
import time
from collections import Counter
from pathlib import Path

import pytest

from hbase_migrate.cluster import endpoints as E
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase import open_client


def write(path: Path, port: int) -> Path:
    """A cluster.json naming Thrift2 on ``port``, replacing any file there (a new inode)."""
    fresh = path.with_suffix(".new")
    fresh.write_text(json.dumps({"name": "src", "thrift": "127.0.0.1:19090",
                                 "thrift2": f"127.0.0.1:{port}"}))
    os.replace(fresh, path)
    time.sleep(2 * E.FINE_TICK_NS / 1e9)  # older than a clock tick, as a cluster's file is
    return path


def test_a_file_is_read_once_and_again_once_it_is_replaced(
        tmp_path: Path, reads: Counter[Path]) -> None:
    spec = ClusterSpec("source", cluster_json=write(tmp_path / "cluster.json", 19091))
    for _ in range(5):
        assert spec.endpoints().thrift2 == "127.0.0.1:19091"
    assert reads == {tmp_path / "cluster.json": 1}
    write(tmp_path / "cluster.json", 19092)  # a restart on new ports writes a new file
    for _ in range(5):
        assert spec.endpoints().thrift2 == "127.0.0.1:19092"
    assert reads == {tmp_path / "cluster.json": 2}


def test_a_reconnect_reads_the_file_again_where_its_looks_did_not_change(
        tmp_path: Path, reads: Counter[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "cluster.json", 19091)
    spec = ClusterSpec("source", cluster_json=path)
    client = open_client(spec)  # a Thrift2 client: it connects at its first call
    assert client.endpoint == "127.0.0.1:19091"
    first = os.stat(path)
    path.write_text(path.read_text().replace("19091", "19092"))  # in place, same size...
    monkeypatch.setattr(Path, "stat", lambda self, **kw: first)  # ...within one tick
    assert spec.endpoints().thrift2 == "127.0.0.1:19091"  # the file looks as it was
    assert reads == {path: 1}
    locate = getattr(client, "locate", None)
    assert locate is not None, "the client has no way to find its gateway again"
    assert locate() == "127.0.0.1:19092"  # what it asks before reconnecting
    assert reads == {path: 2}
    assert spec.endpoints().thrift2 == "127.0.0.1:19092"  # and what the process knows now


def test_a_read_within_a_tick_of_the_change_is_not_trusted(
        tmp_path: Path, reads: Counter[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "cluster.json", 19091)
    changed = os.stat(path).st_mtime_ns
    for fine, tick in ((changed, E.FINE_TICK_NS), (changed // 10**9 * 10**9, E.COARSE_TICK_NS)):
        os.utime(path, ns=(fine, fine))  # a filesystem keeping ns, then one of whole seconds
        monkeypatch.setattr(E, "_READ", {})
        reads.clear()
        spec = ClusterSpec("source", cluster_json=path)
        monkeypatch.setattr(E, "_clock", lambda at=fine + tick // 2: at)  # within the tick
        spec.endpoints()
        spec.endpoints()
        assert reads == {path: 2}  # the first read may have missed a change: read again
        monkeypatch.setattr(E, "_clock", lambda at=fine + tick + 1: at)  # after it
        spec.endpoints()
        spec.endpoints()
        spec.endpoints()
        assert reads == {path: 3}  # trusted from then on


def test_a_pickled_spec_carries_no_endpoints_read(tmp_path: Path,
                                                  reads: Counter[Path]) -> None:
    spec = ClusterSpec("source", cluster_json=write(tmp_path / "cluster.json", 19091))
    assert spec.endpoints().thrift2 == "127.0.0.1:19091"
    shipped = pickle.dumps(spec)
    assert b"19091" not in shipped  # the endpoints read stay in this process
    assert pickle.loads(shipped) == spec and hash(pickle.loads(shipped)) == hash(spec)
