"""A scripted workload for real-WAL golden files: every cell type HBase writes through its
Thrift2 gateway, binary row keys, an empty and a large value, per-cell TTL tags, several
regions over two tables; then a flush (FLUSH markers) and more edits after it.

HBase 1.x's Thrift2 gateway has no admin calls and no family-version delete: there the
stack's admin endpoint creates the tables and writes that delete (:func:`run_on`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from thriftpy2.rpc import make_client

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.thrift.thrift2 import Thrift2Client
from hbase_migrate.cluster.thrift.thrift2_idl import hbase2
from minihbase.cli.minicluster import call_admin
from realstack.hbase import is_1x

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
