"""The admin messages on bytes: what the project's encoder writes equals what Google's
``protobuf`` package writes for the same values (``proto_reference``: shapes transcribed by
hand from HBase's .proto files), and what that package writes decodes to the expected
values; one request worked out by hand from the wire rules."""

from __future__ import annotations

import hashlib

import pytest

from hbase_migrate.cluster.admin import SnapshotInfo
from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.errors import ZkPayloadError
from hbase_migrate.cluster.schema import Namespace, decode_family, family_message, table_schema
from hbase_migrate.rpc.admin import DO_NOT_RETRY, _unknown_method
from hbase_migrate.rpc.master_calls import (
    Nonce,
    create_namespace_request,
    create_table_request,
    decode_namespaces,
    decode_proc_id,
    decode_procedure_result,
    decode_table_descriptors,
    decode_table_state,
    decode_zk_table_state,
    get_table_descriptors_request,
    table_request,
)
from hbase_migrate.rpc.region_admin import (
    compact_region_request,
    decode_flush_response,
    decode_online_regions,
    decode_region_info_response,
    decode_region_loads,
    decode_roll_response,
    flush_region_request,
    region_info_request,
    region_load_request,
)
from hbase_migrate.rpc.server_admin import AdminCallError
from hbase_migrate.rpc.snapshots import (
    SNAPSHOT_FLUSH,
    decode_completed_snapshots,
    decode_restore_snapshot_response,
    decode_snapshot_response,
    restore_snapshot_request,
    snapshot_description,
    snapshot_request,
)
from hbase_migrate.rpc.status import cluster_status_request, decode_cluster_status
from hbase_migrate.wal.names import ServerName
from hbase_migrate.wal.protobuf import ProtobufError, bytes_field
from tests.rpc.proto_reference import decode, encode

FAMILY = FamilyDescriptor(b"f", max_versions=5, min_versions=1, ttl=86400, scope=1,
                          compression="GZ", bloom_filter="ROWCOL", in_memory=True,
                          block_cache=False, block_size=32768, data_block_encoding="FAST_DIFF",
                          keep_deleted_cells="TTL")
# the same settings as HBase's ColumnFamilyDescriptorBuilder writes them, by key
FAMILY_ATTRIBUTES = {b"BLOCKCACHE": b"false", b"BLOCKSIZE": b"32768", b"BLOOMFILTER": b"ROWCOL",
                     b"COMPRESSION": b"GZ", b"DATA_BLOCK_ENCODING": b"FAST_DIFF",
                     b"IN_MEMORY": b"true", b"KEEP_DELETED_CELLS": b"TTL",
                     b"MIN_VERSIONS": b"1", b"REPLICATION_SCOPE": b"1", b"TTL": b"86400",
                     b"VERSIONS": b"5"}
REGION = b"ns:t,,1700000000000.0123456789abcdef0123456789abcdef."


def pairs(values: dict[bytes, bytes]) -> list[dict[str, bytes]]:
    return [{"first": k, "second": v} for k, v in values.items()]


def test_a_family_carries_every_setting_under_hbase_key_names() -> None:
    assert family_message(FAMILY) == encode(
        "ColumnFamilySchema", name=b"f", attributes=pairs(dict(sorted(FAMILY_ATTRIBUTES.items()))))


def test_a_family_hbase_wrote_reads_back_with_defaults_for_absent_keys() -> None:
    """Keys in any order, lower-case enum and boolean spellings (HBase's getters take
    them), keys the project does not carry and a configuration pass; a family with no
    attributes has HBase's defaults."""
    shuffled = dict(reversed(FAMILY_ATTRIBUTES.items()))
    shuffled[b"COMPRESSION"], shuffled[b"IN_MEMORY"] = b"gz", b"TRUE"
    shuffled[b"INDEX_BLOCK_ENCODING"] = b"NONE"
    data = encode("ColumnFamilySchema", name=b"f", attributes=pairs(shuffled),
                  configuration=[{"name": "hbase.hstore.blockingStoreFiles", "value": "20"}])
    assert decode_family(data) == FAMILY
    bare = decode_family(encode("ColumnFamilySchema", name=b"g"))
    assert bare == FamilyDescriptor(b"g") and bare.ttl == FOREVER and bare.max_versions == 1
    forever = encode("ColumnFamilySchema", name=b"g", attributes=pairs({b"TTL": b"FOREVER"}))
    assert decode_family(forever).ttl == FOREVER


