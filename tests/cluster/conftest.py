"""An HBase root folder with live, splitting and archived WALs, and a WebHDFS server over it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from minihbase.webhdfs import WebHdfsServer
from tests.cluster.walroot import TREE, content


@pytest.fixture
def hbase_root(tmp_path: Path) -> Path:
    root = tmp_path / "hbase"
    for item in TREE:
        path = root / item.relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content(item.relpath, item.size))
        os.utime(path, ns=(item.mtime_ms * 10**6, item.mtime_ms * 10**6))
    return root


@pytest.fixture
def webhdfs(hbase_root: Path) -> Iterator[WebHdfsServer]:
    with WebHdfsServer(hbase_root, owner="hbase") as server:
        yield server
