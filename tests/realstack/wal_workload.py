"""A scripted workload for real-WAL golden files: every cell type HBase writes through its
Thrift2 gateway, binary row keys, an empty and a large value, per-cell TTL tags, several
regions over two tables; then a flush (FLUSH markers) and more edits after it.

HBase 1.x's Thrift2 gateway has no admin calls and no family-version delete: there the
stack's admin endpoint creates the tables and writes that delete (:func:`run_on`). A stack
with no gateway (HBase 3.0.0-alpha-4 here) gets the same calls over HBase's own RPC
(:func:`run_native`), each sent as HBase's Java client sends what the gateway does for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from thriftpy2.rpc import make_client

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.hbase.connect import connect
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.messages import LATEST_TIMESTAMP, name_bytes_pair, region_specifier
from hbase_migrate.rpc.multi import (
    DELETE,
    PUT,
    decode_multi_response,
    inline_mutation,
)
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.thrift.thrift2_idl import hbase2
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import bytes_field, varint_field
from realstack.hbase import is_1x
from stackprocs.admin_client import call_admin

TABLES = {"golden_a": (b"\x40", b"\x80"), "golden_b": ()}
ROWS = (b"\x00\x01", b"row-1", b"\x7f\xff", b"\xc3\xa9t\xc3\xa9", b"\xff\xfe\x00")
LARGE = bytes(range(256)) * 8 + b"x" * 2048   # 4 KB, partly compressible
TS = 1_700_000_000_000


def _col(family: bytes, qualifier: bytes, value: bytes, ts: int | None = None
         ) -> hbase2.TColumnValue:
    return hbase2.TColumnValue(family=family, qualifier=qualifier, value=value, timestamp=ts)


def _create_thrift2(endpoint: str, name: str, splits: tuple[bytes, ...]) -> None:
    with Thrift2Client(endpoint) as t2:
        t2.create_table(TableDescriptor(name, (FamilyDescriptor(b"f", max_versions=5),
                                               FamilyDescriptor(b"g"))), splits)


def run_on(cluster_json: Path, described: Mapping[str, object],
           tables: Mapping[str, tuple[bytes, ...]] = TABLES) -> None:
    """The workload on a realstack cluster, through what its version offers; a flush of the
    first table half-way through the admin endpoint."""
    if "thrift2" not in described:
        run_native(str(described["zookeeper"]), str(described["znode_parent"]),
                   lambda table: call_admin(cluster_json, "flush", {"table": table}),
                   tables=tables)
        return
    endpoint = str(described["thrift2"])
    if not is_1x(str(described["hbase_version"])):
        run(endpoint, lambda table: call_admin(cluster_json, "flush", {"table": table}),
            tables=tables)
        return

    def create(name: str, splits: tuple[bytes, ...]) -> None:
        call_admin(cluster_json, "create-table", {
            "table": name, "families": [{"name": "f", "max_versions": 5}, {"name": "g"}],
            "splits": [to_string_binary(key) for key in splits]})

    def family_version(name: str, row: bytes, family: bytes, timestamp: int) -> None:
        call_admin(cluster_json, "delete", {
            "table": name, "row": to_string_binary(row), "family": to_string_binary(family),
            "timestamp": timestamp, "type": "DeleteFamilyVersion"})

    run(endpoint, lambda table: call_admin(cluster_json, "flush", {"table": table}),
        tables=tables, create=create, delete_family_version=family_version)


def run(endpoint: str, flush: Callable[[str], object] | None = None, *,
        tables: Mapping[str, tuple[bytes, ...]] = TABLES,
        create: Callable[[str, tuple[bytes, ...]], None] | None = None,
        delete_family_version: Callable[[str, bytes, bytes, int], None] | None = None
        ) -> None:
    """Create the tables and write the workload through the Thrift2 gateway at
    ``endpoint``; ``flush(table)`` is called mid-way (the admin endpoint's flush).
    ``create(name, splits)`` and ``delete_family_version(table, row, family, timestamp)``
    replace the Thrift2 calls for them (HBase 1.x's gateway has neither)."""
    first = next(iter(tables))
    for name, splits in tables.items():
        if create is None:
            _create_thrift2(endpoint, name, splits)
        else:
            create(name, splits)
    host, port = endpoint.rsplit(":", 1)
    raw = make_client(hbase2.THBaseService, host, int(port), timeout=60_000)
    try:
        for name in tables:
            table = name.encode()
            for i, row in enumerate(ROWS):
                raw.put(table, hbase2.TPut(row=row, columnValues=[
                    _col(b"f", b"q", b"v%d" % i, TS + i), _col(b"f", b"", b"", TS + i),
                    _col(b"g", b"\x00bin\xff", b"\x01\x02", TS + i)]))
            raw.put(table, hbase2.TPut(row=ROWS[1], columnValues=[
                _col(b"f", b"large", LARGE, TS + 10)]))
            # Per-cell TTL: HBase turns the _ttl attribute into a TTL tag on every cell.
            raw.put(table, hbase2.TPut(row=ROWS[2], columnValues=[
                _col(b"f", b"ttl", b"tagged", TS + 11)],
                attributes={b"_ttl": (86_400_000).to_bytes(8, "big")}))
            raw.putMultiple(table, [hbase2.TPut(row=row, columnValues=[
                _col(b"f", b"multi", row, TS + 12)]) for row in ROWS])
            if flush is not None and name == first:
                flush(name)
            raw.deleteSingle(table, hbase2.TDelete(row=ROWS[0], columns=[
                hbase2.TColumn(family=b"f", qualifier=b"q", timestamp=TS)],
                deleteType=hbase2.TDeleteType.DELETE_COLUMN))
            raw.deleteSingle(table, hbase2.TDelete(row=ROWS[1], columns=[
                hbase2.TColumn(family=b"f", qualifier=b"q")],
                deleteType=hbase2.TDeleteType.DELETE_COLUMNS, timestamp=TS + 20))
            raw.deleteSingle(table, hbase2.TDelete(row=ROWS[2], columns=[
                hbase2.TColumn(family=b"g")], deleteType=hbase2.TDeleteType.DELETE_FAMILY,
                timestamp=TS + 21))
            if delete_family_version is None:
                raw.deleteSingle(table, hbase2.TDelete(row=ROWS[3], columns=[
                    hbase2.TColumn(family=b"f", timestamp=TS + 3)],
                    deleteType=hbase2.TDeleteType.DELETE_FAMILY_VERSION))
            else:
                delete_family_version(name, ROWS[3], b"f", TS + 3)
            raw.deleteSingle(table, hbase2.TDelete(row=ROWS[4], timestamp=TS + 22))
            raw.mutateRow(table, hbase2.TRowMutations(row=ROWS[0], mutations=[
                hbase2.TMutation(put=hbase2.TPut(row=ROWS[0], columnValues=[
                    _col(b"f", b"m", b"in-row-mutation", TS + 30)])),
                hbase2.TMutation(deleteSingle=hbase2.TDelete(row=ROWS[0], columns=[
                    hbase2.TColumn(family=b"g", qualifier=b"\x00bin\xff")],
                    deleteType=hbase2.TDeleteType.DELETE_COLUMNS))]))
            raw.increment(table, hbase2.TIncrement(row=ROWS[1], columns=[
                hbase2.TColumnIncrement(family=b"f", qualifier=b"counter", amount=5)]))
            raw.append(table, hbase2.TAppend(row=ROWS[2], columns=[
                hbase2.TColumnValue(family=b"f", qualifier=b"log", value=b"ab")]))
    finally:
        raw.close()


APPEND, INCREMENT = 0, 1  # MutationProto.MutationType


class _Rpc:
    """The gateway's single-row calls as HBase's Java client sends them: a Mutate per put,
    delete, increment or append (inline MutationProtos, attributes as
    ``Mutation.setAttribute``), an atomic RegionAction for a row's mutations."""

    def __init__(self, cluster: NativeCluster) -> None:
        self.cluster = cluster

    def _region(self, table: str, row: bytes) -> tuple[bytes, str, int]:
        region = self.cluster.data.locator.locate(table, row)
        return region.name, region.host, region.port

    def mutate(self, table: str, row: bytes, mutation: bytes) -> None:
        name, host, port = self._region(table, row)
        self.cluster.data.pool.get(host, port).call(
            "Mutate", bytes_field(1, region_specifier(name)) + bytes_field(2, mutation))

    def mutate_row(self, table: str, row: bytes, mutations: list[bytes]) -> None:
        """``mutations`` of one row applied atomically (a Multi of one atomic RegionAction)."""
        name, host, port = self._region(table, row)
        action = bytes_field(1, region_specifier(name)) + varint_field(2, 1) + b"".join(
            bytes_field(3, varint_field(1, i) + bytes_field(2, m))
            for i, m in enumerate(mutations))
        reply = self.cluster.data.pool.get(host, port).call("Multi", bytes_field(1, action))
        for result in decode_multi_response(reply.response or b""):
            failed = result.exception or next(
                (r.exception for r in result.results if r.exception), None)
            if failed:
                raise RemoteError(*failed, call=f"mutateRow {table} {row!r}")


def _mutation(row: bytes, kind: int, families: dict[bytes, list[bytes]], *,
              timestamp: int | None = None, attributes: dict[str, bytes] | None = None
              ) -> bytes:
    """A MutationProto: ``families`` maps each family to its QualifierValues."""
    out = bytes_field(1, row) + varint_field(2, kind)
    for family, values in families.items():
        out += bytes_field(3, bytes_field(1, family) + b"".join(
            bytes_field(2, v) for v in values))
    if timestamp is not None:
        out += varint_field(4, timestamp)
    for name, value in (attributes or {}).items():
        out += bytes_field(5, name_bytes_pair(name, value))
    return out


def _value(qualifier: bytes, value: bytes) -> bytes:
    """A QualifierValue at the latest time (the server's), as the client's inline form
    sends an increment's or an append's column."""
    return bytes_field(1, qualifier) + bytes_field(2, value) + varint_field(3, LATEST_TIMESTAMP)


def run_native(quorum: str, znode_parent: str, flush: Callable[[str], object], *,
               tables: Mapping[str, tuple[bytes, ...]] = TABLES) -> None:
    """The workload of :func:`run`, call for call, over HBase's RPC (ZooKeeper at
    ``quorum``): for a stack with no Thrift gateway."""
    endpoints = ClusterEndpoints("native", zookeeper=quorum, znode_parent=znode_parent)
    first = next(iter(tables))
    with connect(endpoints) as cluster:
        assert isinstance(cluster, NativeCluster)
        rpc = _Rpc(cluster)
        for name, splits in tables.items():
            cluster.create_table(TableDescriptor(name, (FamilyDescriptor(b"f", max_versions=5),
                                                        FamilyDescriptor(b"g"))), splits)
        for name in tables:
            for i, row in enumerate(ROWS):
                rpc.mutate(name, row, inline_mutation(row, [
                    Cell(row, b"f", b"q", TS + i, CellType.PUT, b"v%d" % i),
                    Cell(row, b"f", b"", TS + i, CellType.PUT),
                    Cell(row, b"g", b"\x00bin\xff", TS + i, CellType.PUT, b"\x01\x02")]))
            rpc.mutate(name, ROWS[1], inline_mutation(ROWS[1], [
                Cell(ROWS[1], b"f", b"large", TS + 10, CellType.PUT, LARGE)]))
            # Per-cell TTL: HBase turns the _ttl attribute into a TTL tag on every cell.
            ttl = _mutation(ROWS[2], PUT, {b"f": [
                bytes_field(1, b"ttl") + varint_field(3, TS + 11) + bytes_field(2, b"tagged")]},
                attributes={"_ttl": (86_400_000).to_bytes(8, "big")})
            rpc.mutate(name, ROWS[2], ttl)
            cluster.write_cells(name, [Cell(row, b"f", b"multi", TS + 12, CellType.PUT, row)
                                       for row in ROWS])
            if name == first:
                flush(name)
            for cell in (Cell(ROWS[0], b"f", b"q", TS, CellType.DELETE),
                         Cell(ROWS[1], b"f", b"q", TS + 20, CellType.DELETE_COLUMN),
                         Cell(ROWS[2], b"g", b"", TS + 21, CellType.DELETE_FAMILY),
                         Cell(ROWS[3], b"f", b"", TS + 3, CellType.DELETE_FAMILY_VERSION)):
                rpc.mutate(name, cell.row, inline_mutation(cell.row, [cell]))
            rpc.mutate(name, ROWS[4], _mutation(ROWS[4], DELETE, {}, timestamp=TS + 22))
            rpc.mutate_row(name, ROWS[0], [
                inline_mutation(ROWS[0], [
                    Cell(ROWS[0], b"f", b"m", TS + 30, CellType.PUT, b"in-row-mutation")]),
                inline_mutation(ROWS[0], [Cell(ROWS[0], b"g", b"\x00bin\xff",
                                               LATEST_TIMESTAMP, CellType.DELETE_COLUMN)])])
            rpc.mutate(name, ROWS[1], _mutation(ROWS[1], INCREMENT, {
                b"f": [_value(b"counter", (5).to_bytes(8, "big"))]}))
            rpc.mutate(name, ROWS[2], _mutation(ROWS[2], APPEND, {
                b"f": [_value(b"log", b"ab")]}))