def test_a_setting_that_does_not_parse_names_family_key_and_value() -> None:
    data = encode("ColumnFamilySchema", name=b"f", attributes=pairs({b"VERSIONS": b"many"}))
    with pytest.raises(ProtobufError, match=r"family b'f': attribute VERSIONS = 'many'"):
        decode_family(data)


def test_create_table_request_with_splits_attributes_and_nonce() -> None:
    desc = TableDescriptor("ns:t", (FAMILY, FamilyDescriptor(b"g")),
                           ((b"MAX_FILESIZE", b"1073741824"), (b"DURABILITY", b"ASYNC_WAL")))
    g_attributes = dict(sorted({b"BLOCKCACHE": b"true", b"BLOCKSIZE": b"65536",
                                b"BLOOMFILTER": b"ROW", b"COMPRESSION": b"NONE",
                                b"DATA_BLOCK_ENCODING": b"NONE", b"IN_MEMORY": b"false",
                                b"KEEP_DELETED_CELLS": b"FALSE", b"MIN_VERSIONS": b"0",
                                b"REPLICATION_SCOPE": b"0", b"TTL": b"2147483647",
                                b"VERSIONS": b"1"}.items()))
    expected = encode(
        "CreateTableRequest",
        table_schema={"table_name": {"namespace": b"ns", "qualifier": b"t"},
                      "attributes": pairs({b"DURABILITY": b"ASYNC_WAL",
                                           b"MAX_FILESIZE": b"1073741824"}),
                      "column_families": [
                          {"name": b"f", "attributes": pairs(dict(sorted(
                              FAMILY_ATTRIBUTES.items())))},
                          {"name": b"g", "attributes": pairs(g_attributes)}]},
        split_keys=[b"g", b"p\x00"], nonce_group=2**62 + 5, nonce=12345)
    assert create_table_request(desc, [b"g", b"p\x00"], Nonce(2**62 + 5, 12345)) == expected
    # and the schema read back, as GetTableDescriptors returns it
    response = bytes_field(1, table_schema(desc))
    assert decode_table_descriptors(response) == \
        [TableDescriptor("ns:t", desc.families, tuple(sorted(desc.attributes)))]


def test_table_request_by_hand() -> None:
    """DisableTableRequest { table_name { "default", "t" }, nonce_group 1, nonce 300 }."""
    assert table_request("t", Nonce(1, 300)) == bytes.fromhex(
        "0a0c"  # 1 table_name, 12 bytes (9 + 3)
        "0a0764656661756c74"  # 1 namespace "default"
        "120174"  # 2 qualifier "t"
        "1001"  # 2 nonce_group 1
        "18ac02")  # 3 nonce 300 (0xAC 0x02: 300 = 0b10_0101100)
    assert table_request("ns:t") == bytes.fromhex("0a07" "0a026e73" "120174")


def test_namespaces_and_table_state() -> None:
    assert create_namespace_request(Namespace("ns"), Nonce(3, 4)) == encode(
        "CreateNamespaceRequest", namespaceDescriptor={"name": b"ns"}, nonce_group=3, nonce=4)
    listed = encode("ListNamespaceDescriptorsResponse", namespaceDescriptor=[
        {"name": b"default"}, {"name": b"q", "configuration": [
            {"name": "hbase.namespace.quota.maxtables", "value": "5"}]}])
    assert decode_namespaces(listed) == [
        Namespace("default"), Namespace("q", (("hbase.namespace.quota.maxtables", "5"),))]
    assert decode_table_state(encode("GetTableStateResponse", table_state={"state": 1})) \
        == "DISABLED"
    assert get_table_descriptors_request(["a", "ns:b"]) == encode(
        "GetTableDescriptorsRequest", table_names=[{"namespace": b"default", "qualifier": b"a"},
                                                   {"namespace": b"ns", "qualifier": b"b"}])
    assert get_table_descriptors_request(namespace="ns") == encode(
        "GetTableDescriptorsRequest", namespace="ns")


