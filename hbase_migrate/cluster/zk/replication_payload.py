"""Codecs for the replication payloads HBase 1.x/2.x keeps in ZooKeeper (peer state, peers
with their table CFs in both peer schemas, queue WAL positions) and the names of replication
queues. The prefixes and the message conventions are :mod:`hbase_migrate.cluster.zk.zkpayload`'s.

    ReplicationState  1 state (ENABLED = 0, DISABLED = 1)
    ReplicationHLogPosition  1 position (int64)
    ReplicationPeer   1 clusterkey 2 replicationEndpointImpl 3 data (BytesBytesPair)
                      4 configuration (NameStringPair) 5 table_cfs (TableCF)
                      2.x/3.x: 6 namespaces 7 bandwidth 8 replicate_all 9 exclude_table_cfs
                               10 exclude_namespaces 11 serial 12 remoteWALDir (3.x)
                      1.x:     6 bandwidth
    TableCF           1 TableName (1 namespace 2 qualifier) 2 families
"""

from __future__ import annotations

import struct
from enum import IntEnum
from typing import Literal, NamedTuple

from hbase_migrate.cluster.errors import ZkPayloadError
from hbase_migrate.cluster.zk.zkpayload import (
    PB_MAGIC,
    is_server_name,
    payload,
    reading,
    strip_metadata,
)
from hbase_migrate.wal.messages import (
    TableName,
    decode_table_name,
    encode_table_name,
)
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import (
    VARINT,
    Message,
    ProtobufError,
    bytes_field,
    string_field,
    to_int64,
    varint_field,
)

PeerSchema = Literal["1.x", "2.x"]  # the ReplicationPeer schema: HBase 1.x, or 2.x and 3.x

# --- peer state and queue positions -------------------------------------------------------


class ReplicationState(IntEnum):
    ENABLED = 0
    DISABLED = 1


def encode_replication_state(state: ReplicationState) -> bytes:
    return PB_MAGIC + varint_field(1, int(state))


def decode_replication_state(data: bytes, what: str = "peer-state znode") -> ReplicationState:
    m = payload(data, what, "ReplicationState")
    if 1 not in m:
        raise ZkPayloadError(f"{what}: ReplicationState has no state (field 1)")
    try:
        return ReplicationState(m.req_int(1, "state"))
    except (ProtobufError, ValueError) as exc:
        raise ZkPayloadError(f"{what}: ReplicationState: {exc}") from exc


def encode_wal_position(position: int) -> bytes:
    """``rs/<sn>/<queue>/<wal>``: PBUF + ``ReplicationHLogPosition``."""
    return PB_MAGIC + varint_field(1, position)


def decode_wal_position(data: bytes, what: str = "queue WAL znode") -> int:
    """A shipped offset, read as ``ZKUtil.parseWALPositionFrom`` does: PBUF + message, an
    empty payload (0, a WAL just added to the queue) or a bare 8-byte big-endian long."""
    data = strip_metadata(data, what)
    if not data:
        return 0
    if data[:4] == PB_MAGIC:
        m = payload(data, what, "ReplicationHLogPosition")
        if 1 not in m:
            raise ZkPayloadError(f"{what}: ReplicationHLogPosition has no position (field 1)")
        with reading(what, "ReplicationHLogPosition"):
            return to_int64(m.req_int(1, "position"))
    if len(data) == 8:
        return int(struct.unpack(">q", data)[0])
    raise ZkPayloadError(
        f"{what}: expected PBUF + ReplicationHLogPosition or an 8-byte long, "
        f"got {len(data)} bytes"
    )


class TableCF(NamedTuple):
    """A table and the families replicated from it (none listed: all families)."""

    namespace: bytes
    qualifier: bytes
    families: tuple[bytes, ...] = ()

    @property
    def table(self) -> str:
        """``ns:table``, or just ``table`` in the default namespace (``TableName.toString``)."""
        ns = self.namespace.decode("utf-8", "replace")
        name = self.qualifier.decode("utf-8", "replace")
        return name if ns in ("", "default") else f"{ns}:{name}"


