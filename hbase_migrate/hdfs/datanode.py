"""A file's bytes straight from the DataNodes, over HDFS's data transfer protocol, as a region
server reads its store files: no WebHDFS in the path (whose DataNode reads the block through
its own client and streams it again as HTTP, most of a file read's cost on the cluster).

:class:`HdfsFile` asks the NameNode (:mod:`~hbase_migrate.hdfs.namenode`) where the
file's blocks are, then reads from the position on with ``READ_BLOCK`` (``datatransfer.proto``,
``DataTransferProtocol`` version 28, op 81): a 2-byte version, the op, a delimited
``OpReadBlockProto`` (the block, its access token, offset and length); the DataNode answers a
delimited ``BlockOpResponseProto`` (the first packet's offset, aligned back to a checksum
chunk), then packets (a 4-byte length counting itself, checksums and data; a 2-byte header
length; a ``PacketHeaderProto``; the checksums; the data) up to an empty last one; the client
ends with a delimited ``ClientReadStatusProto``. A stream runs to its block's end; a seek
elsewhere starts another.

``checksums=False`` asks for the data alone, as HBase does for store files whose blocks carry
their own checksums (``hbase.regionserver.checksum.verify``: the HFile reader checks every
block's); with ``checksums=True`` every chunk is checked against the DataNode's CRC32C or
CRC32. A replica that refuses or drops the read is left for the next; with none left the read
fails naming the file, the byte offset and each DataNode's answer.
"""

from __future__ import annotations

import io
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from hbase_migrate.errors import WalSourceError
from hbase_migrate.hdfs.namenode import Block, NameNode
from hbase_migrate.hfile.checksum import first_bad_chunk
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    delimited,
    iter_fields,
    string_field,
    varint_field,
)
from hbase_migrate.wal.source import RemoteFile, hdfs_user

HDFS_SCHEME = "hdfs"
_VERSION = 28  # DataTransferProtocol.DATA_TRANSFER_VERSION
_READ_BLOCK = 81
_SUCCESS, _CHECKSUM_OK = 0, 6
_CHECKSUM_TYPES = (0, 1, 2)  # ChecksumTypeProto: NULL, CRC32, CRC32C (HBase's codes too)
_STATUS = {1: "ERROR", 2: "ERROR_CHECKSUM", 3: "ERROR_INVALID", 4: "ERROR_EXISTS",
           5: "ERROR_ACCESS_TOKEN", 7: "ERROR_UNSUPPORTED"}
_MAX_PACKET = 16 << 20  # PacketReceiver.MAX_PACKET_SIZE
_CLIENT = "hbase-migrate"
# a packet's length, header and checksums come in reads of a few bytes, its data in 64 KiB:
# read through a buffer, most take no system call, and the threads reading beside each other
# hand the interpreter's lock on far less often (half the CPU with four streams at once)
_RECEIVE_BUFFER = 256 << 10


class _Refused(Exception):
    """A DataNode refused or dropped a read (the next replica is asked)."""


