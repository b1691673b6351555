"""The migration config: the documented example, defaults, paths, round trips and errors."""

from __future__ import annotations

import json
import re
import textwrap
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

import hbase_migrate.config
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import (
    ClusterSpec,
    MigrationSpec,
    ReplaySettings,
    TableSpec,
    load_config,
    parse_config,
)
from hbase_migrate.errors import ConfigError
from tests.support.config_files import MINIMAL, write

FULL = """
[migration]
name = "orders"
ledger = "sqlite:///ledgers/orders.db"
[source]
cluster_json = "state/source/cluster.json"
[target]
name = "dc2"
thrift = "hbase-b:9090"
thrift2 = "hbase-b:9091"
transport = "framed"
protocol = "compact"
webhdfs = "http://nn-b:9870"
hbase_root = "/hbase"
zookeeper = "zk-b:2181"
znode_parent = "/hbase-unsecure"
[[tables]]
source = "default:orders"
families = ["d", "m"]
[[tables]]
source = "sales:items"
target = "items_v2"
[replay]
roll_period = 1800000
margin = "90s"
archive_ttl = "2h"
allow_lossy_deletes = true
batches_in_flight = 4
"""

def test_full_config(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    spec = load_config(path)
    folder = tmp_path / "conf"
    assert spec == MigrationSpec(
        name="orders",
        ledger_url=f"sqlite:///{folder}/ledgers/orders.db",
        source=ClusterSpec("source", cluster_json=folder / "state/source/cluster.json"),
        target=ClusterSpec("target", explicit=ClusterEndpoints(
            name="dc2", thrift="hbase-b:9090", thrift2="hbase-b:9091", transport="framed",
            protocol="compact", webhdfs="http://nn-b:9870", zookeeper="zk-b:2181",
            znode_parent="/hbase-unsecure", hbase_root="/hbase")),
        tables=(TableSpec("orders", "orders", ("d", "m")),
                TableSpec("sales:items", "items_v2", ())),
        replay=ReplaySettings(roll_period=1_800_000, margin=90_000, archive_ttl=7_200_000,
                          allow_lossy_deletes=True, batches_in_flight=4),
        path=path,
    )
    assert spec.table_mapping() == {"orders": "orders", "sales:items": "items_v2"}
    assert spec.source.identity == f"cluster_json:{folder}/state/source/cluster.json"
    assert spec.target.identity == "thrift:hbase-b:9090,hbase-b:9091"


def test_defaults_and_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, MINIMAL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HBASE_MIGRATE_STATE_DIR", raising=False)
    spec = load_config(path)
    assert spec.ledger_url == f"sqlite:///{tmp_path}/state/users/ledger.db"
    assert spec.replay == ReplaySettings(roll_period=3_600_000, margin=300_000,
                                     archive_ttl=600_000, allow_lossy_deletes=False,
                                     batches_in_flight=2)
    assert spec.tables == (TableSpec("users", "users"),)
    # a local HBase root (no webhdfs) is a folder next to the config
    assert spec.source.endpoints() == ClusterEndpoints(
        name="source", thrift="a:9090", hbase_root=str(tmp_path / "conf/data/hbase"))
    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path / "elsewhere"))
    assert load_config(path).ledger_url == f"sqlite:///{tmp_path}/elsewhere/users/ledger.db"


def test_ledger_urls_other_than_relative_sqlite_stay_as_given(tmp_path: Path) -> None:
    for url in ("postgresql://u:p@db:5432/ledger", "sqlite:////abs/ledger.db",
                "sqlite:///:memory:"):
        text = MINIMAL.replace('name = "users"', f'name = "users"\nledger = "{url}"')
        assert load_config(write(tmp_path, text)).ledger_url == url


def test_documented_example_loads(tmp_path: Path) -> None:
    doc = hbase_migrate.config.__doc__ or ""
    example = re.search(r"::\n\n(.*?)\n\n", doc, re.S)
    assert example is not None
    spec = load_config(write(tmp_path, textwrap.dedent(example.group(1))))
    assert (spec.name, spec.tables, spec.replay) == (
        "orders", (TableSpec("orders", "orders", ("d",)),),
        ReplaySettings(3_600_000, 300_000, 600_000, False))


