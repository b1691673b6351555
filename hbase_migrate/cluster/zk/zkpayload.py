"""Codecs for the payloads HBase keeps in ZooKeeper (replication's are in
:mod:`hbase_migrate.cluster.zk.replication_payload`).

Every znode HBase writes carries two prefixes before the protobuf message::

    FF  int32-BE idLen  id[idLen]      metadata prefix (RecoverableZooKeeper / ZKMetadata):
                                       id = the client identifier (by default the JVM's
                                       "pid@hostname"; servers pass e.g. "regionserver:16020")
                                       followed by 8 random salt bytes. Empty data gets none.
    "PBUF"                             ProtobufMagic.PB_MAGIC
    message                            the serialised message, to the end of the data

Decoders take raw znode data (with or without the metadata prefix). Encoders return the
HBase payload ``PBUF + message``; ``add_metadata`` adds the prefix, as HBase does on write.

Messages (proto2; field numbers from HBase.proto, ZooKeeper.proto, Replication.proto,
ClusterId.proto)::

    ServerName        1 host_name  2 port        3 start_code
    Master            1 ServerName 2 rpc_version 3 info_port
    MetaRegionServer  1 ServerName 2 rpc_version 3 state (RegionState.State, OPEN = 3)
    ClusterId         1 cluster_id
    ClusterUp         1 start_date
    RegionServerInfo  1 infoPort (int32) 2 VersionInfo
    VersionInfo       1 version 2 url 3 revision 4 user 5 date 6 src_checksum
                      7 version_major 8 version_minor

ServerName and TableName are read and written by ``hbase_migrate.wal.messages``, the one
codec of each (WAL markers hold them too); every message is read through
``hbase_migrate.wal.protobuf.Message``.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from hbase_migrate.cluster.errors import ZkPayloadError
from hbase_migrate.wal.messages import (
    decode_server_name,
    encode_server_name,
)
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import (
    Message,
    ProtobufError,
    bytes_field,
    string_field,
    to_int64,
    varint_field,
)

META_MAGIC = 0xFF
PB_MAGIC = b"PBUF"
SALT_LENGTH = 8
META_STATE_OPEN = 3  # RegionState.State.OPEN

"""``"2.x"`` is also the 3.x schema (3.x only adds field 12, which 2.x readers skip)."""

_SERVER_NAME = re.compile(r"[^,]+,\d+,\d+")


# --- prefixes ---------------------------------------------------------------------------


def default_identifier() -> str:
    """The identifier RecoverableZooKeeper uses when given none: ``pid@hostname``."""
    return f"{os.getpid()}@{socket.gethostname()}"


def add_metadata(data: bytes, identifier: str | None = None, salt: bytes | None = None) -> bytes:
    """Prefix ``data`` as RecoverableZooKeeper does on create/setData; empty data stays empty."""
    if not data:
        return data
    salt = secrets.token_bytes(SALT_LENGTH) if salt is None else salt
    ident = (identifier or default_identifier()).encode("utf-8") + salt
    return bytes((META_MAGIC,)) + struct.pack(">i", len(ident)) + ident + data


def split_metadata(data: bytes, what: str = "znode") -> tuple[bytes | None, bytes]:
    """``(identifier + salt, data)``; the first is None when there is no metadata prefix."""
    if not data or data[0] != META_MAGIC:
        return None, data
    if len(data) < 5:
        raise ZkPayloadError(f"{what}: metadata prefix cut off ({len(data)} bytes)")
    (id_len,) = struct.unpack_from(">i", data, 1)
    if id_len < 0 or 5 + id_len > len(data):
        raise ZkPayloadError(
            f"{what}: metadata id length {id_len} does not fit the {len(data)}-byte payload"
        )
    return data[5 : 5 + id_len], data[5 + id_len :]


def strip_metadata(data: bytes, what: str = "znode") -> bytes:
    """The data without the metadata prefix (unchanged when it has none)."""
    return split_metadata(data, what)[1]


def strip_pb_magic(data: bytes, what: str = "znode") -> bytes:
    """The protobuf message of a payload: metadata prefix removed, ``PBUF`` required."""
    data = strip_metadata(data, what)
    if data[:4] != PB_MAGIC:
        raise ZkPayloadError(f"{what}: expected the PBUF magic, found {data[:4]!r}")
    return data[4:]


def payload(data: bytes, what: str, name: str) -> Message:
    """The message ``name`` of a znode payload (prefixes removed, ``PBUF`` required)."""
    message = strip_pb_magic(data, what)
    try:
        return Message(message, name)
    except ProtobufError as exc:
        raise ZkPayloadError(f"{what}: malformed protobuf message: {exc}") from exc


@contextmanager
def reading(what: str, name: str) -> Iterator[None]:
    """Turn a ProtobufError while reading message ``name`` into a ZkPayloadError."""
    try:
        yield
    except ProtobufError as exc:
        raise ZkPayloadError(f"{what}: {name}: {exc}") from exc


# --- ServerName, Master, MetaRegionServer, ClusterId, ClusterUp ------------------------


def is_server_name(text: str) -> bool:
    """True for ``host,port,startcode`` (``ServerName.isFullServerName``)."""
    return _SERVER_NAME.fullmatch(text) is not None


class Master(NamedTuple):
    server: ServerName
    rpc_version: int | None = 0
    info_port: int | None = None


class MetaRegionServer(NamedTuple):
    server: ServerName
    rpc_version: int | None = 0
    state: int | None = META_STATE_OPEN


def _server_and_two(
    data: bytes, what: str, name: str
) -> tuple[ServerName, int | None, int | None]:
    """Decode the shape shared by Master and MetaRegionServer (1 ServerName, 2, 3 varints)."""
    m = payload(data, what, name)
    if 1 not in m:
        raise ZkPayloadError(f"{what}: {name} has no server name (field 1)")
    with reading(what, name):
        return decode_server_name(m.req_bytes(1, "server")), m.opt_int(2), m.opt_int(3)


def encode_master(master: Master) -> bytes:
    out = PB_MAGIC + bytes_field(1, encode_server_name(master.server))
    if master.rpc_version is not None:
        out += varint_field(2, master.rpc_version)
    if master.info_port is not None:
        out += varint_field(3, master.info_port)
    return out


def decode_master(data: bytes, what: str = "master znode") -> Master:
    return Master(*_server_and_two(data, what, "Master"))


def encode_meta_region_server(meta: MetaRegionServer) -> bytes:
    out = PB_MAGIC + bytes_field(1, encode_server_name(meta.server))
    if meta.rpc_version is not None:
        out += varint_field(2, meta.rpc_version)
    if meta.state is not None:
        out += varint_field(3, meta.state)
    return out


def decode_meta_region_server(
    data: bytes, what: str = "meta-region-server znode"
) -> MetaRegionServer:
    return MetaRegionServer(*_server_and_two(data, what, "MetaRegionServer"))


def _single_string(data: bytes, what: str, name: str) -> str:
    m = payload(data, what, name)
    if 1 not in m:
        raise ZkPayloadError(f"{what}: {name} has no field 1")
    with reading(what, name):
        return m.req_str(1, "field 1")


class ClusterId(NamedTuple):
    cluster_id: str


def encode_cluster_id(cluster_id: ClusterId) -> bytes:
    return PB_MAGIC + string_field(1, cluster_id.cluster_id)


def decode_cluster_id(data: bytes, what: str = "hbaseid znode") -> ClusterId:
    return ClusterId(_single_string(data, what, "ClusterId"))


def encode_cluster_up(start_date: str) -> bytes:
    """``/hbase/running``: ``ClusterUp { start_date }`` (HBase writes ``Date.toString()``)."""
    return PB_MAGIC + string_field(1, start_date)


def decode_cluster_up(data: bytes, what: str = "running znode") -> str:
    return _single_string(data, what, "ClusterUp")


# --- RegionServerInfo -------------------------------------------------------------------


class VersionInfo(NamedTuple):
    version: str
    url: str = ""
    revision: str = ""
    user: str = ""
    date: str = ""
    src_checksum: str = ""
    version_major: int | None = None
    version_minor: int | None = None


class RegionServerInfo(NamedTuple):
    info_port: int | None = None
    version_info: VersionInfo | None = None


def version_info_message(info: VersionInfo) -> bytes:
    """A ``VersionInfo`` message (HBase.proto; the RPC's ConnectionHeader holds one too)."""
    out = b"".join(string_field(i + 1, s) for i, s in enumerate(info[:6]))
    if info.version_major is not None:
        out += varint_field(7, info.version_major)
    if info.version_minor is not None:
        out += varint_field(8, info.version_minor)
    return out


def version_info_from(message: bytes) -> VersionInfo:
    """A ``VersionInfo`` message (``HBase.proto``), as a ConnectionHeader or a master znode
    carries it."""
    m = Message(message, "VersionInfo")
    version, url, revision, user, date, checksum = (m.opt_str(n) or "" for n in range(1, 7))
    return VersionInfo(version, url, revision, user, date, checksum, m.opt_int(7), m.opt_int(8))


def encode_region_server_info(info: RegionServerInfo) -> bytes:
    out = PB_MAGIC
    if info.info_port is not None:
        out += varint_field(1, info.info_port)  # int32: negatives take 10 bytes
    if info.version_info is not None:
        out += bytes_field(2, version_info_message(info.version_info))
    return out


def decode_region_server_info(data: bytes, what: str = "rs znode") -> RegionServerInfo:
    m = payload(data, what, "RegionServerInfo")
    with reading(what, "RegionServerInfo"):
        port, version = m.opt_int(1), m.opt_bytes(2)
        return RegionServerInfo(
            None if port is None else to_int64(port),
            None if version is None else version_info_from(version),
        )
