"""The NameNode over Hadoop's own RPC (``ClientProtocol``, as ``DFSClient`` speaks it): where a
file's blocks are and on which DataNodes, for :mod:`hbase_migrate.hdfs.datanode`
to read them with no WebHDFS in the path.

The wire (Hadoop IPC, protocol buffers; ``RpcHeader.proto``, ``IpcConnectionContext.proto``,
``ProtobufRpcEngine.proto``, ``ClientNamenodeProtocol.proto``, ``hdfs.proto``): the
connection opens with ``hrpc``, the IPC version (9), the service class (0) and the auth
protocol (0: none, SIMPLE authentication: the user is told, not proven); then the connection
context (call id -3: the user and the protocol's name). Each call is a 4-byte length, then,
each varint-delimited, an ``RpcRequestHeaderProto`` (protocol buffers, final packet, the call
id, a client id of 16 bytes), a ``RequestHeaderProto`` (method, protocol, version 1) and the
request. Each answer is a 4-byte length, a delimited ``RpcResponseHeaderProto`` (status 0:
success) and, on success, the delimited response. A NameNode that wants Kerberos (SASL)
answers the context with a fatal error: :class:`NameNodeError` says so, and the readers keep
WebHDFS for such a cluster.
"""

from __future__ import annotations

import socket
import struct
import threading
import uuid
from typing import NamedTuple

from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    delimited,
    string_field,
    varint_field,
)

PROTOCOL = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
_PREAMBLE = b"hrpc" + bytes((9, 0, 0))  # IPC version 9, service class 0, auth protocol none
_CONTEXT_CALL = -3  # CONNECTION_CONTEXT_CALL_ID
_PROTOCOL_BUFFERS = 2  # RpcKindProto.RPC_PROTOCOL_BUFFER
_MAX_ANSWER = 128 << 20  # ipc.maximum.response.length's default


class NameNodeError(ClusterError):
    """The NameNode refused a call or cannot be reached; ``remote`` names its exception."""

    def __init__(self, message: str, *, endpoint: str, remote: str = "") -> None:
        super().__init__(message, endpoint=endpoint)
        self.remote = remote


class NameNodeUnreachableError(ServiceUnreachableError):
    """The NameNode's RPC did not answer, or closed the connection twice in a row: an
    outage a long run waits out, not a refusal."""

    service = "the NameNode's RPC"


class Block(NamedTuple):
    """A block of a file: its ``ExtendedBlockProto`` (as the DataNode must be told it), its
    offset in the file and length, and where it is (``host:port`` of DataNodes' data
    transfer, nearest first), with its access token."""

    extended: bytes
    offset: int
    length: int
    datanodes: tuple[str, ...]
    token: bytes


class FileBlocks(NamedTuple):
    """``LocatedBlocksProto``: the file's length and blocks, and whether it is still open."""

    length: int
    blocks: tuple[Block, ...]
    under_construction: bool


def parse_block(data: bytes) -> Block:
    """``LocatedBlockProto``."""
    located = Message(data, "LocatedBlockProto")
    extended = located.req_bytes(1, "b")
    length = Message(extended, "ExtendedBlockProto").opt_int(4, "numBytes") or 0
    nodes = []
    for info in located.repeated(3):
        ident = Message(Message(info, "DatanodeInfoProto").req_bytes(1, "id"),
                        "DatanodeIDProto")
        nodes.append(f"{ident.req_str(1, 'ipAddr')}:{ident.req_int(4, 'xferPort')}")
    return Block(extended, located.req_int(2, "offset"), length, tuple(nodes),
                 located.opt_bytes(5, "blockToken") or b"")


def parse_file_blocks(data: bytes) -> FileBlocks:
    """``LocatedBlocksProto``; a last block still written is among the blocks once."""
    located = Message(data, "LocatedBlocksProto")
    blocks = list(located.msgs(2, parse_block))
    last = located.opt_bytes(4, "lastBlock")
    if last is not None:
        tail = parse_block(last)
        if not blocks or blocks[-1].offset < tail.offset:
            blocks.append(tail)
    return FileBlocks(located.req_int(1, "fileLength"), tuple(blocks),
                      bool(located.opt_int(3, "underConstruction")))