def test_hbase_1x_table_znode_by_hand() -> None:
    """HBase 1.x keeps a table's state in ``<parent>/table/<table>``: the metadata prefix
    (FF, id length, id + salt), PBUF and ZooKeeper.proto's Table { 1 state }."""
    prefix = bytes.fromhex("ff" "0000000a") + b"master:1" + b"\x00\x01"
    assert decode_zk_table_state(prefix + b"PBUF" + bytes.fromhex("0801"), "t") == "DISABLED"
    assert decode_zk_table_state(prefix + b"PBUF" + bytes.fromhex("0802"), "t") == "DISABLING"
    assert decode_zk_table_state(prefix + b"PBUF", "t") == "ENABLED"  # state's default
    assert decode_zk_table_state(b"", "t") == "ENABLED"  # no data: enabled, as 1.x reads it
    with pytest.raises(ZkPayloadError, match="table znode of ns:t"):
        decode_zk_table_state(prefix + b"JUNK" + bytes.fromhex("0801"), "ns:t")


def test_a_method_the_master_lacks_is_told_from_other_refusals() -> None:
    """What a 1.x master's RPC server answers for GetTableState (a 2.0 call), and refusals
    that are not that."""
    lacks = AdminCallError("GetTableState", "table t", "master m", (
        "/127.0.0.1:16000 is unable to read call parameter from client 127.0.0.1; "
        "java.lang.UnsupportedOperationException: GetTableState"), DO_NOT_RETRY)
    assert _unknown_method(lacks, "GetTableState")
    assert not _unknown_method(lacks, "GetTableDescriptors")
    other = AdminCallError("GetTableState", "table t", "master m", "no such table",
                           "org.apache.hadoop.hbase.TableNotFoundException")
    assert not _unknown_method(other, "GetTableState")


def test_procedure_ids_and_results() -> None:
    assert decode_proc_id(encode("CreateTableResponse", proc_id=77), "R") == 77
    assert decode_proc_id(b"", "R") is None
    running = decode_procedure_result(encode("GetProcedureResultResponse", state=1,
                                             submitted_time=5))
    assert not running.finished and running.error == "" and running.submitted == 5
    failed = decode_procedure_result(encode(
        "GetProcedureResultResponse", state=2, exception={
            "source": "master", "generic_exception": {
                "class_name": "org.apache.hadoop.hbase.TableExistsException",
                "message": "ns:t"}}))
    assert failed.finished
    assert failed.error == "org.apache.hadoop.hbase.TableExistsException: ns:t"


def test_snapshot_messages() -> None:
    desc = snapshot_description("s1", "ns:t", 3600, SNAPSHOT_FLUSH)
    assert snapshot_request(desc, Nonce(9, 10)) == encode(
        "SnapshotRequest", snapshot={"name": "s1", "table": "ns:t", "type": 1, "ttl": 3600},
        nonce_group=9, nonce=10)
    assert restore_snapshot_request(snapshot_description("s1", "ns:c"), Nonce(1, 2)) == encode(
        "RestoreSnapshotRequest", snapshot={"name": "s1", "table": "ns:c"}, nonce_group=1,
        nonce=2)
    started = decode_snapshot_response(encode("SnapshotResponse", expected_timeout=300000,
                                              proc_id=41))
    assert started == (300000, 41)
    assert decode_snapshot_response(encode("SnapshotResponse", expected_timeout=1)).proc_id \
        is None
    assert decode_restore_snapshot_response(encode("CreateTableResponse", proc_id=8)) == 8
    listed = encode("GetCompletedSnapshotsResponse", snapshots=[
        {"name": "a", "table": "t", "creation_time": 1700000000123, "type": 1, "version": 2,
         "owner": "hbase", "ttl": 600},
        {"name": "b", "table": "ns:u", "creation_time": 1}])
    assert decode_completed_snapshots(listed) == [SnapshotInfo("a", "t", 1700000000123, 600),
                                                  SnapshotInfo("b", "ns:u", 1, 0)]