class _Stream:
    """One ``READ_BLOCK`` answer: the packets of a block from ``pos`` (file offset) on."""

    def __init__(self, datanode: str, block: Block, start: int, checksums: bool,
                 timeout: float) -> None:
        host, _, port = datanode.rpartition(":")
        self.datanode = datanode
        self.block = block
        self.end = block.offset + block.length
        self.checksums = checksums
        self._sock = socket.create_connection((host, int(port)), timeout=timeout)
        self._in = io.BufferedReader(self._sock.makefile("rb", buffering=0), _RECEIVE_BUFFER)
        try:
            self._request(start)
        except BaseException:
            self.close()
            raise
        self.pos = start  # the next byte handed out
        self._left = 0  # data bytes of the current packet not yet handed out
        self._data: memoryview | None = None  # the current packet's data, when checked

    def _request(self, start: int) -> None:
        base = bytes_field(1, self.block.extended)
        if self.block.token:
            base += bytes_field(2, self.block.token)
        header = bytes_field(1, base) + string_field(2, _CLIENT)
        skip_from = start - self.block.offset
        request = (bytes_field(1, header) + varint_field(2, skip_from) +
                   varint_field(3, self.end - start) + varint_field(4, int(self.checksums)))
        self._sock.sendall(struct.pack(">HB", _VERSION, _READ_BLOCK) + delimited(request))
        answer = Message(self._delimited(), "BlockOpResponseProto")
        status = answer.req_int(1, "status")
        if status != _SUCCESS:
            message = answer.opt_str(5, "message")
            raise _Refused(f"{_STATUS.get(status, status)}{': ' + message if message else ''}")
        info = answer.opt_bytes(4, "readOpChecksumInfo")
        chunk_offset, self._kind, self._per_chunk = skip_from, 0, 512
        if info is not None:
            read_info = Message(info, "ReadOpChecksumInfoProto")
            checksum = Message(read_info.req_bytes(1, "checksum"), "ChecksumProto")
            chunk_offset = read_info.req_int(2, "chunkOffset")
            self._kind = checksum.req_int(1, "type")
            self._per_chunk = checksum.req_int(2, "bytesPerChecksum")
        if self._kind not in _CHECKSUM_TYPES or self._per_chunk <= 0:
            raise _Refused(f"checksum type {self._kind} of {self._per_chunk} bytes a chunk "
                           "(expected NULL, CRC32 or CRC32C)")
        self._skip = skip_from - chunk_offset  # bytes before ``start`` in the first packet
        if not 0 <= self._skip < self._per_chunk:
            raise _Refused(f"first packet at block offset {chunk_offset}, asked {skip_from}")
        self._expect = chunk_offset  # the block offset the next packet must start at

    def _delimited(self) -> bytes:
        head = bytearray()
        while True:  # a varint length, byte by byte (at most 5)
            byte = self._exactly(1)
            head += byte
            if byte[0] < 0x80 or len(head) == 5:
                break
        length, _ = decode_varint(bytes(head), 0)
        return self._exactly(length)

    def _exactly(self, size: int) -> bytes:
        data = bytearray(size)
        self._fill(memoryview(data))
        return bytes(data)

    def _fill(self, view: memoryview) -> None:
        got, size = 0, len(view)
        while got < size:
            n = self._in.readinto(view[got:])
            if not n:
                raise _Refused(f"the connection closed {size - got} bytes short")
            got += n

    def _next_packet(self) -> bool:
        """Start the next packet; False at the empty last one (the status is sent)."""
        payload, header_size = struct.unpack(">IH", self._exactly(6))
        if not 4 <= payload <= _MAX_PACKET:
            raise _Refused(f"a packet of {payload} bytes")
        offset, data_len, last = _packet_header(self._exactly(header_size))
        if payload - 4 - data_len < 0 or offset != self._expect:
            raise _Refused(f"a packet of {data_len} bytes at block offset {offset} (payload "
                           f"{payload}; expected its data at {self._expect})")
        self._expect += data_len
        sums = self._exactly(payload - 4 - data_len)
        if data_len == 0 and last:
            self._sock.sendall(delimited(varint_field(
                1, _CHECKSUM_OK if self.checksums else _SUCCESS)))
            return False
        self._left = data_len
        if self.checksums and self._kind:  # (NULL: the DataNode keeps none)
            data = self._exactly(data_len)
            bad = first_bad_chunk(data, sums, self._kind, self._per_chunk)
            if bad is not None:
                raise _Refused(f"chunk {bad} of a packet fails its checksum")
            self._data = memoryview(data)
        if self._skip:
            skip, self._skip = min(self._skip, data_len), self._skip - min(self._skip, data_len)
            self._take(None, skip)
        return True

    def _take(self, into: memoryview | None, size: int) -> None:
        """``size`` bytes of the current packet's data, into ``into`` (None: dropped)."""
        if self._data is not None:
            at = len(self._data) - self._left
            if into is not None:
                into[:size] = self._data[at : at + size]
        elif into is not None:
            self._fill(into[:size])
        else:
            self._exactly(size)
        self._left -= size
        if self._left == 0:
            self._data = None

    def read_into(self, view: memoryview) -> int:
        """Fill ``view`` from ``pos`` on, up to the block's end; the bytes given."""
        want = min(len(view), self.end - self.pos)
        got = 0
        while got < want:
            if self._left == 0 and not self._next_packet():
                break
            if self._left == 0:
                continue
            n = min(self._left, want - got)
            self._take(view[got : got + n], n)
            got += n
        self.pos += got
        if self.pos == self.end and self._left == 0:
            self._finish()
        return got

    def _finish(self) -> None:
        """Read the empty last packet and send the status, so the DataNode logs no error."""
        try:
            while self._next_packet():
                if self._left:
                    raise _Refused("data past the block's end")
        except (OSError, _Refused):
            pass
        self.close()

    def close(self) -> None:
        self._in.close()
        self._sock.close()


