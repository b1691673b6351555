"""An HBase root folder with live, splitting and archived WALs, and a WebHDFS server over it;
a self-signed certificate for 127.0.0.1 (https servers of the tests); the reads of each
``cluster.json`` counted."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster import endpoints as E
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


@pytest.fixture
def tls_server_context(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1, and that
    certificate (the CA a client is to trust)."""
    if not shutil.which("openssl"):
        pytest.skip("no openssl to make a certificate")
    cert, key = tmp_path / "server.pem", tmp_path / "server.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context, cert


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """The reads of each ``cluster.json`` from now on, by path (none read before)."""
    counted: Counter[Path] = Counter()
    read = E._read_cluster_json

    def counting(path: str | Path, where: Path) -> E.ClusterEndpoints:
        counted[where] += 1
        return read(path, where)

    monkeypatch.setattr(E, "_read_cluster_json", counting)
    monkeypatch.setattr(E, "_READ", {})
    return counted