def test_cluster_status() -> None:
    assert cluster_status_request((0, 2, 4)) == encode("GetClusterStatusRequest",
                                                       options=[0, 2, 4])
    region = {"region_specifier": {"type": 1, "value": b"r"}}
    data = encode("GetClusterStatusResponse", cluster_status={
        "hbase_version": {"version": "2.6.1"},
        "live_servers": [
            {"server": {"host_name": "rs1", "port": 16020, "start_code": 11},
             "server_load": {"total_number_of_requests": 900, "used_heap_MB": 100,
                             "max_heap_MB": 1000, "region_loads": [region, region]}},
            {"server": {"host_name": "rs2", "port": 16020, "start_code": 12},
             "server_load": {"number_of_requests": 0}}],
        "dead_servers": [{"host_name": "rs3", "port": 16020, "start_code": 7}],
        "regions_in_transition": [{"spec": {"type": 1, "value": b"x"},
                                   "region_state": {"state": 1}}],
        "cluster_id": {"cluster_id": "c-1"},
        "master": {"host_name": "m", "port": 16000, "start_code": 3},
        "backup_masters": [{"host_name": "m2", "port": 16000, "start_code": 4}],
        "balancer_on": True})
    status = decode_cluster_status(data)
    assert (status.version, status.cluster_id, status.master) == \
        ("2.6.1", "c-1", ServerName("m", 16000, 3))
    assert status.backup_masters == (ServerName("m2", 16000, 4),)
    assert [(s.server.host, s.regions, s.requests, s.max_heap_mb)
            for s in status.live_servers] == [("rs1", 2, 900, 1000), ("rs2", 0, 0, 0)]
    assert status.dead_servers == (ServerName("rs3", 16020, 7),)
    assert status.regions_in_transition == 1 and status.regions == 2
    shown = status.to_json()
    assert shown["master"] == "m,16000,3" and shown["backup_masters"] == ["m2,16000,4"]
    assert [s["server"] for s in shown["live_servers"]] == ["rs1,16020,11", "rs2,16020,12"]
    assert shown["dead_servers"] == ["rs3,16020,7"] and shown["regions"] == 2


def test_region_server_messages() -> None:
    spec = {"type": 1, "value": REGION}
    assert region_info_request(REGION) == encode("GetRegionInfoRequest", region=spec,
                                                 compaction_state=True)
    assert flush_region_request(REGION) == encode("FlushRegionRequest", region=spec)
    assert compact_region_request(REGION) == encode("CompactRegionRequest", region=spec,
                                                    major=True)
    assert compact_region_request(REGION, False, b"f") == encode(
        "CompactRegionRequest", region=spec, major=False, family=b"f")
    info = {"region_id": 1700000000000, "table_name": {"namespace": b"ns", "qualifier": b"t"},
            "start_key": b"", "end_key": b"g"}
    state = decode_region_info_response(encode("GetRegionInfoResponse", region_info=info,
                                               compaction_state=2, splittable=True),
                                        "rs1", 16020)
    assert state.compaction == "MAJOR"
    region = state.region
    assert (region.table, region.start, region.end, region.host, region.port) == \
        ("ns:t", b"", b"g", "rs1", 16020)
    # the full name HBase gives it: table,start,id.md5(table,start,id).
    assert region.name == b"ns:t,,1700000000000.%s." % \
        hashlib.md5(b"ns:t,,1700000000000").hexdigest().encode()
    meta = {"region_id": 1, "table_name": {"namespace": b"hbase", "qualifier": b"meta"}}
    online = decode_online_regions(encode("GetOnlineRegionResponse",
                                          region_info=[meta, info]), "rs1", 16020)
    assert [r.name for r in online] == [b"hbase:meta,,1", region.name]
    assert decode_region_info_response(encode("GetRegionInfoResponse", region_info=info)
                                       ).compaction == "NONE"
    assert decode_flush_response(encode("FlushRegionResponse", last_flush_time=5,
                                        flushed=True)) == (5, True)
    assert decode_roll_response(encode("RollWALWriterResponse",
                                       region_to_flush=[b"a", b"b"])) == (b"a", b"b")
    assert decode_roll_response(b"") == ()
    assert decode("FlushRegionRequest", flush_region_request(REGION)).region.value == REGION


def test_region_loads() -> None:
    assert region_load_request("ns:t") == encode(
        "GetRegionLoadRequest", table_name={"namespace": b"ns", "qualifier": b"t"})
    data = encode("GetRegionLoadResponse", region_loads=[
        {"region_specifier": {"type": 1, "value": REGION}, "stores": 2, "storefiles": 3,
         "mem_store_size_MB": 4, "read_requests_count": 5},
        {"region_specifier": {"type": 1, "value": b"other"}}])
    assert decode_region_loads(data) == [(REGION, 2, 3, 4, 5), (b"other", 0, 0, 0, 0)]
