"""The bytes of HBase's RPC: connection preamble and header, calls, replies, cell blocks.

No I/O here: ``connection.py`` writes what these functions build and feeds what it reads to
a ``ReplyDecoder``. The layout (``RPC.proto``'s header comment, ``RpcConnection``,
``NettyRpcDuplexHandler``, ``CellBlockBuilder`` of HBase branch-2.6)::

    connection  "HBas" | version 0 | auth byte (SIMPLE 80, KERBEROS 81, DIGEST 82)
                | int32-BE length | ConnectionHeader        (writeTo, not delimited)
    call        int32-BE total length (of what follows)
                | varint length | RequestHeader | varint length | request message
                | cell block (RequestHeader.cell_block_meta.length bytes)
    reply       int32-BE total length
                | varint length | ResponseHeader | [varint length | response message]
                | cell block (ResponseHeader.cell_block_meta.length bytes)
    cell block  KeyValueCodec: per cell int32-BE L | the KeyValue of L bytes, no tags;
                KeyValueCodecWithTags: the same with the tags (uint16 length, tags)
                (the WAL's plain cell layout: ``hbase_migrate.wal.cells``)

For SIMPLE auth the server answers nothing to the header; a refused connection gets a reply
with call id -1 (``0xFFFFFFFF`` as the uint32 it is on the wire) and the exception.

Messages (``RPC.proto``; ``HBase.proto`` for VersionInfo, NameBytesPair)::

    UserInformation   1 effective_user  2 real_user
    ConnectionHeader  1 user_info  2 service_name  3 cell_block_codec_class
                      4 cell_block_compressor_class  5 version_info (VersionInfo)
    CellBlockMeta     1 length
    ExceptionResponse 1 exception_class_name  2 stack_trace  3 hostname  4 port (int32)
                      5 do_not_retry  6 server_overloaded
    RequestHeader     1 call_id  2 trace_info  3 method_name  4 request_param
                      5 cell_block_meta  6 priority  7 timeout (ms)
    ResponseHeader    1 call_id  2 exception  3 cell_block_meta
"""

from __future__ import annotations

import contextlib
import struct
from collections.abc import Iterable
from typing import NamedTuple

from hbase_migrate.cluster.zk.zkpayload import VersionInfo, version_info_from, version_info_message
from hbase_migrate.rpc.errors import RpcFrameError
from hbase_migrate.wal.cells import CellCorruptError
from hbase_migrate.wal.hotloops import plain_decoder, plain_encoder
from hbase_migrate.wal.model import Cell
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    decode_varint,
    decode_varint32,
    delimited,
    string_field,
    to_int64,
    varint_field,
)

MAGIC = b"HBas"
RPC_VERSION = 0
AUTH_SIMPLE = 80
AUTH_KERBEROS = 81
AUTH_DIGEST = 82  # a delegation token (SASL DIGEST-MD5)
KEYVALUE_CODEC = "org.apache.hadoop.hbase.codec.KeyValueCodec"
KEYVALUE_CODEC_WITH_TAGS = "org.apache.hadoop.hbase.codec.KeyValueCodecWithTags"
CONNECTION_CALL_ID = 0xFFFFFFFF  # call id -1: a reply about the connection itself
MAX_FRAME = 0x7FFFFFFF
_INT32 = struct.Struct(">i")

# What this client says it is: HBase's servers send Get results in cell blocks only to
# clients of 1.3 or later, and ScannerResetException only to 1.4 or later
# (RSRpcServices, VersionInfoUtil.hasMinimumVersion).
CLIENT_VERSION = VersionInfo("2.6.1", "hbase-migrate", "native", "hbase-migrate", "", "",
                             2, 6)


def preamble(auth: int = AUTH_SIMPLE) -> bytes:
    """The six bytes a connection opens with."""
    return MAGIC + bytes((RPC_VERSION, auth))


def connection_header(service: str, user: str | None, *, codec: str = KEYVALUE_CODEC,
                      version: VersionInfo | None = CLIENT_VERSION) -> bytes:
    """The ConnectionHeader, prefixed by its int32 length, for ``service``
    (``ClientService``, ``MasterService``, ``AdminService``); ``user`` None: no user info
    (a token names its user)."""
    header = b"" if user is None else bytes_field(1, string_field(1, user))
    header += string_field(2, service)
    header += string_field(3, codec)
    if version is not None:
        header += bytes_field(5, version_info_message(version))
    return _INT32.pack(len(header)) + header


class ConnectionHeader(NamedTuple):
    """A ConnectionHeader as a server reads it; ``codec`` empty: no cell blocks (cells
    travel inline in the messages)."""

    service: str
    user: str
    codec: str
    version: VersionInfo | None


def read_preamble(data: bytes) -> int:
    """The auth byte of a connection's first six bytes; ProtobufError when they are not
    ``HBas`` + version 0 + an auth byte (what HBase's server answers with a fatal error)."""
    if len(data) != 6 or data[:4] != MAGIC or data[4] != RPC_VERSION:
        raise ProtobufError(f"connection preamble {data!r}: expected HBas, version "
                            f"{RPC_VERSION} and an auth byte")
    return data[5]


