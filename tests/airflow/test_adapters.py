"""The thin adapters on their own: the ``hbase`` connection type (registered with Airflow,
read into the core's endpoints, refused clearly when wrong), the Spark master of a ``spark``
connection, a run's Params turned into a migration spec, and the trigger's serialization."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.airflow_stack import cluster_connections, hbase_connection
from hbase_migrate.cluster.endpoints import CLIENTS, ClusterEndpoints
from hbase_migrate.config import CdcSettings, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase.connect import connect
from minihbase.zookeeper import ZooKeeperServer
from tests.airflow_home import configure
from tests.support.minicluster import EmbeddedClusters

configure()
pytestmark = pytest.mark.integration
ENDPOINTS = ClusterEndpoints(name="hbase_a", thrift="hbase-a:9090", thrift2="hbase-a:9091",
                             transport="framed", protocol="compact",
                             webhdfs="http://nn-a:9870", zookeeper="zk1:2181,zk2:2181",
                             znode_parent="/hbase-a", hbase_root="/apps/hbase")


def connection(monkeypatch: pytest.MonkeyPatch, conn_id: str, body: dict[str, Any]) -> None:
    body = {k: v for k, v in body.items() if k != "connection_id"}
    monkeypatch.setenv(f"AIRFLOW_CONN_{conn_id.upper()}", json.dumps(body))


def test_an_hbase_connection_gives_the_clusters_endpoints(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate_airflow.hooks import HBaseHook

    connection(monkeypatch, "hbase_a", hbase_connection("hbase_a", ENDPOINTS))
    assert HBaseHook("hbase_a").endpoints() == ENDPOINTS
    # the UI's form may store its fields with Airflow's extra__<type>__ prefix
    prefixed = {"conn_type": "hbase", "host": "hbase-a", "port": 9090,
                "extra": json.dumps({"extra__hbase__thrift2": "hbase-a:9091",
                                     "extra__hbase__zookeeper": ""})}
    connection(monkeypatch, "hbase_b", prefixed)
    assert HBaseHook("hbase_b").endpoints() == ClusterEndpoints(
        name="hbase_b", thrift="hbase-a:9090", thrift2="hbase-a:9091")


def test_an_hbase_connection_of_a_cluster_reached_natively(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No gateway: no host and port, the extras ``zookeeper`` (and ``client``)."""
    from hbase_migrate_airflow.hooks import HBaseHook

    native = ClusterEndpoints(name="hbase_n", zookeeper="zk1:2181", znode_parent="/hb")
    body = hbase_connection("hbase_n", native)
    assert "host" not in body and json.loads(body["extra"])["client"] == "native"
    connection(monkeypatch, "hbase_n", body)
    assert HBaseHook("hbase_n").endpoints() == native
    told = {"conn_type": "hbase", "host": "gw", "port": 9090,
            "extra": json.dumps({"thrift2": "gw:9091", "zookeeper": "zk1:2181",
                                 "client": "native"})}
    connection(monkeypatch, "hbase_t", told)
    assert HBaseHook("hbase_t").endpoints().native
    connection(monkeypatch, "hbase_x", {**told, "extra": json.dumps({"client": "native"})})
    with pytest.raises(ConfigError, match=r"connection 'hbase_x': .*zookeeper"):
        HBaseHook("hbase_x").endpoints()


