"""What the DataNode reader does with DataNodes that misbehave, against small servers speaking
``READ_BLOCK`` as ``datatransfer.proto`` gives it (a good one's answers are checked against a
real HDFS in ``tests/realstack/test_datanode_reads_real.py``): a replica sending a chunk that
fails its CRC32C is left for the next, which serves the read; with every replica bad, one
sending a packet for another offset than asked, or one refusing the block's access token,
the read fails naming the file, the byte offset, each
DataNode and what it said. The ``namenode`` setting is refused where it cannot hold."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.errors import ConfigError, Kind, WalSourceError
from hbase_migrate.hdfs import datanode
from hbase_migrate.hdfs.namenode import Block, FileBlocks, NameNode, NameNodeUnreachableError
from hbase_migrate.hfile.checksum import crc32c
from hbase_migrate.wal.protobuf import (
    Message,
    bytes_field,
    decode_varint,
    delimited,
    varint_field,
)

DATA = bytes(range(256)) * 12  # 3,072 bytes: six 512-byte chunks
CRC32C_TYPE = 2


def packet(offset: int, seqno: int, data: bytes, sums: bytes, last: bool) -> bytes:
    header = (b"\x09" + struct.pack("<q", offset) + b"\x11" + struct.pack("<q", seqno) +
              b"\x18" + bytes((last,)) + b"\x25" + struct.pack("<i", len(data)))
    return struct.pack(">IH", 4 + len(sums) + len(data), len(header)) + header + sums + data


class FakeDataNode:
    """Serves ``DATA`` as one block: ``behaviour`` "good", "bad-checksum" (chunk 2's CRC
    flipped), "shifted" (its packet says it starts a chunk later than it does) or "token"
    (refuses the access token)."""

    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.server = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.server.getsockname()[1]}"
        self.asked = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                self.asked += 1
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        head = conn.recv(3 + 5)
        length, pos = decode_varint(head, 3)
        request = head[pos:]
        while len(request) < length:
            request += conn.recv(length - len(request))
        if self.behaviour == "token":
            conn.sendall(delimited(varint_field(1, 5) + bytes_field(
                5, b"Block token with block_token_identifier expired")))
            return
        start = Message(request, "OpReadBlockProto").req_int(2, "offset") // 512 * 512
        checksum = bytes_field(1, varint_field(1, CRC32C_TYPE) + varint_field(2, 512))
        conn.sendall(delimited(varint_field(1, 0) + bytes_field(
            4, checksum + varint_field(2, start))))  # the first chunk's offset, as HDFS's
        sums = b"".join(struct.pack(">I", crc32c(DATA[i : i + 512]))
                        for i in range(start, len(DATA), 512))
        if self.behaviour == "bad-checksum":  # the third chunk sent
            sums = sums[:8] + bytes(4) + sums[12:]
        said_at = start + 512 if self.behaviour == "shifted" else start
        try:
            conn.sendall(packet(said_at, 0, DATA[start:], sums, False) +
                         packet(len(DATA), 1, b"", b"", True))
            conn.recv(16)  # the client's status
        except OSError:
            pass

    def close(self) -> None:
        self.server.close()


class FakeNameNode:
    def __init__(self, nodes: tuple[str, ...]) -> None:
        self.nodes = nodes

    def file_blocks(self, path: str) -> FileBlocks:
        block = Block(b"\x0a\x02bp\x10\x01\x18\x01", 0, len(DATA), self.nodes, b"")
        return FileBlocks(len(DATA), (block,), False)


@pytest.fixture
def replicas(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
             ) -> Iterator[list[FakeDataNode]]:
    nodes = [FakeDataNode(kind) for kind in request.param]
    fake = FakeNameNode(tuple(n.address for n in nodes))
    monkeypatch.setattr(datanode, "namenode", lambda address, timeout=60.0: fake)
    yield nodes
    for node in nodes:
        node.close()


@pytest.mark.parametrize("replicas", [("bad-checksum", "good")], indirect=True)
def test_a_replica_with_a_bad_chunk_is_left_for_the_next(replicas: list[FakeDataNode]
                                                         ) -> None:
    with datanode.HdfsFile("hdfs://nn:8020/f", checksums=True) as raw:
        assert raw.read() == DATA
    assert [n.asked for n in replicas] == [1, 1]


@pytest.mark.parametrize("replicas", [("bad-checksum", "bad-checksum")], indirect=True)
def test_every_replica_bad_fails_naming_each(replicas: list[FakeDataNode]) -> None:
    with datanode.HdfsFile("hdfs://nn:8020/f", checksums=True) as raw:
        raw.seek(700)
        with pytest.raises(WalSourceError) as failed:
            raw.read(10)
    said = str(failed.value)
    assert "hdfs://nn:8020/f" in said and "byte offset 700" in said
    assert all(f"{n.address}: chunk 2 of a packet fails its checksum" in said
               for n in replicas), said
    assert failed.value.kind is Kind.RETRY  # bad bytes, not an outage to wait out


@pytest.mark.parametrize("replicas", [("shifted",)], indirect=True)
def test_a_packet_at_another_offset_than_asked_is_refused(replicas: list[FakeDataNode]
                                                          ) -> None:
    with datanode.HdfsFile("hdfs://nn:8020/f", checksums=False) as raw, \
            pytest.raises(WalSourceError) as failed:
        raw.read(10)
    assert "at block offset 512" in str(failed.value) and "expected its data at 0" in str(
        failed.value)


@pytest.mark.parametrize("replicas", [("token",)], indirect=True)
def test_a_refused_token_is_said(replicas: list[FakeDataNode]) -> None:
    with datanode.HdfsFile("hdfs://nn:8020/f", checksums=False) as raw, \
            pytest.raises(WalSourceError) as failed:
        raw.read(10)
    assert "ERROR_ACCESS_TOKEN: Block token with block_token_identifier expired" in str(
        failed.value)


def test_a_namenode_that_does_not_answer_is_an_outage(closed_port: int) -> None:
    """Waited out as any service's outage, naming the NameNode, not a refusal."""
    with pytest.raises(NameNodeUnreachableError) as failed:
        NameNode(f"127.0.0.1:{closed_port}", "migrate", timeout=5).file_blocks("/f")
    assert failed.value.kind is Kind.OUTAGE
    assert f"NameNode 127.0.0.1:{closed_port} does not answer" in str(failed.value)


def test_a_namenode_needs_webhdfs_and_no_kerberos() -> None:
    """The setting is refused where it cannot hold: without WebHDFS (listings and copies go
    there) and on a Kerberos-secured cluster (Hadoop RPC without SASL)."""
    with pytest.raises(ConfigError, match="namenode = 'nn:8020' needs webhdfs too"):
        ClusterEndpoints("c", zookeeper="zk:2181", namenode="nn:8020")
    with pytest.raises(ConfigError, match="namenode"):
        ClusterEndpoints("c", zookeeper="zk:2181", webhdfs="http://nn:9870", namenode="nn")
    secured = ClusterSecurity(auth="kerberos", principal="m@EXAMPLE.COM", keytab="k")
    with pytest.raises(ConfigError, match="Kerberos-secured cluster: reading the DataNodes"):
        HdfsRoot("http://nn:9870", "/hbase", "source", security=secured, namenode="nn:8020")
    plain = HdfsRoot("http://nn:9870", "/hbase", "source", namenode="nn:8020")
    assert plain.read_url("data/t") == "hdfs://nn:8020/hbase/data/t"
    assert HdfsRoot("http://nn:9870", "/hbase", "source").read_url("data/t") == \
        "webhdfs://nn:9870/hbase/data/t"