def decode_connection_header(data: bytes) -> ConnectionHeader:
    """The ConnectionHeader (its int32 length already read)."""
    m = Message(data, "ConnectionHeader")
    info, version = m.opt_bytes(1), m.opt_bytes(5)
    user = (Message(info, "UserInformation").opt_str(1) or "") if info is not None else ""
    return ConnectionHeader(m.opt_str(2) or "", user, m.opt_str(3) or "",
                            None if version is None else version_info_from(version))


def encode_call(call_id: int, method: str, request: bytes, cell_block: bytes = b"",
                timeout_ms: int = 0) -> bytes:
    """One call frame: ``request`` is the encoded request message, ``cell_block`` the
    cells it refers to (``encode_cell_block``)."""
    header = varint_field(1, call_id) + string_field(3, method) + varint_field(4, 1)
    if cell_block:
        header += bytes_field(5, varint_field(1, len(cell_block)))
    if timeout_ms > 0:
        header += varint_field(7, timeout_ms)
    body = delimited(header) + delimited(request)
    return _INT32.pack(len(body) + len(cell_block)) + body + cell_block


# --- cell blocks -----------------------------------------------------------------------


def encode_cell_block(cells: Iterable[Cell], tags: bool = False) -> bytes:
    """Cells in the KeyValueCodec layout; ``tags``: KeyValueCodecWithTags, each cell's
    tags after its value (KeyValueCodec drops them, as HBase's encoder does)."""
    return plain_encoder()(cells, tags)


def _no_more(n: int) -> bytes:
    raise IndexError("cell block cut off")


def decode_cells(block: bytes, pos: int, count: int) -> tuple[tuple[Cell, ...], int]:
    """``count`` cells of a cell block at ``pos``; the position after them. A block that
    ends early or holds a malformed cell raises CellCorruptError naming the offset."""
    try:
        cells, _, end = plain_decoder()(block, pos, count, _no_more)
    except (IndexError, struct.error) as exc:
        raise CellCorruptError(f"cell block of {len(block)} bytes holds fewer than {count} "
                               f"cells from offset {pos}") from exc
    if end > len(block):
        raise CellCorruptError(f"cell at offset {pos} runs past the {len(block)}-byte block")
    return cells, end


# --- replies -----------------------------------------------------------------------------


class RemoteException(NamedTuple):
    """``ExceptionResponse``: a Java exception raised for a call."""

    class_name: str
    stack_trace: str = ""
    hostname: str = ""
    port: int = 0
    do_not_retry: bool = False
    server_overloaded: bool = False


class Reply(NamedTuple):
    """One reply: ``response`` is the encoded response message (None with an exception),
    ``cell_block`` the cells after it. ``offset``: where its frame starts in the stream."""

    call_id: int
    exception: RemoteException | None
    response: bytes | None
    cell_block: bytes
    offset: int


def encode_reply(call_id: int, response: bytes | None = None, cell_block: bytes = b"",
                 exception: RemoteException | None = None) -> bytes:
    """A reply frame as a server writes it (for tests and scripted servers)."""
    header = varint_field(1, call_id)
    if exception is not None:
        ex = string_field(1, exception.class_name) + string_field(2, exception.stack_trace)
        if exception.hostname:
            ex += string_field(3, exception.hostname) + varint_field(4, exception.port)
        ex += varint_field(5, exception.do_not_retry)
        if exception.server_overloaded:
            ex += varint_field(6, 1)
        header += bytes_field(2, ex)
    if cell_block:
        header += bytes_field(3, varint_field(1, len(cell_block)))
    body = delimited(header) + (b"" if response is None else delimited(response))
    return _INT32.pack(len(body) + len(cell_block)) + body + cell_block


def _exception(data: bytes) -> RemoteException:
    m = Message(data, "ExceptionResponse")
    port = m.opt_int(4)
    return RemoteException(m.opt_str(1) or "", m.opt_str(2) or "", m.opt_str(3) or "",
                           0 if port is None else to_int64(port), bool(m.opt_int(5)),
                           bool(m.opt_int(6)))


def decode_reply(frame: bytes, offset: int = 0, server: str = "") -> Reply:
    """One whole reply frame (without its int32 length); ``offset`` is where the frame
    starts in the stream and ``server`` whose stream it is, for errors."""
    call_id: int | None = None
    pos = 0
    try:
        size, pos = decode_varint32(frame, 0)
        end = pos + size
        if end > len(frame):
            raise ProtobufError(f"ResponseHeader of {size} bytes runs past the frame")
        call_id = _peek_call_id(frame, pos, end)
        m = Message(frame[pos:end], "ResponseHeader")
        call_id = m.opt_int(1, "call_id")
        if call_id is None:
            raise ProtobufError("ResponseHeader has no call_id")
        pos = end
        exc = m.opt_bytes(2)
        if exc is not None:
            return Reply(call_id, _exception(exc), None, b"", offset)
        meta = m.opt_bytes(3)
        block = (Message(meta, "CellBlockMeta").opt_int(1) or 0) if meta is not None else 0
        response = None
        if len(frame) - pos > block:
            size, after = decode_varint32(frame, pos)
            if after + size > len(frame):
                raise ProtobufError(f"response message of {size} bytes runs past the frame")
            response = frame[after : after + size]
            pos = after + size
        if len(frame) - pos != block:
            raise ProtobufError(f"{len(frame) - pos} bytes left for a cell block of {block}")
        return Reply(call_id, None, response, frame[pos:], offset)
    except ProtobufError as exc:
        raise RpcFrameError(f"malformed reply: {exc}", offset=offset + 4 + pos,
                            call_id=call_id, server=server) from None


