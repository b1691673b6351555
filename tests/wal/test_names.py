"""WAL file names and directories, with the names HBase writes (format notes, section 5)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hbase_migrate.wal.names import (
    ServerName,
    java_url_encode,
    name_timestamp,
    parse_wal_path,
    server_dir_name,
    wal_file_name,
)

SN = ServerName("host", 16020, 1700000000000)
TS = 1700000123456
DEFAULT = "host%2C16020%2C1700000000000.1700000123456"
META = "host%2C16020%2C1700000000000.meta.1700000123456.meta"
BOUNDED = "host%2C16020%2C1700000000000.host%2C16020%2C1700000000000.regiongroup-0.1700000123456"
NAMESPACE = "host%2C16020%2C1700000000000.host%2C16020%2C1700000000000.ns1.1700000123456"
IDENTITY = "host%2C16020%2C1700000000000.1588230740.1700000123456"

# HBase 3.x AbstractFSWALProvider.getTimestamp, for comparison with the 2.6 rule we follow.
HBASE3_PATTERN = re.compile(r"(.+)\.(\d+)(\.[0-9A-Za-z]+)?", re.ASCII)


def hbase3_timestamp(name: str) -> int | None:
    match = HBASE3_PATTERN.fullmatch(name)
    return int(match[2]) if match else None


def test_server_name_parse_and_str() -> None:
    assert ServerName.parse("host,16020,1700000000000") == SN
    assert str(SN) == "host,16020,1700000000000"
    assert ServerName.parse("Rs-1.Example.COM,16020,5") == ServerName("rs-1.example.com", 16020, 5)
    assert ServerName.parse("10.0.0.7,16020,5").host == "10.0.0.7"
    for bad in ("host,16020", "host:16020,5", ",1,2", "host,x,1", "host,1,2,3"):
        with pytest.raises(ValueError, match="server name"):
            ServerName.parse(bad)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({}, DEFAULT),
        ({"meta": True}, META),
        ({"group": "regiongroup-0"}, BOUNDED),
        ({"group": "ns1"}, NAMESPACE),
        ({"group": "1588230740", "repeat_server": False}, IDENTITY),
    ],
)
def test_wal_file_name_matches_hbase(kwargs: dict[str, object], name: str) -> None:
    assert wal_file_name(SN, TS, **kwargs) == name  # type: ignore[arg-type]


def test_wal_file_name_encodes_like_java() -> None:
    ipv6 = ServerName("::1", 16020, 5)
    assert wal_file_name(ipv6, 7) == "%3A%3A1%2C16020%2C5.7"
    assert java_url_encode("a b*c_d-e.f~g/h") == "a+b*c_d-e.f%7Eg%2Fh"
    assert java_url_encode("é") == "%C3%A9"
    with pytest.raises(ValueError, match="group"):
        wal_file_name(SN, TS, meta=True, group="regiongroup-0")
    with pytest.raises(ValueError, match="negative"):
        wal_file_name(SN, -1)


def test_server_dir_name() -> None:
    assert server_dir_name(SN) == "host,16020,1700000000000"
    assert server_dir_name(SN, splitting=True) == "host,16020,1700000000000-splitting"


@pytest.mark.parametrize(
    ("name", "group", "meta"),
    [(DEFAULT, None, False), (META, None, True), (BOUNDED, "regiongroup-0", False),
     (NAMESPACE, "ns1", False), (IDENTITY, "1588230740", False)],
)  # fmt: skip
def test_parse_reference_names(name: str, group: str | None, meta: bool) -> None:
    info = parse_wal_path(f"/hbase/WALs/host,16020,1700000000000/{name}")
    assert info.name == name
    assert info.kind == ("meta" if meta else "wal")
    assert info.server == SN
    assert info.dir_server == SN
    assert info.timestamp == TS
    assert info.group == group
    assert info.meta is meta
    assert info.state == "live"
    assert info.is_wal
    assert name_timestamp(name) == hbase3_timestamp(name) == TS


@pytest.mark.parametrize(
    ("path", "state", "dir_server"),
    [
        (f"/hbase/WALs/host,16020,1700000000000/{DEFAULT}", "live", SN),
        (f"/hbase/WALs/host,16020,1700000000000-splitting/{DEFAULT}", "splitting", SN),
        (f"/hbase/oldWALs/{DEFAULT}", "archived", None),
        (f"/hbase/oldWALs/host,16020,1700000000000/{DEFAULT}", "archived", SN),
        (f"webhdfs://nn:9870/hbase/oldWALs/{DEFAULT}", "archived", None),
        (f"webhdfs://nn:9870/hbase/oldWALs/{DEFAULT}", "archived", None),  # taken literally
        (f"webhdfs://nn:9870/hbase/WALs/host,16020,1700000000000/{DEFAULT}?x=1", "live", SN),
        (f"oldWALs/{DEFAULT}", "archived", None),
        (f"/hbase/corrupt/{DEFAULT}", None, None),
        (DEFAULT, None, None),
        (f"/hbase/.logs/host,16020,1700000000000/{DEFAULT}", "live", SN),  # 0.94 layout
    ],
)
def test_directory_state(path: str, state: str | None, dir_server: ServerName | None) -> None:
    info = parse_wal_path(path)
    assert info.state == state
    assert info.dir_server == dir_server
    assert info.server == SN
    assert info.timestamp == TS
    assert info.path == path


def test_server_from_directory_when_the_name_has_none() -> None:
    info = parse_wal_path("/hbase/WALs/host,16020,1700000000000/wal.1700000123456")
    assert info.kind == "wal"
    assert info.server == SN  # from the directory
    assert info.timestamp == TS


def test_hosts_with_dashes_dots_and_ipv4() -> None:
    sn = ServerName("rs-01.dc-2.example.com", 16020, 1699999999999)
    info = parse_wal_path(f"/hbase/oldWALs/{wal_file_name(sn, TS, group='regiongroup-1')}")
    assert (info.server, info.group, info.timestamp) == (sn, "regiongroup-1", TS)
    ip = ServerName("10.20.30.40", 16020, 1)
    name = wal_file_name(ip, TS, meta=True)
    assert name == "10.20.30.40%2C16020%2C1.meta.1700000123456.meta"
    info = parse_wal_path(name)
    assert (info.server, info.kind, info.meta, info.timestamp) == (ip, "meta", True, TS)


def test_numeric_namespace_group() -> None:
    info = parse_wal_path(wal_file_name(SN, TS, group="123"))
    assert (info.group, info.timestamp) == ("123", TS)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/hbase/oldWALs/pv2-00000000000000000001.log", "procedure"),
        ("/hbase/oldWALs/host%2C16000%2C1700000000000.1700000123456$masterlocalwal$",
         "master_store"),
        ("/hbase/MasterData/WALs/host,16000,1700000000000/host%2C16000%2C1700000000000.17",
         "master_store"),
        ("/hbase/data/default/t1/0123456789abcdef0123456789abcdef/recovered.edits/"
         "0000000000000016310", "recovered_edits"),
        ("/hbase/data/default/t1/0123/recovered.edits/0000000000000000005-"
         "host%2C16020%2C1.1700000123456-host%2C16020%2C2.temp", "recovered_edits"),
        ("/hbase/data/default/t1/0123/recovered.edits/5.seqid", "unknown"),
        ("/hbase/oldWALs/README", "unknown"),
        ("/hbase/oldWALs/host%2C16020%2C1700000000000", "unknown"),  # no timestamp
        ("/hbase/oldWALs/.hidden", "unknown"),
    ],
)  # fmt: skip
def test_non_wal_and_special_files(path: str, kind: str) -> None:
    info = parse_wal_path(path)
    assert info.kind == kind
    assert info.is_wal == (kind == "recovered_edits")
    if "MasterData" not in path:  # a live master-store WAL has a normal name and timestamp
        assert info.timestamp is None


def test_master_store_keeps_server_but_no_timestamp() -> None:
    # HBase's rule: "1700000123456$masterlocalwal$" is not all digits, nor is the prefix.
    info = parse_wal_path(
        "/hbase/oldWALs/host%2C16000%2C1700000000000.1700000123456$masterlocalwal$"
    )
    assert info.server == ServerName("host", 16000, 1700000000000)
    assert info.timestamp is None
    assert info.state == "archived"


def test_recovered_edits_have_no_timestamp_or_server() -> None:
    info = parse_wal_path("/hbase/data/ns/t/abc/recovered.edits/0000000000000016310")
    assert (info.timestamp, info.server, info.state) == (None, None, "recovered_edits")


@pytest.mark.parametrize(
    ("name", "ts"),
    [
        ("x.1", 1),
        ("x.1.meta", 1),
        ("x.1.syncrep", 1),  # HBase 3.x synchronous-replication suffix
        ("x.meta", None),
        ("x", None),
        ("123", None),  # no dot: recovered-edits style
        ("x.a.b", None),
        ("x.12a", None),
        ("x.1.2", 2),
        ("x.\u0661\u0662", None),  # non-ASCII digits are not digits to Java's parser
        ("x." + "9" * 20, None),  # beyond a Java long
        ("x.1.", 1),  # Java's split drops the trailing empty part (3.x pattern: none)
    ],
)
def test_name_timestamp_rule(name: str, ts: int | None) -> None:
    assert name_timestamp(name) == ts


@given(
    st.builds(
        ServerName,
        st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True),
        st.integers(0, 65535),
        st.integers(0, 2**62),
    ),
    st.integers(0, 2**62),
    st.sampled_from([None, "regiongroup-0", "regiongroup-7", "default", "ns_2"]),
    st.booleans(),
)
def test_built_names_parse_back(server: ServerName, ts: int, group: str | None, meta: bool) -> None:
    if meta:
        group = None
    name = wal_file_name(server, ts, group=group, meta=meta)
    info = parse_wal_path(f"/hbase/WALs/{server_dir_name(server)}/{name}")
    assert (info.server, info.timestamp, info.group, info.meta) == (server, ts, group, meta)
    assert info.kind == ("meta" if meta else "wal")
    assert name_timestamp(name) == hbase3_timestamp(name) == ts
