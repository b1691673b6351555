"""ZooKeeper payload codecs: golden bytes written out from the proto field numbers, round
trips, the two ReplicationPeer schemas, and replication queue ids."""

from __future__ import annotations

import os
import socket

import pytest

from hbase_migrate.cluster.errors import ZkPayloadError
from hbase_migrate.cluster.zk.replication_payload import (
    ReplicationPeer,
    ReplicationState,
    TableCF,
    decode_replication_peer,
    decode_replication_state,
    decode_wal_position,
    detect_peer_schema,
    encode_replication_peer,
    encode_replication_state,
    encode_wal_position,
    parse_legacy_table_cfs,
    parse_queue_id,
)
from hbase_migrate.cluster.zk.zkpayload import (
    ClusterId,
    Master,
    MetaRegionServer,
    RegionServerInfo,
    ServerName,
    VersionInfo,
    add_metadata,
    decode_cluster_id,
    decode_master,
    decode_meta_region_server,
    decode_region_server_info,
    encode_cluster_id,
    encode_master,
    encode_meta_region_server,
    encode_region_server_info,
    split_metadata,
    strip_pb_magic,
)

SN = ServerName("rs1", 16020, 1700000000000)
# ServerName: 0A len "rs1" | 10 varint(16020) = 94 7D | 18 varint(1700000000000)
SN_MSG = (b"\x0a\x03rs1" + b"\x10\x94\x7d" + b"\x18\x80\xd0\x95\xff\xbc\x31")
CLUSTER_KEY = "zk1:2181:/hbase"
KEY_FIELD = b"\x0a" + bytes([len(CLUSTER_KEY)]) + CLUSTER_KEY.encode()


def test_metadata_prefix_bytes() -> None:
    data = add_metadata(b"PBUF\x08\x01", identifier="1234@host", salt=b"\x01" * 8)
    assert data == (b"\xff" + b"\x00\x00\x00\x11" + b"1234@host" + b"\x01" * 8
                    + b"PBUF\x08\x01")
    ident, rest = split_metadata(data)
    assert ident == b"1234@host" + b"\x01" * 8
    assert rest == b"PBUF\x08\x01"


def test_metadata_default_identifier_is_pid_at_host_plus_random_salt() -> None:
    ids = {split_metadata(add_metadata(b"x"))[0] for _ in range(4)}
    assert {i[:-8] for i in ids if i} == {f"{os.getpid()}@{socket.gethostname()}".encode()}
    assert len(ids) > 1  # 8 random salt bytes: four equal draws would be a broken salt


def test_empty_payload_gets_no_prefix_and_bad_prefix_is_an_error() -> None:
    assert add_metadata(b"") == b""
    with pytest.raises(ZkPayloadError, match="does not fit"):
        split_metadata(b"\xff\x00\x00\x00\x40abc", "/hbase/master")
    with pytest.raises(ZkPayloadError, match="PBUF"):
        strip_pb_magic(b"\x08\x01", "/hbase/master")


def test_master_golden_bytes() -> None:
    # Master: 0A len ServerName | 10 rpc_version 0 | 18 varint(16010) = 8A 7D
    expected = b"PBUF" + b"\x0a" + bytes([len(SN_MSG)]) + SN_MSG + b"\x10\x00" + b"\x18\x8a\x7d"
    assert encode_master(Master(SN, 0, 16010)) == expected
    assert decode_master(add_metadata(expected)) == Master(SN, 0, 16010)


def test_meta_region_server_golden_bytes() -> None:
    expected = b"PBUF\x0a" + bytes([len(SN_MSG)]) + SN_MSG + b"\x10\x00" + b"\x18\x03"
    assert encode_meta_region_server(MetaRegionServer(SN)) == expected
    assert decode_meta_region_server(expected) == MetaRegionServer(SN, 0, 3)


def test_cluster_id_golden_bytes() -> None:
    cid = "3f1b2c4d-0000-4000-8000-000000000001"
    expected = b"PBUF\x0a" + bytes([len(cid)]) + cid.encode()
    assert encode_cluster_id(ClusterId(cid)) == expected
    assert decode_cluster_id(add_metadata(expected)) == ClusterId(cid)


def test_region_server_info_golden_bytes_and_negative_port() -> None:
    version = VersionInfo("2.6.0", "u", "r", "me", "d", "c", 2, 6)
    version_msg = (b"\x0a\x052.6.0" b"\x12\x01u" b"\x1a\x01r" b"\x22\x02me" b"\x2a\x01d"
                   b"\x32\x01c" b"\x38\x02" b"\x40\x06")
    # RegionServerInfo: 08 varint(16030) = 9E 7D | 12 len VersionInfo
    expected = b"PBUF\x08\x9e\x7d\x12" + bytes([len(version_msg)]) + version_msg
    assert len(version_msg) == 27
    assert encode_region_server_info(RegionServerInfo(16030, version)) == expected
    assert decode_region_server_info(expected) == RegionServerInfo(16030, version)
    # int32 -1 is sign-extended to ten varint bytes
    negative = b"PBUF\x08" + b"\xff" * 9 + b"\x01"
    assert encode_region_server_info(RegionServerInfo(-1)) == negative
    assert decode_region_server_info(negative) == RegionServerInfo(-1, None)


