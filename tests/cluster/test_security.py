"""A cluster's security settings: read from cluster.json, the migration config and an Airflow
connection's extras; checked where read; the keytab warned about when others can read it.
(The settings at work against a real KDC: tests/realstack/test_kerberos_real.py.)"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth import kerberos
from hbase_migrate.cluster.auth import security as security_module
from hbase_migrate.cluster.auth.kerberos import KerberosError, login
from hbase_migrate.cluster.auth.security import ClusterSecurity, service_principal
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.config import load_config, parse_config
from hbase_migrate.errors import ConfigError

SECURED = {"auth": "kerberos", "principal": "migrate@EXAMPLE.COM", "keytab": "migrate.keytab",
           "krb5_conf": "/etc/krb5.conf", "hbase_principal": "hbase/_HOST@EXAMPLE.COM",
           "qop": "auth-conf"}


def write_cluster(folder: Path, security: dict[str, str] | None) -> Path:
    data = {"name": "dc1", "thrift": "hbase-a:9090", "thrift2": "hbase-a:9091",
            **({"security": security} if security is not None else {})}
    path = folder / "cluster.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_cluster_json_carries_security_with_paths_beside_it(tmp_path: Path) -> None:
    found = load_cluster_json(write_cluster(tmp_path, SECURED))
    assert found.kerberos and found.security is not None
    assert found.security.keytab == str(tmp_path / "migrate.keytab")  # relative: beside it
    assert found.security.krb5_conf == "/etc/krb5.conf"
    assert found.security.http_principal == "HTTP/_HOST"  # the default pattern
    assert ClusterEndpoints.from_json(found.to_json(), "again") == found  # a round trip
    plain = load_cluster_json(write_cluster(tmp_path, None))
    assert not plain.kerberos and plain.client_auth == {"security": None, "cluster": "dc1"}


@pytest.mark.parametrize(("security", "message"), [
    ({"auth": "ldap"}, r"auth must be one of \('none', 'kerberos'\), got 'ldap'"),
    ({"auth": "kerberos", "qop": "privacy"}, "qop must be one of"),
    ({"auth": "kerberos", "keytab": "k.keytab"}, "keytab .*k.keytab given without principal"),
    ({"auth": "kerberos", "hbase_principal": "@REALM"}, "hbase_principal must look like"),
    ({"auth": "kerberos", "password": "x"}, "unknown key 'password'"),
    ({"auth": "kerberos", "qop": 1}, "qop: expected a string, got 1"),
    ({"rpc_tls": "yes"}, r"rpc_tls must be one of \('off', 'on'\), got 'yes'"),
    ({"rpc_tls": "on", "rpc_tls_verify_hostname": "no"}, "rpc_tls_verify_hostname must be"),
    ({"rpc_tls": "on", "tls_cert_file": "c.pem"}, "tls_cert_file and tls_key_file go "
                                                  "together"),
])
def test_bad_security_is_refused_naming_the_file_and_key(tmp_path: Path,
                                                          security: dict[str, object],
                                                          message: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"name": "dc1", "thrift": "h:9090", "security": security}),
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: .*{message}"):
        load_cluster_json(path)


def test_service_principals_take_the_endpoint_host_for_host() -> None:
    assert service_principal("hbase/_HOST@EXAMPLE.COM", "rs1.example.com") == (
        "hbase", "rs1.example.com")
    assert service_principal("hbase/gw.example.com@EXAMPLE.COM", "10.0.0.5") == (
        "hbase", "gw.example.com")  # a fixed host is kept
    assert service_principal("zookeeper", "zk1") == ("zookeeper", "zk1")


def migration(folder: Path, source: str, target: str) -> Path:
    path = folder / "m.toml"
    path.write_text(f'[migration]\nname = "m"\nledger = "sqlite:///l.db"\n[source]\n{source}\n'
                    f'[target]\n{target}\n[[tables]]\nsource = "t"\n', encoding="utf-8")
    return path


def test_the_migration_config_sets_or_overrides_security_per_cluster(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.WARNING)
    monkeypatch.setattr(security_module, "_warned", set())
    cluster = write_cluster(tmp_path, SECURED)
    cluster.chmod(0o600)
    path = migration(tmp_path, f'cluster_json = "{cluster}"\nqop = "auth-int"\n'
                               'keytab = "other.keytab"',
                     'thrift = "hbase-b:9090"\nauth = "kerberos"\nprincipal = "m@B.COM"\n'
                     'krb5_conf = "b/krb5.conf"')
    path.chmod(0o600)
    spec = load_config(path)
    source = spec.source.endpoints().security
    assert source is not None and source.principal == "migrate@EXAMPLE.COM"  # cluster.json's
    assert (source.qop, source.keytab) == ("auth-int", str(tmp_path / "other.keytab"))
    target = spec.target.endpoints().security
    assert target == ClusterSecurity(auth="kerberos", principal="m@B.COM",
                                     krb5_conf=str(tmp_path / "b/krb5.conf"))
    assert parse_config(json.loads(json.dumps(spec.to_dict())), path) == spec  # a round trip
    assert "can be read by other users" not in caplog.text  # both are the owner's only
    path.chmod(0o640)  # the config names a keytab: others should not read or change it
    load_config(path)
    assert f"{path} can be read by other users (mode 640; a migration config with [source] " \
           "security settings)" in caplog.text
    assert f"{cluster} can be read" not in caplog.text
    with pytest.raises(ConfigError, match=r"\[target\]: security: qop must be one of"):
        load_config(migration(tmp_path, f'cluster_json = "{cluster}"',
                              'thrift = "h:9090"\nqop = "secret"'))


def test_a_keytab_others_can_read_is_warned_about_and_a_missing_one_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("KRB5_CONFIG", "KRB5_CLIENT_KTNAME", "KRB5CCNAME"):  # restored afterwards
        monkeypatch.setenv(name, "unset")
    monkeypatch.setattr(kerberos, "_process", {})
    monkeypatch.setattr(security_module, "_warned", set())
    conf = tmp_path / "krb5.conf"
    conf.write_text("[libdefaults]\n default_realm = EXAMPLE.COM\n", encoding="utf-8")
    keytab = tmp_path / "open.keytab"
    keytab.write_bytes(b"\x05\x02")
    keytab.chmod(0o644)
    security = ClusterSecurity(auth="kerberos", principal="m@EXAMPLE.COM", keytab=str(keytab),
                               krb5_conf=str(conf))
    caplog.set_level(logging.WARNING)
    with pytest.raises(KerberosError, match=r"cluster 'dc1', hbase-a:9091, principal "
                                            r"m@EXAMPLE.COM: "):
        login(security, "dc1", "hbase-a:9091")  # no KDC for this realm: no ticket either
    assert (f"{keytab} can be read by other users (mode 644; the keytab of cluster 'dc1'); "
            "chmod 600 it") in caplog.text

    monkeypatch.setattr(kerberos, "_process", {})
    missing = ClusterSecurity(auth="kerberos", principal="m@EXAMPLE.COM",
                              keytab=str(tmp_path / "gone.keytab"))
    with pytest.raises(KerberosError, match=r"cluster 'dc1': keytab .*gone.keytab is "
                                            r"unreadable \(No such file or directory\)"):
        login(missing, "dc1", "hbase-a:9091")


def test_a_login_sweeps_the_caches_of_processes_that_are_gone(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])  # a process that has ended
    gone.wait()
    dead = tmp_path / f"{kerberos.CACHE_PREFIX}{gone.pid}-abc"
    mine = tmp_path / f"{kerberos.CACHE_PREFIX}{os.getpid()}-def"
    legacy = tmp_path / f"{kerberos.CACHE_PREFIX}xyz"  # no pid: not ours to judge
    other = tmp_path / "unrelated-123-folder"
    for folder in (dead, mine, legacy, other):
        folder.mkdir(mode=0o700)
        (folder / "ccache").write_bytes(b"tickets")
    kerberos.sweep_caches(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in (mine, legacy, other))
