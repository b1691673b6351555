"""The embedded ZooKeeper: a real server that kazoo can use, and clear failures."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from minihbase.zookeeper import ZooKeeperServer, four_letter_word, zookeeper_classpath
from stackprocs.process import EmbeddedStackError, find_java

pytestmark = pytest.mark.integration


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for every practical purpose.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def test_kazoo_round_trip_and_process_gone_after_stop(tmp_path: Path) -> None:
    server = ZooKeeperServer(tmp_path / "zk").start()
    pid = server.pid
    assert pid is not None
    client = KazooClient(hosts=server.address, timeout=5)
    client.start(timeout=10)
    try:
        client.create("/hm-test/node", b"payload", makepath=True)
        data, stat = client.get("/hm-test/node")
        assert data == b"payload"
        assert stat.dataLength == len(b"payload")
        client.delete("/hm-test/node")
        assert client.exists("/hm-test/node") is None
    finally:
        client.stop()
        client.close()
        server.stop()
    assert not _pid_alive(pid)


def test_session_fixture_answers_ruok(zookeeper: ZooKeeperServer) -> None:
    host, port = zookeeper.address.split(":")
    assert four_letter_word(host, int(port)) == b"imok"


def test_cli_prints_endpoint_and_stops_on_sigterm(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "zookeeper", "start",
         "--dir", str(tmp_path / "zk"), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        host, port = ready["zookeeper"].split(":")
        assert host == "127.0.0.1"
        assert ready["pid"] == proc.pid
        client = KazooClient(hosts=ready["zookeeper"], timeout=5)
        client.start(timeout=10)
        client.ensure_path("/cli-check")
        assert client.exists("/cli-check") is not None
        client.stop()
        client.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while _pid_alive(ready["java_pid"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _pid_alive(ready["java_pid"])
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=1).close()


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(EmbeddedStackError, match=f"port {port} on 127.0.0.1 is already in use"):
            ZooKeeperServer(tmp_path / "zk", port=port).start()


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "no-jdk"))
    with pytest.raises(EmbeddedStackError, match="Java 17\\+ is required"):
        find_java()


def test_missing_jars_are_named(tmp_path: Path) -> None:
    (tmp_path / "zookeeper-3.9.4.jar").write_bytes(b"")
    with pytest.raises(EmbeddedStackError, match="metrics-core") as info:
        zookeeper_classpath(tmp_path)
    assert "zookeeper-[0-9]*.jar" not in str(info.value)


def test_no_answer_in_time_is_a_clear_error(tmp_path: Path) -> None:
    expected = r"did not answer on 127\.0\.0\.1:\d+ within 0\.05 s"
    with pytest.raises(EmbeddedStackError, match=expected):
        ZooKeeperServer(tmp_path / "zk").start(timeout=0.05)


def _java_children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def test_cli_on_a_given_port_starts_exactly_one_server_and_owns_its_folder(
        tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "zk"
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "zookeeper", "start", "--dir", str(folder),
         "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        ready = json.loads(line)
        assert ready["zookeeper"] == f"127.0.0.1:{port}"
        assert _java_children(proc.pid) == [ready["java_pid"]]  # one JVM, not two
        second = subprocess.run(
            [sys.executable, "-m", "hbase_migrate", "zookeeper", "start", "--dir",
             str(folder), "--port", "0"], check=False, capture_output=True, text=True,
            timeout=60)
        assert second.returncode == 2
        assert second.stderr.strip() == (f"hbase-migrate: error: the ZooKeeper folder {folder} "
                                         f"is in use by process {proc.pid}; stop it or give "
                                         "another --dir")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def test_a_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "hbase_migrate", "zookeeper", "start",
                             "--dir", "/proc/zk"], check=False, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "hbase-migrate: error: cannot create the ZooKeeper folder /proc/zk: No such file or "
        "directory"]


@pytest.mark.parametrize("given_port", [True, False], ids=["given-port", "port-0"])
def test_started_then_entered_is_one_server(tmp_path: Path, given_port: bool) -> None:
    """``zookeeper start`` does ``with ZooKeeperServer(...).start()``: one JVM, either way."""
    port = 0
    if given_port:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    before = set(_java_children(os.getpid()))
    server = ZooKeeperServer(tmp_path / "zk", port)
    with server.start(timeout=60) as entered:
        assert entered is server
        assert set(_java_children(os.getpid())) - before == {server.pid}
        if given_port:
            assert server.address == f"127.0.0.1:{port}"
        assert four_letter_word("127.0.0.1", server.port) == b"imok"
        with pytest.raises(EmbeddedStackError, match="is in use by process"):
            ZooKeeperServer(tmp_path / "zk", 0).start()  # one server per folder
        assert set(_java_children(os.getpid())) - before == {server.pid}
    assert set(_java_children(os.getpid())) - before == set()


def test_cli_on_port_0_starts_exactly_one_server(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "zookeeper", "start", "--dir",
         str(tmp_path / "zk"), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        assert _java_children(proc.pid) == [json.loads(line)["java_pid"]]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