def test_replication_state_golden_bytes() -> None:
    assert encode_replication_state(ReplicationState.ENABLED) == b"PBUF\x08\x00"
    assert encode_replication_state(ReplicationState.DISABLED) == b"PBUF\x08\x01"
    assert decode_replication_state(add_metadata(b"PBUF\x08\x01")) is ReplicationState.DISABLED
    with pytest.raises(ZkPayloadError):
        decode_replication_state(b"PBUF\x08\x07")


def test_wal_position_forms() -> None:
    assert encode_wal_position(1000) == b"PBUF\x08\xe8\x07"  # 1000 = 0x68 | 7 << 7
    assert decode_wal_position(add_metadata(b"PBUF\x08\xe8\x07")) == 1000
    assert decode_wal_position(b"") == 0  # a WAL just added to its queue
    assert decode_wal_position(b"\x00\x00\x00\x00\x00\x00\x03\xe8") == 1000  # bare long
    with pytest.raises(ZkPayloadError, match="8-byte long"):
        decode_wal_position(b"\x01\x02\x03")


def test_replication_peer_field_6_differs_between_1x_and_2x() -> None:
    two_x = b"PBUF" + KEY_FIELD + b"\x32\x03ns1" + b"\x38\x05"  # 6 namespaces, 7 bandwidth
    one_x = b"PBUF" + KEY_FIELD + b"\x30\x05"  # 6 bandwidth (varint)
    peer2 = ReplicationPeer(CLUSTER_KEY, namespaces=(b"ns1",), bandwidth=5)
    peer1 = ReplicationPeer(CLUSTER_KEY, bandwidth=5)
    assert encode_replication_peer(peer2) == two_x
    assert encode_replication_peer(peer1, schema="1.x") == one_x
    assert detect_peer_schema(two_x) == "2.x"
    assert detect_peer_schema(one_x) == "1.x"
    assert decode_replication_peer(add_metadata(two_x)) == peer2
    assert decode_replication_peer(one_x) == peer1
    assert decode_replication_peer(one_x, schema="1.x") == peer1
    with pytest.raises(ZkPayloadError, match=r"1\.x schema"):
        decode_replication_peer(one_x, schema="2.x")
    with pytest.raises(ValueError, match="namespaces"):
        encode_replication_peer(peer2, schema="1.x")
    assert detect_peer_schema(b"PBUF" + KEY_FIELD) is None


def test_replication_peer_table_cfs_golden_bytes_and_round_trip() -> None:
    # TableCF: 0A len TableName(0A 07 "default" 12 02 "t1") | 12 02 "cf"
    table_name = b"\x0a\x07default\x12\x02t1"
    table_cf = b"\x0a" + bytes([len(table_name)]) + table_name + b"\x12\x02cf"
    expected = b"PBUF" + KEY_FIELD + b"\x2a" + bytes([len(table_cf)]) + table_cf
    peer = ReplicationPeer(CLUSTER_KEY, table_cfs=(TableCF(b"default", b"t1", (b"cf",)),))
    assert encode_replication_peer(peer) == expected
    assert decode_replication_peer(expected) == peer
    assert peer.table_cfs[0].table == "t1"
    full = ReplicationPeer(
        CLUSTER_KEY, "org.example.Endpoint", ((b"k", b"v"),), (("a", "b"),),
        (TableCF(b"ns", b"t", ()),), (b"ns2",), 1 << 40, False,
        (TableCF(b"default", b"x", (b"f1", b"f2")),), (b"ns3",), True, "/remote",
    )
    assert decode_replication_peer(encode_replication_peer(full)) == full


def test_legacy_table_cfs_string() -> None:
    assert parse_legacy_table_cfs("ns1.t1:cf1, cf2; t2 ;;bad:a:b") == (
        TableCF(b"ns1", b"t1", (b"cf1", b"cf2")),
        TableCF(b"default", b"t2", ()),
    )


def test_server_name_text() -> None:
    assert str(ServerName("RS-1.Example.com", 16020, 5)) == "rs-1.example.com,16020,5"
    assert ServerName.parse("rs-1,16020,5") == ServerName("rs-1", 16020, 5)
    with pytest.raises(ValueError):
        ServerName.parse("rs-1:16020")


@pytest.mark.parametrize(
    ("queue_id", "peer", "dead"),
    [
        ("2", "2", ()),
        ("2-rs-1.example.com,16020,1700000000000", "2",
         ("rs-1.example.com,16020,1700000000000",)),
        ("peer1-rs-1,16020,1-rs-2.x,16020,2", "peer1", ("rs-1,16020,1", "rs-2.x,16020,2")),
        ("2-a,1,2-b-c,3,4-d,5,6", "2", ("a,1,2", "b-c,3,4", "d,5,6")),
        ("2-notaserver", "2", ()),
    ],
)
def test_queue_id_parsing(queue_id: str, peer: str, dead: tuple[str, ...]) -> None:
    parsed = parse_queue_id(queue_id)
    assert parsed.peer_id == peer
    assert tuple(str(sn) for sn in parsed.dead_servers) == dead
    assert parsed.recovered == ("-" in queue_id)