def _packet_header(data: bytes) -> tuple[int, int, bool]:
    """``PacketHeaderProto``: (offsetInBlock, dataLen, lastPacketInBlock)."""
    offset, data_len, last = -1, None, False
    try:
        for number, _wire, value in iter_fields(data):
            if not isinstance(value, int):
                continue  # a field of a later version, not fixed-length
            if number == 1:  # sfixed64
                offset = value - (1 << 64) if value >= 1 << 63 else value
            elif number == 4:  # sfixed32
                data_len = value - (1 << 32) if value >= 1 << 31 else value
            elif number == 3:
                last = bool(value)
    except ProtobufError as exc:
        raise _Refused(f"a packet header that does not parse ({exc})") from None
    if data_len is None or data_len < 0:
        raise _Refused(f"a packet header without a data length ({data!r})")
    return offset, data_len, last


class HdfsFile(RemoteFile):
    """A read-only, seekable HDFS file read from its DataNodes (``url``: ``hdfs://host:port
    /path``, the NameNode's RPC address). Its blocks are located once, at open; a file
    still being written is refused (its last block's length is the DataNodes' to say: read it
    over WebHDFS)."""

    def __init__(self, url: str, on_read: Callable[[int], None] | None = None, *,
                 checksums: bool = True, timeout: float = 60.0) -> None:
        super().__init__()
        self.name = url
        self._on_read = on_read
        self._checksums = checksums
        self._timeout = timeout
        parts = urlsplit(url)
        self._namenode = namenode(parts.netloc, timeout)
        self._path = parts.path
        try:
            located = self._namenode.file_blocks(self._path)
        except FileNotFoundError:
            raise FileNotFoundError(2, f"No such file: {url}") from None
        if located.under_construction:
            raise WalSourceError(url, "the file is still being written; its last block's "
                                 "length is the DataNodes' to say: read it over WebHDFS")
        self._blocks = located.blocks
        self.size = located.length
        self._pos = 0
        self._stream: _Stream | None = None

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self.size - self._pos)
        if want <= 0:
            return 0
        failed: dict[str, Exception] = {}  # DataNode: what went wrong, for this read
        while True:
            stream = self._stream
            if stream is None or stream.pos != self._pos or stream.pos >= stream.end:
                stream = self._open(self._pos, failed)
            try:
                got = stream.read_into(view[:want])
                break
            except (OSError, _Refused, ProtobufError) as exc:
                self._drop()  # the read again from the next replica
                failed[stream.datanode] = exc
        self._pos += got
        if self._on_read is not None:
            self._on_read(got)
        return got

    def _open(self, pos: int, failed: dict[str, Exception]) -> _Stream:
        """A stream at ``pos`` from the first replica of its block not in ``failed`` (each
        one that fails here is added)."""
        self._drop()
        block = next((b for b in self._blocks if b.offset <= pos < b.offset + b.length), None)
        if block is None:
            raise WalSourceError(self.name, f"no block holds byte offset {pos} of {self.size}")
        for datanode in block.datanodes:
            if datanode in failed:
                continue
            try:
                self._stream = _Stream(datanode, block, pos, self._checksums, self._timeout)
                return self._stream
            except (OSError, _Refused, ProtobufError) as exc:
                failed[datanode] = exc
        said = "; ".join(f"{node}: {why}" for node, why in failed.items())
        # none answered: an outage to wait out; a refusal or bad bytes: a fault of the file
        unreachable = all(isinstance(why, OSError) for why in failed.values())
        raise WalSourceError(self.name, f"no DataNode served the block at byte offset {pos} "
                             f"({said or 'the NameNode names none'})",
                             unreachable=unreachable, endpoint=",".join(block.datanodes))

    def _drop(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def close(self) -> None:
        self._drop()
        super().close()


def open_store_file(url: str, on_read: Callable[[int], None] | None = None) -> BinaryIO:
    """An HFile at ``url`` (``hdfs://``), buffered, read without the DataNodes' checksums:
    its blocks carry HBase's own, which the HFile reader checks (as a region server reads
    with ``hbase.regionserver.checksum.verify``)."""
    return io.BufferedReader(HdfsFile(url, on_read, checksums=False), buffer_size=1 << 20)


_namenodes: dict[tuple[str, str], NameNode] = {}
_namenodes_lock = threading.Lock()


def namenode(address: str, timeout: float = 60.0) -> NameNode:
    """The process's connection to the NameNode at ``address`` (one per address and user)."""
    key = (address, hdfs_user())
    with _namenodes_lock:
        found = _namenodes.get(key)
        if found is None:
            found = _namenodes[key] = NameNode(address, key[1], timeout)
        return found