class ReplicationPeer(NamedTuple):
    cluster_key: str
    endpoint_impl: str | None = None
    data: tuple[tuple[bytes, bytes], ...] = ()
    configuration: tuple[tuple[str, str], ...] = ()
    table_cfs: tuple[TableCF, ...] = ()
    namespaces: tuple[bytes, ...] = ()
    bandwidth: int = 0
    replicate_all: bool | None = None
    exclude_table_cfs: tuple[TableCF, ...] = ()
    exclude_namespaces: tuple[bytes, ...] = ()
    serial: bool | None = None
    remote_wal_dir: str | None = None


def _table_cf_message(cf: TableCF) -> bytes:
    table = encode_table_name(TableName(cf.namespace, cf.qualifier))
    return bytes_field(1, table) + b"".join(bytes_field(2, f) for f in cf.families)


def _table_cf_from(message: bytes) -> TableCF:
    m = Message(message, "TableCF")
    table = m.opt_bytes(1, "table_name")
    name = TableName(b"", b"") if table is None else decode_table_name(table)
    return TableCF(name.namespace, name.qualifier, m.repeated(2))


def _pair_from(message: bytes) -> tuple[bytes, bytes]:
    """A BytesBytesPair or NameStringPair (1 first, 2 second), absent fields empty."""
    m = Message(message, "pair")
    return m.opt_bytes(1) or b"", m.opt_bytes(2) or b""


def _encode_peer_2x(peer: ReplicationPeer) -> bytes:
    out = b"".join(bytes_field(6, ns) for ns in peer.namespaces)
    out += varint_field(7, peer.bandwidth) if peer.bandwidth else b""
    if peer.replicate_all is not None:
        out += varint_field(8, peer.replicate_all)
    out += b"".join(bytes_field(9, _table_cf_message(cf)) for cf in peer.exclude_table_cfs)
    out += b"".join(bytes_field(10, ns) for ns in peer.exclude_namespaces)
    if peer.serial is not None:
        out += varint_field(11, peer.serial)
    if peer.remote_wal_dir is not None:
        out += string_field(12, peer.remote_wal_dir)
    return out


def encode_replication_peer(peer: ReplicationPeer, schema: PeerSchema = "2.x") -> bytes:
    """PBUF + ``ReplicationPeer`` in the given schema (default ``"2.x"``, also right for
    3.x). The 1.x schema has no namespaces, exclusions, serial, replicate_all or remote WAL
    dir; a peer using them cannot be written in it (ValueError)."""
    out = string_field(1, peer.cluster_key)
    if peer.endpoint_impl is not None:
        out += string_field(2, peer.endpoint_impl)
    out += b"".join(bytes_field(3, bytes_field(1, a) + bytes_field(2, b)) for a, b in peer.data)
    out += b"".join(
        bytes_field(4, string_field(1, k) + string_field(2, v)) for k, v in peer.configuration
    )
    out += b"".join(bytes_field(5, _table_cf_message(cf)) for cf in peer.table_cfs)
    if schema == "2.x":
        return PB_MAGIC + out + _encode_peer_2x(peer)
    if schema != "1.x":
        raise ValueError(f"schema must be '1.x' or '2.x', got {schema!r}")
    unsupported = [n for n in ("namespaces", "exclude_table_cfs", "exclude_namespaces")
                   if getattr(peer, n)]
    unsupported += [n for n in ("replicate_all", "serial", "remote_wal_dir")
                    if getattr(peer, n) is not None]
    if unsupported:
        raise ValueError(f"the 1.x ReplicationPeer schema has no {', '.join(unsupported)}")
    return PB_MAGIC + out + (varint_field(6, peer.bandwidth) if peer.bandwidth else b"")


def detect_peer_schema(data: bytes, what: str = "peer znode") -> PeerSchema | None:
    """Which schema wrote a peer, from the wire alone: field 6 is a varint (bandwidth) in 1.x
    and length-delimited (namespaces) in 2.x/3.x; fields 7-12 exist only in 2.x/3.x. None
    when neither appears (both schemas then read the message the same way)."""
    return _peer_schema(payload(data, what, "ReplicationPeer"))


def _peer_schema(m: Message) -> PeerSchema | None:
    for field, values in m.fields.items():  # in the order the fields first appear
        if field == 6:
            return "1.x" if values[0][0] == VARINT else "2.x"
        if 7 <= field <= 12:
            return "2.x"
    return None