def test_an_hbase_connection_given_by_an_hbase_rpc_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    """No gateway, no ZooKeeper: the extra ``uri`` names the servers of the RPC registry."""
    from hbase_migrate_airflow.hooks import HBaseHook

    by_uri = ClusterEndpoints(name="hbase_u", uri="hbase+rpc://rs1:16020,rs2:16020",
                              webhdfs="http://nn:9870")
    body = hbase_connection("hbase_u", by_uri)
    assert "host" not in body and json.loads(body["extra"])["uri"] == by_uri.uri
    connection(monkeypatch, "hbase_u", body)
    found = HBaseHook("hbase_u").endpoints()
    assert found == by_uri and found.native and found.zookeeper is None
    assert found.bootstrap == (("rs1", 16020), ("rs2", 16020))
    bad = {"conn_type": "hbase", "extra": json.dumps({"uri": "hbase+rpc://rs1"})}
    connection(monkeypatch, "hbase_v", bad)
    with pytest.raises(ConfigError, match=r"connection 'hbase_v': .*'hbase\+rpc://rs1'.*port"):
        HBaseHook("hbase_v").endpoints()


def test_an_hbase_connection_carries_the_clusters_security(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate.cluster.auth.security import ClusterSecurity
    from hbase_migrate_airflow.hooks import HBaseHook

    secured = replace(ENDPOINTS, security=ClusterSecurity(
        auth="kerberos", principal="migrate@EXAMPLE.COM", keytab="/etc/migrate.keytab",
        hbase_principal="hbase/_HOST@EXAMPLE.COM", qop="auth-conf"))
    connection(monkeypatch, "hbase_k", hbase_connection("hbase_k", secured))
    assert HBaseHook("hbase_k").endpoints() == replace(secured, name="hbase_k")
    tls = replace(ENDPOINTS, client="native", security=ClusterSecurity(
        rpc_tls="on", tls_ca_file="/etc/ssl/hbase-ca.pem", tls_cert_file="/etc/ssl/m.pem",
        tls_key_file="/etc/ssl/m.key", rpc_tls_verify_hostname="false"))
    connection(monkeypatch, "hbase_s", hbase_connection("hbase_s", tls))
    assert HBaseHook("hbase_s").endpoints() == replace(tls, name="hbase_s")


@pytest.mark.parametrize(("body", "message"), [
    ({"conn_type": "hbase", "host": "h"}, "host and port of the Thrift1 gateway"),
    ({"conn_type": "hbase", "host": "h", "port": 9090, "extra": '{"thrift3": "x"}'},
     "unknown extra key(s) thrift3"),
    ({"conn_type": "hbase", "host": "h", "port": 9090, "extra": '{"thrift2": "nope"}'},
     "thrift2: expected host:port, got 'nope'"),
])
def test_a_wrong_hbase_connection_is_refused_naming_it(
        monkeypatch: pytest.MonkeyPatch, body: dict[str, Any], message: str) -> None:
    from hbase_migrate_airflow.hooks import HBaseHook

    connection(monkeypatch, "bad_hbase", body)
    with pytest.raises(ConfigError, match="connection 'bad_hbase'") as raised:
        HBaseHook("bad_hbase").endpoints()
    assert message in str(raised.value)


def test_the_hbase_connection_type_is_registered_with_its_form() -> None:
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()  # type: ignore[no-untyped-call]
    assert "hbase-migrate" in manager.providers
    widgets = {k.removeprefix("extra__hbase__") for k in manager.connection_form_widgets
               if k.startswith("extra__hbase__")}
    from hbase_migrate_airflow.hooks.hbase import EXTRA_KEYS

    assert widgets == set(EXTRA_KEYS)
    # the client is chosen from a drop-down of the transports the core knows
    client = manager.connection_form_widgets["extra__hbase__client"].field
    assert client["schema"]["enum"] == list(CLIENTS)
    assert set(client["schema"]["values_display"]) == set(CLIENTS)


@pytest.mark.parametrize(("host", "port", "master"), [
    ("local[2]", None, "local[2]"), ("spark://127.0.0.1", 7077, "spark://127.0.0.1:7077"),
    ("yarn", None, "yarn")])
def test_the_spark_master_comes_from_the_spark_connection(
        monkeypatch: pytest.MonkeyPatch, host: str, port: int | None, master: str) -> None:
    from hbase_migrate_airflow.hooks import spark_master

    connection(monkeypatch, "spark_x", {"conn_type": "spark", "host": host, "port": port})
    assert spark_master("spark_x") == master


@pytest.mark.parametrize(("uri", "master"), [
    ("spark://127.0.0.1:7077", "spark://127.0.0.1:7077"), ("spark://spark-m", "spark://spark-m"),
    ("spark://yarn", "yarn"), ("spark://local%5B2%5D", "local[2]"),
    ("spark://k8s%3A%2F%2Fhttps%3A%2F%2Fapi.k8s:6443", "k8s://https://api.k8s:6443")])
def test_a_spark_connection_made_from_a_uri_gives_its_master(
        monkeypatch: pytest.MonkeyPatch, uri: str, master: str) -> None:
    from hbase_migrate_airflow.hooks import spark_master

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_URI", uri)  # Airflow's URI form of a connection
    assert spark_master("spark_uri") == master


def test_the_stock_spark_default_never_overrides_a_migrations_own_master(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate_airflow.hooks.spark import run_master

    connection(monkeypatch, "spark_default", {"conn_type": "spark", "host": "local[2]"})
    connection(monkeypatch, "spark_big", {"conn_type": "spark", "host": "spark://m",
                                          "port": 7077})
    spec = MigrationSpec.from_dict({
        "migration": {"name": "m", "ledger": "sqlite:///l.db"}, "source": {"thrift": "a:1"},
        "target": {"thrift": "b:1"}, "tables": [{"source": "t"}],
        "spark": {"master": "spark://own:7077"}})
    auto = replace(spec, engine=replace(spec.engine, spark_master="auto"))
    assert run_master("spark_default", spec) == (None, (
        "Spark master: spark://own:7077, the migration's [spark] master (the stock "
        "connection spark_default, local[2], overrides only a migration's auto)"))
    assert run_master("spark_default", auto) == ("local[2]", (
        "Spark master: local[2], from connection 'spark_default' (over the migration's "
        "[spark] master auto)"))
    assert run_master("spark_big", spec)[0] == "spark://m:7077"  # named: the run's choice
    assert run_master(None, spec) == (None, "Spark master: spark://own:7077, the "
                                            "migration's [spark] master (no connection)")
    bigtable = MigrationSpec.from_dict({
        "migration": {"name": "m", "ledger": "sqlite:///l.db"}, "source": {"thrift": "a:1"},
        "target": {"kind": "bigtable", "project": "p1", "instance": "i1",
                   "emulator_host": "localhost:8086"}, "tables": [{"source": "t"}]})
    assert run_master("spark_default", bigtable) == (None, (
        "Spark master: none, the stock connection spark_default is not used: a Bigtable "
        "target is written in-process, not on Spark"))
    assert run_master("spark_big", bigtable)[0] == "spark://m:7077"  # the step refuses it



def test_a_spark_connections_extra_conf_goes_over_the_migrations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate_airflow.hooks.spark import with_connection_conf

    connection(monkeypatch, "spark_big", {"conn_type": "spark", "host": "yarn", "extra": {
        "conf": {"spark.executor.memory": "4g", "spark.yarn.queue": "etl"}}})
    connection(monkeypatch, "spark_bad", {"conn_type": "spark", "host": "yarn",
                                          "extra": {"conf": {"memory": "4g"}}})
    spec = MigrationSpec.from_dict({
        "migration": {"name": "m", "ledger": "sqlite:///l.db"}, "source": {"thrift": "a:1"},
        "target": {"thrift": "b:1"}, "tables": [{"source": "t"}],
        "spark": {"conf": {"spark.executor.memory": "1g", "spark.executor.cores": 2}}})
    assert dict(with_connection_conf("spark_big", spec).engine.conf) == {
        "spark.executor.memory": "4g", "spark.yarn.queue": "etl", "spark.executor.cores": "2"}
    assert with_connection_conf(None, spec) is spec
    with pytest.raises(ConfigError, match=r"connection 'spark_bad': extra conf: expected an "
                                          r"object of Spark settings"):
        with_connection_conf("spark_bad", spec)


def test_params_name_the_migration_by_connection_ids(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    from hbase_migrate_airflow.migration import migration_spec
    from hbase_migrate_airflow.triggers import NewWalFilesTrigger
    from hbase_migrate_airflow.triggers.wal import listing_spec

    target = ClusterEndpoints(name="hbase_b", thrift="hbase-b:9090", thrift2="hbase-b:9091")
    connection(monkeypatch, "hbase_a", hbase_connection("hbase_a", ENDPOINTS))
    connection(monkeypatch, "hbase_b", hbase_connection("hbase_b", target))
    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path))
    spec = migration_spec({"migration": "orders", "source_conn_id": "hbase_a",
                           "target_conn_id": "hbase_b", "tables": ["orders", "ns:a=ns:b"],
                           "roll_period": "30m", "margin": "2m", "ledger": None,
                           "config": None})
    assert spec.source.endpoints() == ENDPOINTS and spec.target.endpoints() == target
    assert spec.table_mapping() == {"orders": "orders", "ns:a": "ns:b"}
    assert (spec.replay.roll_period, spec.replay.margin) == (1_800_000, 120_000)
    assert spec.ledger_url == f"sqlite:///{tmp_path / 'orders' / 'ledger.db'}"
    # the trigger carries what listing WAL files takes as JSON and rebuilds it in the
    # triggerer: the spec, without a [cdc] section whose producer may hold a password
    secret = "s3cret-sasl-password"
    with_cdc = replace(spec, cdc=CdcSettings("kafka:9093", producer=(
        ("sasl.mechanisms", "SCRAM-SHA-512"), ("sasl.password", secret))))
    path, kwargs = NewWalFilesTrigger(listing_spec(with_cdc), 1e9, 2.0).serialize()
    assert path == "hbase_migrate_airflow.triggers.wal.NewWalFilesTrigger"
    carried = json.dumps(kwargs)
    assert secret in json.dumps(with_cdc.to_dict()) and secret not in carried
    again = MigrationSpec.from_dict(json.loads(carried)["spec"])
    assert again.to_dict() == spec.to_dict()


def test_a_bigtable_connection_names_a_bigtable_target(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    from airflow.providers_manager import ProvidersManager

    from hbase_migrate_airflow.hooks.bigtable import EXTRA_KEYS
    from hbase_migrate_airflow.migration import migration_spec

    manager = ProvidersManager()  # type: ignore[no-untyped-call]
    assert {k.removeprefix("extra__bigtable__") for k in manager.connection_form_widgets
            if k.startswith("extra__bigtable__")} == set(EXTRA_KEYS)
    connection(monkeypatch, "hbase_a", hbase_connection("hbase_a", ENDPOINTS))
    connection(monkeypatch, "bt", {"conn_type": "bigtable", "extra": json.dumps(
        {"extra__bigtable__project": "proj-1", "instance": "copy-1",
         "emulator_host": "127.0.0.1:8086", "app_profile": "",
         "accept": "tags orders\ncell_acls orders\n"})})
    monkeypatch.setenv("HBASE_MIGRATE_STATE_DIR", str(tmp_path))
    params = {"migration": "orders", "source_conn_id": "hbase_a", "target_conn_id": "bt",
              "tables": ["orders"], "ledger": None, "config": None}
    spec = migration_spec(params)
    assert spec.source.endpoints() == ENDPOINTS and spec.target.bigtable is not None
    assert spec.target.bigtable.to_dict() == {
        "kind": "bigtable", "project": "proj-1", "instance": "copy-1",
        "emulator_host": "127.0.0.1:8086", "accept": ["tags orders", "cell_acls orders"]}
    assert MigrationSpec.from_dict(spec.to_dict()).target == spec.target  # as XCom carries it
    connection(monkeypatch, "bt", {"conn_type": "bigtable", "extra": json.dumps(
        {"project": "proj-1", "zone": "x"})})
    with pytest.raises(ConfigError, match=r"connection 'bt': unknown extra key\(s\) zone"):
        migration_spec(params)
    connection(monkeypatch, "bt", {"conn_type": "bigtable", "extra": json.dumps(
        {"project": "proj-1"})})
    with pytest.raises(ConfigError, match=r"\[target\] instance: missing"):
        migration_spec(params)


def test_the_kafka_connection_type_is_the_kafka_providers() -> None:
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    runtime = ProvidersManagerTaskRuntime()  # type: ignore[no-untyped-call]
    hook = runtime.hooks["kafka"]
    assert hook is not None and hook.package_name == "apache-airflow-providers-apache-kafka"


def test_a_kafka_connection_gives_the_cdc_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from hbase_migrate.config import CdcSettings
    from hbase_migrate_airflow.hooks import cdc_settings

    connection(monkeypatch, "kafka_x", {"conn_type": "kafka", "extra": json.dumps(
        {"bootstrap.servers": "k1:9092,k2:9092", "client.id": "cdc", "acks": "1"})})
    base = CdcSettings("old:9092", topic="t.{table}", envelope="debezium")
    got = cdc_settings("kafka_x", base, topic="cdc-all", row_image=True)
    # acks (and the others the stream's guarantees rest on) stay the stream's own
    assert got == CdcSettings("k1:9092,k2:9092", topic="cdc-all", row_image=True,
                              producer=(("client.id", "cdc"),), envelope="debezium")
    # the CDC DAG's envelope Param over the migration's
    assert cdc_settings("kafka_x", None, envelope="debezium") == CdcSettings(
        "k1:9092,k2:9092", producer=(("client.id", "cdc"),), envelope="debezium")


@pytest.mark.parametrize(("body", "message"), [
    ({"conn_type": "kafka", "extra": '{"client.id": "x"}'}, "no brokers; give bootstrap"),
    ({"conn_type": "hbase", "host": "h", "port": 1}, "needs a 'kafka' connection"),
])
def test_a_wrong_kafka_connection_is_refused_naming_it(
        monkeypatch: pytest.MonkeyPatch, body: dict[str, Any], message: str) -> None:
    from hbase_migrate_airflow.hooks import cdc_settings

    connection(monkeypatch, "bad_kafka", body)
    with pytest.raises(ConfigError, match="connection 'bad_kafka'") as raised:
        cdc_settings("bad_kafka", None)
    assert message in str(raised.value)


def test_the_embedded_clusters_connections_reach_them_natively(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, zookeeper: ZooKeeperServer,
        make_embedded: EmbeddedClusters) -> None:
    """``airflow up`` over the embedded stack's folder: the ``hbase`` connection of a cluster
    registered in ZooKeeper says client native and reaches it over HBase's RPC; one without
    ZooKeeper is read through its Thrift2 gateway."""
    from hbase_migrate_airflow.hooks import HBaseHook

    on_zk = make_embedded("source", over="native")
    plain = make_embedded("plain")
    on_zk.write_cluster_json()
    plain.write_cluster_json()
    bodies = {b["connection_id"]: b for b in cluster_connections(tmp_path)}
    assert json.loads(bodies["hbase_source"]["extra"])["client"] == "native"
    assert json.loads(bodies["hbase_plain"]["extra"])["client"] == "thrift"
    for conn_id, body in bodies.items():
        connection(monkeypatch, conn_id, body)
    found = HBaseHook("hbase_source").endpoints()
    assert found.native and found.zookeeper == zookeeper.address
    assert not HBaseHook("hbase_plain").endpoints().native
    with connect(found) as client:
        client.create_namespace("over_rpc")
    assert "over_rpc" in on_zk.cluster.namespaces()  # type: ignore[union-attr]
