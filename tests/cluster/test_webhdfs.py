"""The embedded WebHDFS endpoint, driven by the ``hdfs`` package's InsecureClient (what
Airflow's WebHDFS hook uses) and by raw HTTP where the wire shape itself matters."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import requests
from hdfs import HdfsError, InsecureClient

from minihbase.webhdfs import WebHdfsServer
from tests.cluster.walroot import LIVE, TREE, content

pytestmark = pytest.mark.integration

FILE_STATUS_KEYS = {"accessTime", "blockSize", "childrenNum", "fileId", "group", "length",
                    "modificationTime", "owner", "pathSuffix", "permission", "replication",
                    "storagePolicy", "type"}
LIVE_HDFS = f"/hbase/{LIVE.relpath}"


@pytest.fixture
def client(webhdfs: WebHdfsServer) -> InsecureClient:
    return InsecureClient(webhdfs.url, user="hbase")


def test_list_and_status(client: InsecureClient) -> None:
    assert client.list("/") == ["hbase"]
    assert client.list("/hbase") == ["WALs", "oldWALs"]
    assert client.list("/hbase/WALs") == sorted(
        {item.relpath.split("/")[1] for item in TREE if item.relpath.startswith("WALs/")})
    listing = dict(client.list("/hbase/oldWALs", status=True))
    assert set(listing) == {"pv2-00000000000000000001.log", "rs1.example.com%2C16020%2C"
                            "1700000000000.1700000000000", "rs3,16020,3"}
    assert listing["rs3,16020,3"]["type"] == "DIRECTORY"
    assert listing["rs3,16020,3"]["childrenNum"] == 1
    for item in TREE:
        status = client.status(f"/hbase/{item.relpath}")
        assert set(status) == FILE_STATUS_KEYS
        assert (status["type"], status["length"], status["modificationTime"]) == \
            ("FILE", item.size, item.mtime_ms)
        assert (status["owner"], status["pathSuffix"], status["blockSize"]) == \
            ("hbase", "", 128 * 1024 * 1024)
    assert client.status("/")["type"] == "DIRECTORY"  # what WebHDFSHook probes first


def test_content_summary(client: InsecureClient) -> None:
    summary = client.content("/hbase")
    assert summary["fileCount"] == len(TREE)
    assert summary["length"] == sum(item.size for item in TREE)
    # /hbase, WALs, two server dirs, oldWALs, oldWALs/rs3,16020,3
    assert summary["directoryCount"] == 6
    assert client.content("/")["directoryCount"] == 7


def test_read_whole_file_and_a_range(client: InsecureClient) -> None:
    expected = content(LIVE.relpath, LIVE.size)
    with client.read(LIVE_HDFS) as reader:
        assert reader.read() == expected
    with client.read(LIVE_HDFS, offset=100_000, length=70_000) as reader:
        assert reader.read() == expected[100_000:170_000]
    with client.read(LIVE_HDFS, offset=LIVE.size - 5, chunk_size=2) as chunks:
        assert b"".join(chunks) == expected[-5:]


def test_a_file_moved_to_old_wals_is_not_found(
    client: InsecureClient, hbase_root: Path
) -> None:
    name = LIVE.relpath.rsplit("/", 1)[1]
    (hbase_root / LIVE.relpath).rename(hbase_root / "oldWALs" / name)
    with pytest.raises(HdfsError) as err:
        client.status(LIVE_HDFS)
    assert err.value.exception == "FileNotFoundException"
    assert str(err.value) == f"File does not exist: {LIVE_HDFS}"
    with pytest.raises(HdfsError) as err, client.read(LIVE_HDFS) as reader:
        reader.read()
    assert err.value.exception == "FileNotFoundException"
    assert client.status(f"/hbase/oldWALs/{name}")["length"] == LIVE.size


def test_wire_shapes_redirect_and_errors(webhdfs: WebHdfsServer) -> None:
    base = f"{webhdfs.url}/webhdfs/v1"
    # the hdfs client percent-encodes '%' in names: %2C travels as %252C
    url = f"{base}{LIVE_HDFS.replace('%', '%25')}"
    first = requests.get(url, params={"op": "OPEN", "offset": 3, "user.name": "hbase"},
                         allow_redirects=False, timeout=5)
    assert first.status_code == 307
    assert "namenoderpcaddress=" in first.headers["Location"]
    data = requests.get(first.headers["Location"], timeout=5)
    assert data.headers["Content-Type"] == "application/octet-stream"
    assert data.content == content(LIVE.relpath, LIVE.size)[3:]

    missing = requests.get(f"{base}/hbase/WALs/nope", params={"op": "GETFILESTATUS"}, timeout=5)
    assert missing.status_code == 404
    assert missing.json() == {"RemoteException": {
        "exception": "FileNotFoundException", "javaClassName": "java.io.FileNotFoundException",
        "message": "File does not exist: /hbase/WALs/nope"}}

    bad_op = requests.get(f"{base}/hbase", params={"op": "FROBNICATE"}, timeout=5)
    assert bad_op.status_code == 400
    assert bad_op.json()["RemoteException"]["javaClassName"] == \
        "java.lang.IllegalArgumentException"

    write = requests.put(f"{base}/hbase/x", params={"op": "MKDIRS"}, timeout=5)
    assert write.status_code == 403
    assert write.json()["RemoteException"]["exception"] == "AccessControlException"

    # as HDFS 3: the NameNode refuses an offset at or past its length, a DataNode past the end
    past = requests.get(url, params={"op": "OPEN", "offset": LIVE.size}, timeout=5)
    assert past.status_code == 403
    assert past.json()["RemoteException"]["message"] == (
        f"Offset={LIVE.size} out of the range [0, {LIVE.size}); OPEN, path={LIVE_HDFS}")
    datanode = first.headers["Location"].replace("offset=3", f"offset={LIVE.size + 1}")
    eof = requests.get(datanode, timeout=5)
    assert eof.status_code == 403
    assert eof.json()["RemoteException"] == {
        "exception": "EOFException", "javaClassName": "java.io.EOFException",
        "message": "Cannot seek after EOF"}


def test_writes_through_the_client_are_refused(client: InsecureClient) -> None:
    with pytest.raises(HdfsError) as err:
        client.makedirs("/hbase/new")
    assert err.value.exception == "AccessControlException"


def test_airflow_webhdfs_hook(
    webhdfs: WebHdfsServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Airflow's hook over the endpoint, its connection from the environment (no database)."""
    if "airflow" not in sys.modules:
        monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "airflow"))
    monkeypatch.setenv("AIRFLOW_CONN_WEBHDFS_DEFAULT", f"webhdfs://hbase@{webhdfs.host}:"
                                                       f"{webhdfs.port}")
    hooks = pytest.importorskip("airflow.providers.apache.hdfs.hooks.webhdfs")
    hook = hooks.WebHDFSHook()
    assert hook.check_for_path(LIVE_HDFS)
    assert not hook.check_for_path("/hbase/WALs/gone")
    small = next(item for item in TREE if item.size == 10)
    assert hook.read_file(f"/hbase/{small.relpath}") == content(small.relpath, 10)