def _peek_call_id(frame: bytes, pos: int, end: int) -> int | None:
    """The call id of a header whose first field is it (as every HBase server writes it),
    read before the rest, so that an error in the rest can name the call."""
    if pos < end and frame[pos] == 0x08:
        with contextlib.suppress(ProtobufError):
            return decode_varint(frame, pos + 1, end)[0]
    return None


class ReplyDecoder:
    """Replies from a byte stream fed in pieces of any size: a reply cut anywhere waits for
    its remaining bytes; bytes that cannot be a reply raise RpcFrameError with the stream
    offset and, once read, the call id."""

    def __init__(self, server: str = "", max_frame: int = MAX_FRAME) -> None:
        self.server = server
        self.max_frame = max_frame
        self._buf = bytearray()
        self._base = 0  # stream offset of _buf[0]
        self._error: RpcFrameError | None = None

    @property
    def pending(self) -> int:
        """Bytes received that do not make a whole reply yet."""
        return len(self._buf)

    @property
    def offset(self) -> int:
        """Stream offset of the next reply."""
        return self._base

    def feed(self, data: bytes) -> list[Reply]:
        """Add bytes; return the replies they complete, in order. Garbage raises
        RpcFrameError, at once when no whole reply precedes it in ``data``, else from
        ``check()`` (or the next ``feed``), so that the replies before it are delivered."""
        self.check()
        self._buf += data
        replies = []
        pos = 0
        buf = self._buf
        try:
            while len(buf) - pos >= 4:
                (size,) = _INT32.unpack_from(buf, pos)
                if size <= 0 or size > self.max_frame:
                    raise RpcFrameError(f"frame length {size} is not a reply (at most "
                                        f"{self.max_frame} bytes)", offset=self._base + pos,
                                        call_id=None, server=self.server)
                if len(buf) - pos - 4 < size:
                    break
                with memoryview(buf) as view:  # one copy of the frame, not two
                    frame = bytes(view[pos + 4 : pos + 4 + size])
                replies.append(decode_reply(frame, self._base + pos, self.server))
                pos += 4 + size
        except RpcFrameError as exc:
            self._error = exc
            if not replies:
                raise
        finally:
            del buf[:pos]
            self._base += pos
        return replies

    def check(self) -> None:
        """Raise the RpcFrameError found after the replies last returned, if any."""
        if self._error is not None:
            raise self._error



class Call(NamedTuple):
    """A call as a server reads it (scripted servers and tests)."""

    call_id: int
    method: str
    request: bytes
    cell_block: bytes
    timeout_ms: int


class BadCall(ProtobufError):
    """A call whose RequestHeader was read but not the rest: a server answers it by its id
    (HBase's ``ServerRpcConnection``: "unable to read call parameter")."""

    def __init__(self, message: str, call_id: int, method: str) -> None:
        super().__init__(message)
        self.call_id = call_id
        self.method = method


def decode_call(frame: bytes) -> Call:
    """One whole call frame (without its int32 length). A header that cannot be read raises
    ProtobufError; a request or cell block that cannot be, BadCall. As HBase's server reads
    it, the request ends at its length or at the frame's end (a length running past the
    frame is cut there), the cell block follows it, and bytes after the cell block are
    ignored."""
    size, pos = decode_varint32(frame, 0)
    if pos + size > len(frame):
        raise ProtobufError(f"RequestHeader of {size} bytes runs past the {len(frame)}-byte "
                            "call")
    m = Message(frame[pos : pos + size], "RequestHeader")
    call_id, method = m.req_int(1, "call_id"), m.req_str(3, "method_name")
    pos += size
    try:
        if not m.opt_int(4):
            raise ProtobufError("RequestHeader has no request_param")
        meta = m.opt_bytes(5)
        block = (Message(meta, "CellBlockMeta").opt_int(1) or 0) if meta is not None else 0
        size, pos = decode_varint32(frame, pos)
        end = pos + size
        if end + block > len(frame) and block:
            raise ProtobufError(f"a cell block of {block} bytes after a request of {size} "
                                f"runs past the {len(frame)}-byte call")
    except ProtobufError as exc:
        raise BadCall(f"call {call_id} ({method}): {exc}", call_id, method) from None
    return Call(call_id, method, frame[pos : min(end, len(frame))], frame[end : end + block],
                m.opt_int(7) or 0)
