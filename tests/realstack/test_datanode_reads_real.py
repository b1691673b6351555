"""Files read from a real HDFS's DataNodes over its own protocols (``hdfs/namenode``
and ``datanode``: the NameNode's ``getBlockLocations``, the DataNodes' ``READ_BLOCK``), on the
session's real HBase 2.6.1 (its mini HDFS, Hadoop 2.10): a file of several blocks written
over WebHDFS reads back byte for byte, whole and from random offsets across block
boundaries, with and without the DataNodes' checksums; a missing file is
``FileNotFoundError``; a block whose DataNode does not answer fails naming the file, the
byte offset and the DataNode."""

from __future__ import annotations

import io
import random
import uuid
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.errors import WalSourceError
from hbase_migrate.hdfs import datanode
from hbase_migrate.hdfs.datanode import HdfsFile
from hbase_migrate.hdfs.namenode import FileBlocks
from realstack.hbase import RealHBase

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
BLOCK = 1 << 20  # the file's block size: a few blocks from a few MB


@pytest.fixture(scope="module")
def written(real_hbase: RealHBase) -> Iterator[tuple[str, bytes]]:
    """(the hdfs:// URL, the bytes) of a file of 3.5 blocks written over WebHDFS."""
    from hdfs import InsecureClient

    endpoints = load_cluster_json(real_hbase.cluster_json)
    assert endpoints.webhdfs and endpoints.namenode
    client = InsecureClient(endpoints.webhdfs, user="root")
    path = f"/tmp/datanode-reads-{uuid.uuid4().hex}"
    data = random.Random(7).randbytes(3 * BLOCK + BLOCK // 2 + 17)
    client.write(path, data, blocksize=BLOCK)
    try:
        yield f"hdfs://{endpoints.namenode}{path}", data
    finally:
        client.delete(path)


@pytest.mark.parametrize("checksums", [True, False])
def test_a_file_of_several_blocks_reads_back_exactly(written: tuple[str, bytes],
                                                     checksums: bool) -> None:
    url, data = written
    with HdfsFile(url, checksums=checksums) as raw:
        assert raw.size == len(data)
        assert io.BufferedReader(raw, buffer_size=BLOCK // 3).read() == data
    draw = random.Random(11)
    with HdfsFile(url, checksums=checksums) as raw:
        reader = io.BufferedReader(raw, buffer_size=4096)
        # reads at random offsets, many across a block boundary; one at each boundary
        offsets = [draw.randrange(len(data)) for _ in range(20)] + [
            n * BLOCK - 5 for n in (1, 2, 3)] + [len(data) - 3]
        for offset in offsets:
            size = draw.randrange(1, 3 * BLOCK // 2)
            reader.seek(offset)
            assert reader.read(size) == data[offset : offset + size], (offset, size)


def test_a_missing_file_is_not_found(written: tuple[str, bytes]) -> None:
    url, _ = written
    with pytest.raises(FileNotFoundError, match="-gone"):
        HdfsFile(url + "-gone")


def test_a_datanode_that_does_not_answer_fails_the_read_naming_it(
        written: tuple[str, bytes], closed_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    url, data = written
    dead = f"127.0.0.1:{closed_port}"
    real = datanode.namenode

    class Moved:  # the NameNode's answer, every block but the first on a DataNode gone
        def __init__(self, address: str, timeout: float = 60.0) -> None:
            self.real = real(address, timeout)

        def file_blocks(self, path: str) -> FileBlocks:
            found = self.real.file_blocks(path)
            return found._replace(blocks=tuple(b._replace(datanodes=(dead,)) if b.offset
                                               else b for b in found.blocks))

    monkeypatch.setattr(datanode, "namenode", Moved)
    with HdfsFile(url, checksums=False) as raw:
        assert raw.read(100) == data[:100]  # the first block's DataNode answers
        raw.seek(BLOCK + 10)
        with pytest.raises(WalSourceError) as failed:
            raw.read(100)
    said = str(failed.value)
    assert url in said and f"byte offset {BLOCK + 10}" in said and dead in said
