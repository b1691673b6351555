"""Sources: local paths and webhdfs:// URLs (against a tiny stand-in WebHDFS server)."""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest
import requests
from conftest import pairs_of, simple_pairs, wal_bytes

from hbase_migrate.errors import Kind, WalSourceError
from hbase_migrate.replay.outage import outage_of
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.source import OPEN_ATTEMPTS, open_source, source_size
from hbase_migrate.wal.writer import WalOptions
from minihbase.wal_files import Leases
from minihbase.webhdfs import WebHdfsServer

FILES: dict[str, bytes] = {}
REQUESTS: list[str] = []
SERVED: list[int] = []  # the offset of each DataNode read


class _WebHdfs(BaseHTTPRequestHandler):
    """NameNode answers GETFILESTATUS/LISTSTATUS and redirects OPEN (307) to a 'DataNode'
    path on the same server (or at ``datanode``), as a real NameNode does."""

    datanode = ""

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
            SERVED.append(offset)
            end = offset + int(query["length"]) if "length" in query else len(data)
            chunk = data[offset:end]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            # a reader may close a stream it no longer needs, as a DataNode sees it
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
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
            self.send_header("Location", f"{self.datanode}/datanode{quote(path)}?{url.query}")
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
    # a file shorter than the tail the opening OPEN starts at: one GETFILESTATUS and one
    # OPEN (size, header, trailer and edits from the one stream)
    assert [r for r in REQUESTS if not r.startswith("/datanode")] == [
        "/webhdfs/v1/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000?GETFILESTATUS",
        "/webhdfs/v1/hbase/WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000?OPEN"]


