"""What the embedded cluster's RPC suites send and how they judge it, shared by
``test_rpc_data``, ``test_rpc_inline_mutations``, ``test_rpc_deltas``, the other
``test_rpc_*`` modules and ``tests/rpc/test_third_party_calls_real.py``: the clusters' parts
and store (``cluster_of``, ``create``, ``stored``), mutations with their own values
(``MutationProto.column_value``, as third-party clients send them) and the cells HBase keeps
for them, and a put framed as hbase-driver frames it."""

from __future__ import annotations

import socket
import struct
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.rpc.codec import Reply, ReplyDecoder, preamble
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.wal.model import Cell, CellType, cell_order
from minihbase.cluster import Cluster
from minihbase.regionserver import RegionServers
from minihbase.server import MiniHBase
from tests.rpc.proto_reference import encode

FAMILIES = (FamilyDescriptor(b"f", max_versions=10), FamilyDescriptor(b"g", max_versions=10))


def cluster_of(mini: MiniHBase) -> tuple[Cluster, RegionServers]:
    assert mini.cluster is not None and mini.region_servers is not None
    return mini.cluster, mini.region_servers


def create(mini: MiniHBase, table: str, splits: list[bytes] | None = None) -> None:
    cluster, _ = cluster_of(mini)
    cluster.create_table(table, FAMILIES, [b"g", b"p"] if splits is None else splits)


def stored(mini: MiniHBase, table: str) -> list[Cell]:
    """Every cell the store keeps of a table, markers too, in HBase's order."""
    cluster, _ = cluster_of(mini)
    return [c for _, cells in cluster.store.raw_rows(table, b"", True, b"", 10**6)
            for c in cells]


PUT, DELETE = 2, 3  # MutationProto.MutationType
ONE, COLUMN, FAMILY, FAMILY_VERSION = 0, 1, 2, 3  # MutationProto.DeleteType


def qv(qualifier: bytes, value: bytes | None = None, ts: int | None = None,
       delete_type: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"qualifier": qualifier}
    for key, given in (("value", value), ("timestamp", ts), ("delete_type", delete_type)):
        if given is not None:
            out[key] = given
    return out


def mutation(kind: int, row: bytes, columns: dict[bytes, list[dict[str, Any]]],
             ts: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"row": row, "mutate_type": kind, "column_value": [
        {"family": f, "qualifier_value": values} for f, values in columns.items()]}
    if ts is not None:
        out["timestamp"] = ts
    return out


# Each row's mutations, in order, and the cells HBase keeps for them.
WRITES = [
    mutation(PUT, b"a", {b"f": [qv(b"q1", b"v1"), qv(b"q2", b"v2", 50)],
                         b"g": [qv(b"x", b"gx")]}, ts=100),
    mutation(PUT, b"c", {b"f": [qv(b"q", b"c10", 10), qv(b"q", b"c20", 20),
                                qv(b"q", b"c30", 30), qv(b"zero", b"z", 0)]}),
    mutation(PUT, b"d", {b"f": [qv(b"q", b"d", 5)], b"g": [qv(b"x", b"d", 5)]}),
    mutation(PUT, b"e", {b"f": [qv(b"q", b"e10", 10), qv(b"q", b"e20", 20)]}),
    mutation(DELETE, b"a", {b"f": [qv(b"q1", ts=100, delete_type=ONE)]}, ts=999),
    mutation(DELETE, b"a", {b"g": [qv(b"ignored", ts=200, delete_type=FAMILY)]}),
    mutation(DELETE, b"c", {b"f": [qv(b"q", ts=20, delete_type=COLUMN)]}),
    mutation(DELETE, b"c", {b"f": [qv(b"any", ts=30, delete_type=FAMILY_VERSION)]}),
    mutation(DELETE, b"d", {}, ts=500),  # the whole row
    mutation(DELETE, b"e", {b"f": [qv(b"q")]}),  # one version, the newest
]


P, D = CellType.PUT, CellType.DELETE


KEPT = sorted([
    Cell(b"a", b"f", b"q1", 100, P, b"v1"), Cell(b"a", b"f", b"q2", 50, P, b"v2"),
    Cell(b"a", b"g", b"x", 100, P, b"gx"),
    Cell(b"a", b"f", b"q1", 100, D), Cell(b"a", b"g", b"", 200, CellType.DELETE_FAMILY),
    Cell(b"c", b"f", b"q", 10, P, b"c10"), Cell(b"c", b"f", b"q", 20, P, b"c20"),
    Cell(b"c", b"f", b"q", 30, P, b"c30"), Cell(b"c", b"f", b"zero", 0, P, b"z"),
    Cell(b"c", b"f", b"q", 20, CellType.DELETE_COLUMN),
    Cell(b"c", b"f", b"", 30, CellType.DELETE_FAMILY_VERSION),
    Cell(b"d", b"f", b"q", 5, P, b"d"), Cell(b"d", b"g", b"x", 5, P, b"d"),
    Cell(b"d", b"f", b"", 500, CellType.DELETE_FAMILY),
    Cell(b"d", b"g", b"", 500, CellType.DELETE_FAMILY),
    Cell(b"e", b"f", b"q", 10, P, b"e10"), Cell(b"e", b"f", b"q", 20, P, b"e20"),
    Cell(b"e", b"f", b"q", 20, D),
], key=cell_order)


def region_conn(native: NativeClient, table: str, codec: str = "") -> tuple[bytes, Connection]:
    """The table's one region and a connection to its server (no codec: no cell block)."""
    region, = native.regions(table)
    return region.name, Connection(region.host, region.port, codec=codec)


def specifier(name: bytes) -> dict[str, Any]:
    return {"type": 1, "value": name}  # REGION_NAME


def driver_frame(call_id: int, method: bytes, request: bytes) -> bytes:
    """A call as hbase-driver 1.1.1 frames it: the request's length varint written as text
    (each 7-bit group a character, UTF-8 encoded: a length of 128 or more grows by a byte
    per group with its high bit set), the frame's length counting those bytes."""
    header = b"\x08" + bytes([call_id]) + b"\x1a" + bytes([len(method)]) + method + b"\x20\x01"
    size, groups = len(request), []
    while True:
        bits, size = size & 0x7F, size >> 7
        groups.append(chr(bits | (0x80 if size else 0)))
        if not size:
            break
    length = "".join(groups).encode("utf-8")
    body = bytes([len(header)]) + header + length + request
    return struct.pack(">I", len(body)) + body


def driver_put(host: str, port: int, region: bytes, value: bytes) -> Reply:
    """Put ``f:q`` of ``row`` at 7 as hbase-driver does (call id 66), on a new connection
    whose header names no codec; the one reply."""
    request = encode("MutateRequest", region=specifier(region), mutation=mutation(
        PUT, b"row", {b"f": [qv(b"q", value, 7)]}))
    assert len(request) >= 128
    user = b"\x0a\x11pythonHbaseDriver"  # UserInformation { 1 effective_user }
    header = b"\x0a" + bytes([len(user)]) + user + b"\x12\x0dClientService"
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(preamble() + struct.pack(">I", len(header)) + header
                     + driver_frame(66, b"Mutate", request))
        decoder, replies = ReplyDecoder(), list[Reply]()
        while not replies:
            chunk = sock.recv(65536)
            assert chunk, "connection closed without a reply"
            replies += decoder.feed(chunk)
    reply, = replies
    return reply


APPEND, INCREMENT = 0, 1


def long_bytes(n: int) -> bytes:
    return n.to_bytes(8, "big", signed=True)
