"""The small ``HBase.proto`` messages that WAL keys, WAL markers and ZooKeeper payloads share:
one encoder and one decoder each (proto2; all fields required unless noted)::

    UUID        1 least_sig_bits uint64   2 most_sig_bits uint64
    ServerName  1 host_name string        2 port uint32 (optional)   3 start_code uint64
                                                                         (optional)
    TableName   1 namespace bytes         2 qualifier bytes

Decoders raise ``ProtobufError``; their callers add the file or znode it came from.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import UINT64_MASK, Message, bytes_field, string_field, varint_field


class TableName(NamedTuple):
    namespace: bytes
    qualifier: bytes


def encode_uuid(value: uuid.UUID) -> bytes:
    """A ``UUID`` message: the least significant 64 bits first (field 1)."""
    return varint_field(1, value.int & UINT64_MASK) + varint_field(2, value.int >> 64)


def decode_uuid(data: bytes) -> uuid.UUID:
    m = Message(data, "UUID")
    return uuid.UUID(int=m.req_int(2, "most_sig_bits") << 64 | m.req_int(1, "least_sig_bits"))


def encode_server_name(server: ServerName) -> bytes:
    """A ``ServerName`` message; a negative port or start code is left out, as HBase's
    ``ProtobufUtil.toServerName`` does."""
    out = string_field(1, server.host)
    if server.port >= 0:
        out += varint_field(2, server.port)
    if server.start_code >= 0:
        out += varint_field(3, server.start_code)
    return out


def decode_server_name(data: bytes) -> ServerName:
    """A ``ServerName``; an absent port or start code reads as -1 (``ProtobufUtil``)."""
    m = Message(data, "ServerName")
    port, start_code = m.opt_int(2, "port"), m.opt_int(3, "start_code")
    return ServerName(
        m.req_str(1, "host_name"),
        -1 if port is None else port,
        -1 if start_code is None else start_code,
    )


def encode_table_name(name: TableName) -> bytes:
    return bytes_field(1, name.namespace) + bytes_field(2, name.qualifier)


def decode_table_name(data: bytes) -> TableName:
    m = Message(data, "TableName")
    return TableName(m.req_bytes(1, "namespace"), m.req_bytes(2, "qualifier"))
