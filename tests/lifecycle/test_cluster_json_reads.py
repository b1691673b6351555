"""A migration's ``cluster.json`` files are read once per process, not at every use: a whole
snapshot and a whole replay over the embedded clusters, run at once after the clusters
started (as the suite and a user's first run do), read each cluster's file once; a cluster
restarted (its file written anew) is read again, once, and the next step reaches it. Reads
are counted twice over: calls of the one function parsing the file, and opens of the file
for reading by anything in the process (a step parsing it by itself is counted too).
What a reconnect reads: ``tests/cluster/test_endpoints_cache.py`` and
``tests/replay/test_target_faults.py``."""

from __future__ import annotations

import builtins
import io
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.cluster import endpoints as E
from hbase_migrate.config import load_config
from minihbase.regionserver import WalSettings
from tests.support.minicluster import EmbeddedClusters, run_workload, write_migration

pytestmark = pytest.mark.integration


def test_each_cluster_json_is_read_once_per_process_and_again_when_replaced(
        make_embedded: EmbeddedClusters, transport: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    reads: Counter[Path] = Counter()  # by file
    read = E._read_cluster_json

    def counted(path: str | Path, where: Path) -> E.ClusterEndpoints:
        reads[where] += 1
        return read(path, where)

    monkeypatch.setattr(E, "_read_cluster_json", counted)  # the one function reading it
    monkeypatch.setattr(E, "_READ", {})  # this process has read none yet
    # Reads taken as a tick after the file's last change: a first read within one (a fast
    # machine reads a just-started cluster's file in under 20 ms) is rightly not trusted and
    # read again, which is test_endpoints_cache.py's case, not this one's.
    monkeypatch.setattr(E, "_clock", lambda: time.time_ns() + E.COARSE_TICK_NS)
    src, dst = make_embedded.pair(transport, wal=WalSettings(region_servers=2))
    run_workload(src, "orders", seed=3, ops=60)
    spec = load_config(write_migration(tmp_path, src, dst, "orders"))
    assert spec.source.cluster_json is not None and spec.target.cluster_json is not None
    files = spec.source.cluster_json.absolute(), spec.target.cluster_json.absolute()
    opened = count_opens(monkeypatch, files)
    assert lifecycle.prepare(spec).passed
    assert lifecycle.snapshot(spec).passed
    assert reads == opened == {files[0]: 1, files[1]: 1}
    run_workload(src, "orders", seed=4, ops=60)
    assert lifecycle.replay(spec).exit_code == 0
    assert reads == opened == {files[0]: 1, files[1]: 1}

    assert dst.thrift1 is not None and dst.thrift2 is not None
    ports = dst.thrift1.port, dst.thrift2.port  # the gateways a migration is recognised by
    dst.stop()
    dst = make_embedded("target", over=transport, folder=dst.data_dir, thrift_port=ports[0],
                        thrift2_port=ports[1])  # restarted, as the chaos harness does...
    assert dst.write_cluster_json() == files[1]  # ...and its file written anew
    run_workload(src, "orders", seed=5, ops=60)
    assert lifecycle.replay(spec).exit_code == 0
    assert reads == opened == {files[0]: 1, files[1]: 2}


def count_opens(monkeypatch: pytest.MonkeyPatch, files: tuple[Path, ...]) -> Counter[Path]:
    """The opens of ``files`` for reading from now on, by file, whoever opens them
    (``open``, ``io.open`` and ``Path.read_text`` all go through ``io.open``)."""
    opened: Counter[Path] = Counter()
    real_open = io.open

    def opening(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, str | os.PathLike) and "r" in mode:
            path = Path(file).absolute()
            if path in files:
                opened[path] += 1
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(io, "open", opening)
    monkeypatch.setattr(builtins, "open", opening)
    return opened