class NameNode:
    """One connection to a NameNode at ``address`` (``host:port``, fs.defaultFS's), as
    ``user``; calls are serialized (one answer read per call). Reconnects once when the
    NameNode closed an idle connection."""

    def __init__(self, address: str, user: str, timeout: float = 60.0) -> None:
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise NameNodeError(f"NameNode address {address!r} is not host:port",
                                endpoint=address)
        self.address = address
        self._where = (host.strip("[]"), int(port))
        self.user = user
        self.timeout = timeout
        self._client_id = uuid.uuid4().bytes
        self._call_id = 0
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def file_blocks(self, path: str, offset: int = 0, length: int = 1 << 62) -> FileBlocks:
        """``getBlockLocations``: the blocks of ``path`` meeting ``[offset, offset+length)``;
        :class:`FileNotFoundError` when there is no such file."""
        request = string_field(1, path) + varint_field(2, offset) + varint_field(3, length)
        answer = Message(self.call("getBlockLocations", request, path),
                         "GetBlockLocationsResponseProto")
        located = answer.opt_bytes(1, "locations")
        if located is None:
            raise FileNotFoundError(2, f"No such file: {path} (NameNode {self.address})")
        try:
            return parse_file_blocks(located)
        except ProtobufError as exc:
            raise NameNodeError(f"NameNode {self.address}: getBlockLocations of {path} "
                                f"answered a LocatedBlocksProto that does not parse: {exc}",
                                endpoint=self.address) from None

    def call(self, method: str, request: bytes, path: str = "") -> bytes:
        """The response of ``method`` (``ClientProtocol``'s) to ``request``."""
        with self._lock:
            for attempt in (1, 2):
                fresh = self._socket is None
                try:
                    return self._call(method, request, path)
                except FileNotFoundError:
                    raise
                except OSError as exc:
                    self.close()
                    closed = isinstance(exc, ConnectionError) and not isinstance(
                        exc, ConnectionRefusedError)
                    if closed and not fresh and attempt == 1:
                        continue  # an idle connection the NameNode closed: once more
                    said = (f": {method}{f' of {path}' if path else ''}: the connection "
                            "closed" if closed else " does not answer")
                    raise NameNodeUnreachableError(f"NameNode {self.address}{said} ({exc})",
                                                   endpoint=self.address) from None
        raise AssertionError("unreachable")

    def _call(self, method: str, request: bytes, path: str) -> bytes:
        sock = self._connected()
        self._call_id += 1
        call_id = self._call_id
        method_header = (string_field(1, method) + string_field(2, PROTOCOL) +
                         varint_field(3, 1))
        body = (delimited(self._header(call_id)) + delimited(method_header) +
                delimited(request))
        sock.sendall(struct.pack(">I", len(body)) + body)
        status, answer = self._answer(sock)
        header = Message(status, "RpcResponseHeaderProto")
        if header.req_int(2, "status") != 0:
            remote = header.opt_str(4, "exceptionClassName") or ""
            text = (header.opt_str(5, "errorMsg") or "").split("\n", 1)[0]
            if header.req_int(2, "status") == 2:
                self.close()  # FATAL: the NameNode closed the connection
            if remote.endswith("FileNotFoundException"):
                raise FileNotFoundError(2, f"No such file: {path} ({text})")
            raise NameNodeError(f"NameNode {self.address}: {method}"
                                f"{f' of {path}' if path else ''} refused: {remote}: {text}"
                                f"{_security_hint(remote, text)}", endpoint=self.address,
                                remote=remote)
        if header.req_int(1, "callId") != call_id:
            raise NameNodeError(f"NameNode {self.address}: answer to call "
                                f"{header.req_int(1, 'callId')}, expected {call_id}",
                                endpoint=self.address)
        return answer

    def _header(self, call_id: int) -> bytes:
        zigzag = (call_id << 1) ^ (call_id >> 31)  # sint32
        return (varint_field(1, _PROTOCOL_BUFFERS) + varint_field(2, 0) +
                varint_field(3, zigzag & 0xFFFFFFFF) + bytes_field(4, self._client_id) +
                varint_field(5, 1))  # retryCount -1 as sint32

    def _connected(self) -> socket.socket:
        if self._socket is not None:
            return self._socket
        sock = socket.create_connection(self._where, timeout=self.timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        context = (bytes_field(2, string_field(1, self.user)) + string_field(3, PROTOCOL))
        body = delimited(self._header(_CONTEXT_CALL)) + delimited(context)
        sock.sendall(_PREAMBLE + struct.pack(">I", len(body)) + body)
        self._socket = sock
        return sock

    def _answer(self, sock: socket.socket) -> tuple[bytes, bytes]:
        (size,) = struct.unpack(">I", _read_exactly(sock, 4))
        if size > _MAX_ANSWER:
            raise NameNodeError(f"NameNode {self.address}: an answer of {size} bytes (more "
                                f"than {_MAX_ANSWER})", endpoint=self.address)
        data = _read_exactly(sock, size)
        length, pos = decode_varint(data, 0)
        header = data[pos : pos + length]
        pos += length
        if pos >= len(data):
            return header, b""
        length, pos = decode_varint(data, pos)
        return header, data[pos : pos + length]


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = bytearray(size)
    view, got = memoryview(data), 0
    while got < size:
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ConnectionError(f"{got} of {size} bytes came before the end")
        got += n
    return bytes(data)


def _security_hint(remote: str, text: str) -> str:
    if "AccessControlException" in remote and "authentication" in text.lower():
        return (" (the NameNode wants Kerberos: leave namenode unset for this cluster, its "
                "files are then read over WebHDFS with SPNEGO)")
    return ""