def test_a_seek_reads_from_its_offset_with_nothing_before_it_read(
        webhdfs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seek far forward (an HFile read from a key range's block) opens the stream at its
    offset: no byte before it is read and skipped, and the meter is told of the bytes read
    alone (the first OPEN, for the size, starts at the file's last 4 KiB and is not read)."""
    monkeypatch.setenv("HADOOP_USER_NAME", "hbase")
    data = bytes(range(256)) * 16384  # 4 MiB
    FILES["/hbase/data/default/t/r/f/hfile"] = data
    SERVED.clear()
    told: list[int] = []
    with open_source(f"{webhdfs}/hbase/data/default/t/r/f/hfile", told.append) as f:
        assert told == []
        f.seek(len(data) - 5000)
        assert f.read(100) == data[-5000:-4900]
        assert list(SERVED) == [len(data) - 4096, len(data) - 5000]
        assert 100 <= sum(told) <= 5000
        f.seek(3000)
        assert f.read(10) == data[3000:3010]
    assert list(SERVED) == [len(data) - 4096, len(data) - 5000, 3000]


def test_webhdfs_missing_file(webhdfs: str) -> None:
    with pytest.raises(FileNotFoundError):
        open_source(f"{webhdfs}/hbase/WALs/none")
    with pytest.raises(FileNotFoundError):
        source_size(f"{webhdfs}/hbase/oldWALs/none")
    with pytest.raises(FileNotFoundError):
        WalReader(f"{webhdfs}/hbase/WALs/none")


# --- files still being written, as HDFS serves them --------------------------------------

OPEN_WAL = "WALs/rs1,16020,1/rs1%2C16020%2C1.1700000000000"


@pytest.fixture
def namenode(tmp_path: Path) -> Iterator[tuple[Path, Leases, str]]:
    """The embedded cluster's WebHDFS over ``tmp_path``, with a lease table: (HBase root,
    leases, ``webhdfs://`` URL of ``OPEN_WAL``)."""
    leases = Leases()
    (tmp_path / OPEN_WAL).parent.mkdir(parents=True)
    with WebHdfsServer(tmp_path, leases=leases) as server:
        yield tmp_path, leases, f"webhdfs://127.0.0.1:{server.port}/hbase/{OPEN_WAL}"


def test_an_open_file_is_read_past_the_namenode_length(
        namenode: tuple[Path, Leases, str]) -> None:
    root, leases, url = namenode
    pairs = simple_pairs(10_000)
    data = wal_bytes(pairs, trailer=False)
    local = root / OPEN_WAL
    local.write_bytes(data)
    header = 4 + 1 + data[4]
    leases.hold(local, header)  # the writer reported its header, then hflushed the rest
    assert source_size(url) == len(data) > 1 << 20  # what a read returns, not the listing
    with WalReader(url) as reader:
        entries = list(reader)
        assert not reader.has_trailer and reader.end_offset == len(data)
    assert pairs_of(entries) == pairs
    middle = entries[len(entries) // 2]
    with WalReader(url, start_offset=middle.offset, start_index=len(entries) // 2) as reader:
        assert pairs_of(list(reader)) == pairs[len(entries) // 2:]
    with WalReader(url, start_offset=len(data), start_index=len(entries)) as reader:
        assert list(reader) == [] and reader.end_offset == len(data)


def test_a_file_that_shrank_is_a_one_line_error(namenode: tuple[Path, Leases, str]) -> None:
    root, leases, url = namenode
    local = root / OPEN_WAL
    local.write_bytes(wal_bytes(simple_pairs(50), trailer=False))
    leases.hold(local, 100)
    with open_source(url) as f:
        local.write_bytes(local.read_bytes()[:200])
        f.seek(300)
        with pytest.raises(WalSourceError) as err:
            f.read(10)
    assert str(err.value).startswith(f"{url}: WebHDFS OPEN (DataNode) at byte offset 300 "
                                     "failed: Cannot seek after EOF")
    assert "\n" not in str(err.value)


def test_an_unreachable_namenode_is_a_one_line_error(closed_port: int) -> None:
    url = f"webhdfs://127.0.0.1:{closed_port}/hbase/{OPEN_WAL}"
    with pytest.raises(WalSourceError, match=rf"^{re.escape(url)}: WebHDFS GETFILESTATUS at "
                       "byte offset 0 failed: .*(refused|Connection)") as err:
        WalReader(url)
    assert "\n" not in str(err.value)


def test_a_datanode_that_closes_every_open_fails_the_file_in_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The NameNode lists the file and redirects its OPEN to a DataNode that takes each
    connection and closes it unanswered (a DataNode web server missing its HTTP codec): a
    bounded number of OPENs, then one line naming the file, the DataNode and what was
    expected, and no outage to wait out."""
    monkeypatch.setattr("hbase_migrate.wal.source.OPEN_BACKOFF", 0.01)
    FILES["/hbase/closed.wal"] = wal_bytes(simple_pairs(5))
    datanode = socket.create_server(("127.0.0.1", 0))
    dn_port = datanode.getsockname()[1]
    accepted: list[int] = []

    def hang_up() -> None:
        while True:
            try:
                conn, _ = datanode.accept()
            except OSError:
                return
            conn.recv(65536)  # the request, then no answer
            accepted.append(1)
            conn.close()

    threading.Thread(target=hang_up, daemon=True).start()
    handler = type("_Closing", (_WebHdfs,), {"datanode": f"http://127.0.0.1:{dn_port}"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"webhdfs://127.0.0.1:{server.server_address[1]}"
    try:
        listed = requests.get(f"http://127.0.0.1:{server.server_address[1]}/webhdfs/v1/hbase"
                              "?op=LISTSTATUS", timeout=10).json()["FileStatuses"]["FileStatus"]
        assert "closed.wal" in [f["pathSuffix"] for f in listed]  # the NameNode lists it
        with pytest.raises(WalSourceError) as err:
            WalReader(f"{base}/hbase/closed.wal")
    finally:
        server.shutdown()
        server.server_close()
        datanode.close()
    text = str(err.value)
    assert "\n" not in text
    assert text.startswith(f"{base}/hbase/closed.wal: WebHDFS OPEN at byte offset 0 failed: "
                           f"127.0.0.1:{dn_port} closed the connection without an answer "
                           f"{OPEN_ATTEMPTS} times in a row"), text
    assert f"while the NameNode at 127.0.0.1:{server.server_address[1]} answers; expected " \
        "an HTTP answer with the file's bytes" in text
    assert err.value.kind is not Kind.OUTAGE and outage_of(err.value) is None
    assert len(accepted) == OPEN_ATTEMPTS


class _Gateway(BaseHTTPRequestHandler):
    """A WebHDFS gateway that streams files itself (no DataNode redirect, as HttpFS),
    answers GETFILESTATUS with the length its NameNode records (``RECORDED``) and refuses an
    OPEN at or past it."""

    _json = _WebHdfs._json

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path).removeprefix("/webhdfs/v1")
        query = parse_qs(url.query)
        if query.get("op") == ["GETFILESTATUS"]:  # the NameNode's length, as HttpFS says
            REQUESTS.append(f"{path}?GETFILESTATUS")
            self._json(200, {"FileStatus": {"type": "FILE", "length": RECORDED[path]}})
            return
        offset = int(query.get("offset", ["0"])[0])
        data = FILES[path]
        REQUESTS.append(f"{path}?OPEN@{offset}")
        if offset >= RECORDED[path] > 0:
            body = json.dumps({"RemoteException": {
                "exception": "IOException", "javaClassName": "java.io.IOException",
                "message": f"Offset={offset} out of the range [0, {RECORDED[path]}); "
                           f"OPEN, path={path}"}}).encode()
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
        else:
            body = data[offset:]
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


RECORDED: dict[str, int] = {}


def test_without_a_datanode_a_refused_offset_is_read_from_the_start() -> None:
    pairs = simple_pairs(10_000)
    data = wal_bytes(pairs, trailer=False)
    FILES["/hbase/gw.wal"] = data
    RECORDED["/hbase/gw.wal"] = 4 + 1 + data[4]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"webhdfs://127.0.0.1:{server.server_address[1]}/hbase/gw.wal"
        with WalReader(url) as reader:
            entries = list(reader)
        assert pairs_of(entries) == pairs
        REQUESTS.clear()
        at = entries[9000].offset
        assert at > 1 << 20  # past the first read's buffer
        with WalReader(url, start_offset=at, start_index=9000) as reader:
            assert pairs_of(list(reader)) == pairs[9000:]
        # refused past the recorded length, served from offset 0 and skipped forward
        assert f"/hbase/gw.wal?OPEN@{at}" in REQUESTS
    finally:
        server.shutdown()
        server.server_close()


# --- what opening a file costs -----------------------------------------------------------


def _settled(server: WebHdfsServer) -> int:
    """The file bytes ``server`` sent, once no OPEN stream is still being written."""
    sent, deadline = -1, time.monotonic() + 5
    while sent != server.bytes_sent and time.monotonic() < deadline:
        sent = server.bytes_sent
        time.sleep(0.2)
    return sent


@pytest.mark.parametrize("tail", [4096, 100, 10_000])
def test_reading_a_tail_sends_the_tail_and_no_more_than_4_kib_besides(
        tmp_path: Path, tail: int) -> None:
    """Opening a file and reading its last ``tail`` bytes (an HFile reader's first read,
    4 KiB) makes the server send those bytes and at most 4 KiB more, in one GETFILESTATUS
    and at most two OPENs (each a NameNode redirect and a DataNode stream), however large
    the file: nothing from its start to learn the size."""
    data = random.Random(72).randbytes(8 << 20)
    local = tmp_path / "data/default/t/r/f/hfile"
    local.parent.mkdir(parents=True)
    local.write_bytes(data)
    told: list[int] = []
    with WebHdfsServer(tmp_path) as server:
        url = f"webhdfs://127.0.0.1:{server.port}/hbase/data/default/t/r/f/hfile"
        with open_source(url, told.append) as f:
            assert f.seek(-tail, io.SEEK_END) == len(data) - tail
            assert f.read(tail) == data[-tail:]
        sent = _settled(server)
        requests_by_op = dict(server.requests)
    assert sum(told) == tail
    if tail == 4096:  # the opening OPEN's own stream
        assert sent == tail and requests_by_op == {"GETFILESTATUS": 1, "OPEN": 2}
    else:  # that stream dropped, the tail read from a DataNode stream of its own
        assert tail <= sent <= tail + 4096
        assert requests_by_op == {"GETFILESTATUS": 1, "OPEN": 3}


def test_an_open_file_recorded_past_the_tail_has_its_visible_size(tmp_path: Path) -> None:
    """A file being written whose NameNode length lies mid-file (a completed block): its
    size is still every byte the DataNode serves, and a read past the NameNode's length
    goes to that DataNode."""
    data = random.Random(7).randbytes(3 << 20)
    local = tmp_path / OPEN_WAL
    local.parent.mkdir(parents=True)
    local.write_bytes(data)
    leases = Leases()
    recorded = 1 << 20
    leases.hold(local, recorded)
    with WebHdfsServer(tmp_path, leases=leases) as server:
        url = f"webhdfs://127.0.0.1:{server.port}/hbase/{OPEN_WAL}"
        listed = requests.get(f"{server.url}/webhdfs/v1/hbase/{quote(OPEN_WAL)}",
                              params={"op": "GETFILESTATUS"}, timeout=10).json()
        assert listed["FileStatus"]["length"] == recorded
        assert source_size(url) == len(data)
        with open_source(url) as f:
            assert f.seek(0, io.SEEK_END) == len(data)
            f.seek(recorded + 1000)
            assert f.read(5000) == data[recorded + 1000 : recorded + 6000]
            f.seek(10)
            assert f.read(10) == data[10:20]