def decode_replication_peer(
    data: bytes, schema: PeerSchema | Literal["auto"] = "auto", what: str = "peer znode"
) -> ReplicationPeer:
    """Decode a peer. ``schema="auto"`` (default) picks the schema with
    :func:`detect_peer_schema`, which is safe because field 6 has a different wire type in
    each; an explicit schema that contradicts the wire raises ZkPayloadError."""
    m = payload(data, what, "ReplicationPeer")
    detected = _peer_schema(m)
    if schema != "auto" and detected is not None and detected != schema:
        raise ZkPayloadError(f"{what}: ReplicationPeer was written in the {detected} schema, "
                             f"not {schema} (field 6 or 7+ says so)")
    with reading(what, "ReplicationPeer"):
        return _peer_from(m, detected == "1.x")


def _peer_from(m: Message, one_x: bool) -> ReplicationPeer:
    def last_int(n: int) -> int | None:
        value = m.opt_int(n)
        return None if value is None else to_int64(value)

    replicate_all, serial = last_int(8), last_int(11)
    return ReplicationPeer(
        cluster_key=m.opt_str(1) or "",
        endpoint_impl=m.opt_str(2),
        data=m.msgs(3, _pair_from),
        configuration=tuple(
            (a.decode("utf-8", "surrogateescape"), b.decode("utf-8", "surrogateescape"))
            for a, b in m.msgs(4, _pair_from)
        ),
        table_cfs=m.msgs(5, _table_cf_from),
        namespaces=() if one_x else m.repeated(6),
        bandwidth=(last_int(6) if one_x else last_int(7)) or 0,
        replicate_all=None if replicate_all is None else bool(replicate_all),
        exclude_table_cfs=m.msgs(9, _table_cf_from),
        exclude_namespaces=m.repeated(10),
        serial=None if serial is None else bool(serial),
        remote_wal_dir=m.opt_str(12),
    )


def parse_legacy_table_cfs(text: str) -> tuple[TableCF, ...]:
    """The plain-string ``peers/<id>/tableCFs`` znode of HBase up to 1.3:
    ``ns.table:cf1,cf2;table2`` (malformed entries are skipped, as HBase does)."""
    result = []
    for raw in text.split(";"):
        entry = raw.strip()
        parts = entry.split(":")
        name = parts[0].strip()
        if not entry or len(parts) > 2 or not name:
            continue
        ns, _, qualifier = name.rpartition(".") if name.count(".") == 1 else ("", "", name)
        families = (
            tuple(cf.strip().encode() for cf in parts[1].split(",") if cf.strip())
            if len(parts) == 2 else ()
        )
        result.append(TableCF((ns or "default").encode(), qualifier.encode(), families))
    return tuple(result)


# --- replication queue ids --------------------------------------------------------------


class QueueId(NamedTuple):
    """A replication queue id: the peer id for a server's own queue, or
    ``<peerId>-<deadServer>[-<deadServer>...]`` for a queue claimed from dead servers."""

    queue_id: str
    peer_id: str
    dead_servers: tuple[ServerName, ...] = ()

    @property
    def recovered(self) -> bool:
        return "-" in self.queue_id


def parse_queue_id(queue_id: str) -> QueueId:
    """Split a queue id as ``ReplicationQueueInfo`` does: the peer id ends at the first '-';
    server names may contain '-', so a '-' separates two dead servers only once two ','
    have been seen in the current name. Pieces that are not server names are dropped."""
    peer_id, sep, rest = queue_id.partition("-")
    if not sep:
        return QueueId(queue_id, queue_id)
    names: list[str] = []
    commas, start = 0, 0
    for i, ch in enumerate(rest):
        if ch == ",":
            commas += 1
        elif ch == "-" and commas >= 2:
            if i > start:
                names.append(rest[start:i])
                start = i + 1
            commas = 0
    if start < len(rest) - 1:
        names.append(rest[start:])
    servers = tuple(ServerName.parse(n) for n in names if is_server_name(n))
    return QueueId(queue_id, peer_id, servers)


def claimed_queue_id(queue_id: str, dead_server: ServerName) -> str:
    """The id a queue gets when another server claims it from ``dead_server``."""
    return f"{queue_id}-{dead_server}"
