"""Sources: local paths and webhdfs:// URLs (against a tiny stand-in WebHDFS server)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest
from conftest import pairs_of, simple_pairs, wal_bytes

from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.source import open_source, source_size
from hbase_migrate.wal.writer import WalOptions

FILES: dict[str, bytes] = {}
REQUESTS: list[str] = []


class _WebHdfs(BaseHTTPRequestHandler):
    """NameNode answers GETFILESTATUS/LISTSTATUS and redirects OPEN (307) to a 'DataNode'
    path on the same server, as a real NameNode does."""

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _missing(self, path: str) -> None:
        self._json(
            404,
            {
                "RemoteException": {
                    "exception": "FileNotFoundException",
                    "javaClassName": "java.io.FileNotFoundException",
                    "message": f"File does not exist: {path}",
                }
            },
        )

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        url = url._replace(path=unquote(url.path))
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        REQUESTS.append(f"{url.path}?{query.get('op')}")
        if url.path.startswith("/datanode"):
            data = FILES[url.path.removeprefix("/datanode")]
            offset = int(query.get("offset", 0))
            end = offset + int(query["length"]) if "length" in query else len(data)
            chunk = data[offset:end]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            self.wfile.write(chunk)
            return
        path = url.path.removeprefix("/webhdfs/v1")
        op = query.get("op")
        if op == "LISTSTATUS":
            names = [p.rsplit("/", 1)[1] for p in FILES if p.rsplit("/", 1)[0] == path.rstrip("/")]
            statuses = [
                {"pathSuffix": n, "type": "FILE", "length": len(FILES[f"{path.rstrip('/')}/{n}"])}
                for n in names
            ]
            self._json(200, {"FileStatuses": {"FileStatus": statuses}})
        elif path not in FILES:
            self._missing(path)
        elif op == "GETFILESTATUS":
            self._json(
                200, {"FileStatus": {"type": "FILE", "length": len(FILES[path]), "pathSuffix": ""}}
            )
        elif op == "OPEN":
            self.send_response(307)
            self.send_header("Location", f"/datanode{quote(path)}?{url.query}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self._json(
                400, {"RemoteException": {"exception": "IllegalArgumentException", "message": op}}
            )


@pytest.fixture(scope="module")
def webhdfs() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WebHdfs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"webhdfs://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_local_path(tmp_path: Path) -> None:
    path = tmp_path / "wal"
    path.write_bytes(b"PWAL123")
    with open_source(str(path)) as f:
        assert f.read() == b"PWAL123"
    assert source_size(str(path)) == 7
    with pytest.raises(FileNotFoundError):
        open_source(str(tmp_path / "gone"))
    with pytest.raises(FileNotFoundError):
        WalReader(str(tmp_path / "gone"))


def test_webhdfs_read_seek_and_size(webhdfs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HADOOP_USER_NAME", "hbase")
    pairs = simple_pairs(30, tags=True)
    data = wal_bytes(pairs, WalOptions(compression=True))
    FILES["/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000"] = data
    url = f"{webhdfs}/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000"
    assert source_size(url) == len(data)
    with open_source(url) as f:
        assert f.read(4) == b"PWAL"
        f.seek(len(data) - 8)
        assert f.read() == b"\x00\x00\x00\x00LAWP"
    REQUESTS.clear()
    with WalReader(url) as reader:
        entries = list(reader)
        assert reader.name == url and reader.has_trailer and reader.end_reason == "trailer"
    assert pairs_of(entries) == pairs
    assert any(r.startswith("/datanode") for r in REQUESTS)  # the 307 redirect was followed
    # a file smaller than the read buffer: one OPEN (size, header, trailer and edits from
    # the one stream), no GETFILESTATUS
    assert [r for r in REQUESTS if not r.startswith("/datanode")] == [
        "/webhdfs/v1/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000?OPEN"]


def test_webhdfs_missing_file(webhdfs: str) -> None:
    with pytest.raises(FileNotFoundError):
        open_source(f"{webhdfs}/hbase/WALs/none")
    with pytest.raises(FileNotFoundError):
        source_size(f"{webhdfs}/hbase/oldWALs/none")
    with pytest.raises(FileNotFoundError):
        WalReader(f"{webhdfs}/hbase/WALs/none")