@pytest.mark.parametrize("text", [FULL, MINIMAL])
def test_round_trip_through_json(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    spec = load_config(path)
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec


def test_cluster_json_is_read_when_needed(tmp_path: Path) -> None:
    spec = load_config(write(tmp_path, FULL))  # the cluster.json does not exist yet: fine
    with pytest.raises(ConfigError, match=r"state/source/cluster.json: cannot read"):
        spec.source.endpoints()
    cluster_json = tmp_path / "conf/state/source/cluster.json"
    cluster_json.parent.mkdir(parents=True)
    cluster_json.write_text(json.dumps({"name": "src", "thrift": "127.0.0.1:9090", "pid": 1}))
    assert spec.source.endpoints() == ClusterEndpoints(name="src", thrift="127.0.0.1:9090")


def edit(old: str, new: str, base: str = MINIMAL) -> str:
    assert old in base
    return base.replace(old, new, 1)


@pytest.mark.parametrize(("text", "message"), [
    (edit('[[tables]]\nsource = "users"\n', ""),
     r"\[\[tables\]\]: expected at least one \[\[tables\]\] entry"),
    (MINIMAL + '[[tables]]\nsource = "other"\ntarget = "users"\n',
     r"duplicate target table users"),
    (MINIMAL + '[[tables]]\nsource = "users"\ntarget = "u2"\n', r"duplicate source table users"),
    (edit('source = "users"', 'source = "users"\nfamlies = ["d"]'),
     r"\[tables #1\] unknown key 'famlies'; expected one of source, target, families"),
    (MINIMAL + "[replay]\nmargn = \"5m\"\n", r"\[replay\] unknown key 'margn'"),
    (MINIMAL + "[extra]\n", r"unknown key 'extra'; expected one of migration"),
    (MINIMAL + "[replay]\nmargin = \"5 minutes\"\n",
     r"\[replay\] margin: cannot read '5 minutes' as a duration"),
    (MINIMAL + "[replay]\narchive_ttl = -5\n",
     r"\[replay\] archive_ttl: expected a non-negative number of milliseconds, got -5"),
    (MINIMAL + "[replay]\nroll_period = 1.5\n", r"\[replay\] roll_period: expected a duration"),
    (MINIMAL + "[replay]\nallow_lossy_deletes = \"yes\"\n",
     r"allow_lossy_deletes: expected true or false, got 'yes'"),
    (MINIMAL + "[replay]\nbatches_in_flight = -1\n",
     r"batches_in_flight: expected an integer from 0 to 64, got -1"),
    (edit('thrift = "a:9090"', 'thrift = "a:9090"\ncluster_json = "c.json"'),
     r"\[source\]: give either cluster_json or explicit endpoints, not both \(found "
     r"cluster_json and hbase_root, thrift\)"),
    (edit('thrift = "b:9090"', 'znode_parent = "/hbase"'),
     r"\[target\]: expected cluster_json or at least thrift .*or zookeeper"),
    (edit('thrift = "b:9090"', 'zookeeper = "zk:2181"\nclient = "gateway"'),
     r"\[target\]: .*client must be one of \('native', 'thrift'\), got 'gateway'"),
    (edit('thrift = "b:9090"', 'thrift = "b:9090"\nclient = "native"'),
     r"\[target\]: .*client \"native\" finds the cluster through ZooKeeper"),
    (edit('thrift = "b:9090"', 'thrift = "b"'), r"\[target\]: .*thrift: expected host:port"),
    (edit('thrift = "b:9090"', 'thrift = 9090'), r"\[target\] thrift: expected a string"),
    (edit('thrift = "b:9090"', 'thrift = "b:9090"\nwebhdfs = "nn:9870"'),
     r"\[target\]: .*webhdfs: expected http://host:port \(the NameNode's HTTP address"),
    (edit('name = "users"\n', ""), r"\[migration\] name: missing; expected a string"),
    (edit('name = "users"', 'name = "a/b"'), r"\[migration\] name: expected a non-empty name"),
    (edit('[migration]\nname = "users"\n', ""),
     r"\[migration\]: expected a table \(section\), got missing"),
    (edit('source = "users"', 'source = "bad name!"'), r"\[tables #1\] source: illegal table"),
    (edit('source = "users"', 'source = "hbase:meta"'), r"system tables are not migrated"),
    (edit('source = "users"', 'source = "users"\nfamilies = "d"'),
     r"\[tables #1\] families: expected a list of distinct non-empty family names"),
    (edit('source = "users"', 'source = "users"\nfamilies = ["d", "d"]'),
     r"families: expected a list of distinct"),
    ("[migration\n", r"not valid TOML"),
])
def test_errors_name_file_key_and_expectation(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope.toml: cannot read the migration config"):
        load_config(tmp_path / "nope.toml")


def test_a_file_that_is_not_utf8_names_the_byte_and_its_offset(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    text = textwrap.dedent(MINIMAL).encode()
    offset = text.index(b"users")  # a Latin-1 name: one byte 0xe9 where UTF-8 needs two
    path.write_bytes(text[:offset] + b"caf\xe9" + text[offset + len(b"users"):])
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: not UTF-8 text: byte 0xe9 at offset {offset + 3} "
                               "(TOML files are UTF-8)")


@pytest.mark.parametrize(("key", "value"), [("target", '""'), ("target", '"  "'),
                                            ("source", '""')])
def test_an_empty_table_name_is_refused_not_taken_as_the_default(
        tmp_path: Path, key: str, value: str) -> None:
    text = edit('source = "users"', 'source = "users"\ntarget = "t2"')
    text = re.sub(rf'^{key} = "[^"]*"', f"{key} = {value}", text, flags=re.M)
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}: [tables #1] {key}: expected a table name (leave the "
                               f"key out to mean the source's), got {value[1:-1]!r}")


def test_a_spec_from_a_dict_equals_the_one_from_the_same_toml(tmp_path: Path) -> None:
    text = ('[migration]\nname = "orders"\nledger = "sqlite:///l.db"\n'
            '[source]\nthrift = "src:9090"\nthrift2 = "src:9091"\nzookeeper = "zk:2181"\n'
            '[target]\nthrift = "dst:9090"\n'
            '[[tables]]\nsource = "orders"\ntarget = "ns:orders"\nfamilies = ["d"]\n'
            '[replay]\nroll_period = "10m"\nmargin = "1m"\n')
    path = tmp_path / "m.toml"
    path.write_text(text, encoding="utf-8")
    from_file = load_config(path)
    from_dict = MigrationSpec.from_dict(tomllib.loads(text), base_dir=tmp_path)
    assert replace(from_file, path=None) == from_dict
    assert MigrationSpec.from_dict(from_file.to_dict()) == from_dict  # a round trip


def test_the_ledger_url_can_come_from_the_environment(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    tree = {"migration": {"name": "m", "ledger_env": "M_LEDGER"},
            "source": {"thrift": "a:1"}, "target": {"thrift": "b:1"},
            "tables": [{"source": "t"}]}
    with pytest.raises(ConfigError, match=r"environment variable M_LEDGER .* is not set"):
        MigrationSpec.from_dict(tree)
    monkeypatch.setenv("M_LEDGER", "postgresql://u:secret@db/ledger")
    assert MigrationSpec.from_dict(tree).ledger_url == "postgresql://u:secret@db/ledger"
    both = {**tree, "migration": {**tree["migration"], "ledger": "sqlite:///x.db"}}
    with pytest.raises(ConfigError, match="either ledger or ledger_env"):
        MigrationSpec.from_dict(both)


def test_gateway_settings_reach_both_clusters_and_round_trip(tmp_path: Path) -> None:
    from hbase_migrate.cluster.sizing import ClientSettings
    from hbase_migrate.hbase.connect import open_client, open_thrift1
    from hbase_migrate.rpc.cluster import NativeCluster
    from hbase_migrate.thrift.thrift2 import Thrift2Client

    path = write(tmp_path, MINIMAL.replace('[target]\nthrift = "b:9090"',
                                           '[target]\nthrift = "b:9090"\nthrift2 = "b:9091"')
                 + '[gateway]\nmax_result_bytes = "512KiB"\nmax_put_bytes = "3MB"\n'
                   'call_timeout = "2s"\ntimeout_retries = 2\nregion_wait = "90s"\n'
                   'multis_per_server = 3\n')
    spec = load_config(path)
    settings = ClientSettings(512 * 1024, 3_000_000, 2.0, 2, region_wait=90.0,
                               multis_per_server=3)
    assert spec.gateway == spec.source.gateway == spec.target.gateway == settings
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec
    client = open_client(spec.target)  # what every range task opens (no connection yet)
    assert isinstance(client, Thrift2Client)
    assert (client.max_result_bytes, client.max_put_bytes, client.timeout,
            client.timeout_retries, client.region_wait) == (512 * 1024, 3_000_000, 2.0, 2, 90)
    assert open_thrift1(spec.target, "regions").region_wait == 90  # the Thrift1 listing's too
    with NativeCluster("127.0.0.1:1", settings=spec.target.gateway) as native:
        assert native.data.multis_per_server == 3  # over HBase's own RPC
    defaults = load_config(write(tmp_path, MINIMAL, "d.toml")).target.gateway
    assert defaults == ClientSettings() and defaults.max_result_bytes == 4 * 1024 * 1024
    assert defaults.region_wait == 60 and defaults.multis_per_server == 2


def test_a_cluster_reached_natively_names_only_zookeeper(tmp_path: Path) -> None:
    """``client``: native when a cluster names ZooKeeper and no Thrift2 gateway, the
    gateways' when it names one, as given otherwise; the steps' client follows it and the
    ledger tells such a cluster by its ZooKeeper."""
    from hbase_migrate.hbase.connect import open_client
    from hbase_migrate.rpc.cluster import NativeCluster
    from hbase_migrate.thrift.thrift2 import Thrift2Client

    text = MINIMAL.replace('[target]\nthrift = "b:9090"',
                           '[target]\nzookeeper = "zk:2181"\nznode_parent = "/hb"')
    path = write(tmp_path, text + '[gateway]\nmax_put_bytes = "3MB"\n')
    spec = load_config(path)
    found = spec.target.endpoints()
    assert (found.client, found.thrift, found.thrift2) == ("native", "", None)
    assert spec.target.identity == "zookeeper:zk:2181/hb"
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec
    with open_client(spec.target) as client:  # no connection is made before a call
        assert isinstance(client, NativeCluster)
        assert (client.endpoint, client.max_put_bytes) == ("ZooKeeper zk:2181/hb", 3_000_000)
        assert client.data.max_multi_bytes == 3_000_000
    assert spec.source.endpoints().client == "thrift"  # names a Thrift1 gateway, no ZooKeeper
    both = text.replace('zookeeper = "zk:2181"', 'zookeeper = "zk:2181"\nthrift2 = "b:9091"')
    assert load_config(write(tmp_path, both, "b.toml")).target.endpoints().client == "thrift"
    told = both.replace('thrift2 = "b:9091"', 'thrift2 = "b:9091"\nclient = "native"')
    spec = load_config(write(tmp_path, told, "t.toml"))
    assert spec.target.endpoints().native
    with open_client(spec.target) as client:
        assert isinstance(client, NativeCluster)
    gateways = told.replace('client = "native"', 'client = "thrift"')
    with open_client(load_config(write(tmp_path, gateways, "g.toml")).target) as client:
        assert isinstance(client, Thrift2Client)


def test_a_sections_client_over_its_cluster_json(tmp_path: Path) -> None:
    """``client`` beside ``cluster_json`` chooses the transport of the cluster the file
    describes (the file's gateways stay, unused when native)."""
    cluster = tmp_path / "c.json"
    cluster.write_text(json.dumps({"name": "c", "thrift": "h:9090", "thrift2": "h:9091",
                                   "zookeeper": "zk:2181"}), encoding="utf-8")
    text = MINIMAL.replace('[target]\nthrift = "b:9090"',
                           f'[target]\ncluster_json = "{cluster}"\nclient = "native"')
    path = write(tmp_path, text)
    spec = load_config(path)
    assert spec.target.endpoints().native and spec.target.endpoints().thrift2 == "h:9091"
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec
    plain = load_config(write(tmp_path, text.replace('client = "native"\n', ""), "p.toml"))
    assert plain.target.endpoints().client == "thrift"
    with pytest.raises(ConfigError, match=r"\[target\] client: expected one of native, "
                                          r"thrift, got 'gateway'"):
        load_config(write(tmp_path, text.replace('"native"', '"gateway"'), "w.toml"))
    cluster.write_text(json.dumps({"name": "c", "thrift": "h:9090"}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[target\] with .*c.json: cluster 'c': client "
                                          r"\"native\" finds the cluster through ZooKeeper"):
        spec.target.endpoints()


@pytest.mark.parametrize(("section", "message"), [
    ('max_result_bytes = "4 lots"', r"\[gateway\] max_result_bytes: expected a size"),
    ("max_put_bytes = 100", r"\[gateway\] max_put_bytes: expected a size .* got 100"),
    ('call_timeout = "50ms"', r"\[gateway\] call_timeout: "),
    ("timeout_retries = -1", r"\[gateway\] timeout_retries: expected an integer from 0"),
    ("multis_per_server = 0", r"\[gateway\] multis_per_server: expected an integer from 1"),
    ("max_rows = 5", r"\[gateway\] unknown key 'max_rows'"),
])
def test_gateway_errors(tmp_path: Path, section: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, MINIMAL + f"[gateway]\n{section}\n"))


def test_client_native_beside_a_cluster_json_without_zookeeper_says_what_to_do(
        tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace('thrift = "b:9090"',
                                           'cluster_json = "dst.json"\nclient = "native"'))
    (path.parent / "dst.json").write_text(json.dumps(
        {"name": "target", "thrift": "127.0.0.1:9090", "thrift2": "127.0.0.1:9091"}))
    with pytest.raises(ConfigError) as info:
        load_config(path).target.endpoints()
    assert str(info.value) == (
        f"[target] with {path.parent / 'dst.json'}: cluster 'target': client \"native\" finds "
        "the cluster through ZooKeeper: zookeeper = \"host:2181\" is missing; that cluster "
        "registers in no ZooKeeper: start it with --zookeeper HOST:PORT, or leave client out "
        "to use its Thrift gateways")


def test_validate_from_is_read_checked_and_round_trips(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, MINIMAL)).validate.read_from == "live"  # the default
    path = write(tmp_path, MINIMAL + '[validate]\nfrom = "snapshot"\n')
    spec = load_config(path)
    assert spec.validate.read_from == "snapshot"
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec
    with pytest.raises(ConfigError, match=r"\[validate\] from.*'live' or 'snapshot'"):
        load_config(write(tmp_path, MINIMAL + '[validate]\nfrom = "files"\n'))
