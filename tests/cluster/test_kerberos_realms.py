"""One process logged in to two realms (two real MIT KDCs, no trust), and the merged
``krb5.conf`` it reads.

* The merge keeps each file's realms, the first file's settings, and leaves unmapped a
  host two files map to different realms; a realm two files describe differently is
  refused in one line naming both files.
* ``login`` as a principal of each realm (each its keytab), then a GSSAPI handshake as each
  through the libraries the clients use (pure-sasl's pykerberos, requests-kerberos's
  pyspnego): each realm's KDC issues the service ticket to its own principal.
* A keytab identity beside a ticket-cache one is refused in one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth import kerberos
from hbase_migrate.cluster.auth.kerberos import KerberosError, login
from hbase_migrate.cluster.auth.krb5conf import Krb5ConfConflict, merge, parse
from hbase_migrate.cluster.auth.security import ClusterSecurity
from realstack.kdc import Kdc
from tests.realstack.fixtures import kerberos_environment, skip_without_kdc

A = """[libdefaults]
 default_realm = A.TEST
 rdns = false
[realms]
 A.TEST = {
  kdc = 127.0.0.1:1
  kdc = 127.0.0.1:2
 }
[domain_realm]
 127.0.0.1 = A.TEST
 .a.example = A.TEST
"""
B = """# a comment
[libdefaults]
 default_realm = B.TEST
 forwardable = true
[realms]
 B.TEST = {
  kdc = 127.0.0.1:3
 }
[domain_realm]
 127.0.0.1 = B.TEST
 .b.example = B.TEST
"""


def test_merge_keeps_both_realms_and_unmaps_a_host_mapped_to_two() -> None:
    text, unmapped = merge([("a.conf", A), ("b.conf", B)])
    merged = parse(text)
    assert merged.sections["libdefaults"] == [("default_realm", "A.TEST"), ("rdns", "false"),
                                              ("forwardable", "true")]
    assert merged.sections["realms"] == [
        ("A.TEST", [("kdc", "127.0.0.1:1"), ("kdc", "127.0.0.1:2")]),
        ("B.TEST", [("kdc", "127.0.0.1:3")])]
    assert merged.sections["domain_realm"] == [(".a.example", "A.TEST"),
                                               (".b.example", "B.TEST")]
    assert unmapped == ["127.0.0.1"]
    assert merge([("a.conf", A), ("copy.conf", A)]) == (merge([("a.conf", A)])[0], [])
    other_kdc = A.replace("127.0.0.1:2", "127.0.0.1:9")
    with pytest.raises(Krb5ConfConflict, match=r"^realm A.TEST is described differently by "
                       r"a.conf and other.conf \(two KDCs of one realm name\); give both "):
        merge([("a.conf", A), ("other.conf", other_kdc)])


@pytest.fixture(scope="module")
def realms(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kdc, Kdc]]:
    skip_without_kdc()
    folder = tmp_path_factory.mktemp("realms")
    alpha = Kdc(folder / "alpha", "ALPHA.TEST").start()
    beta = Kdc(folder / "beta", "BETA.TEST").start()
    try:
        for kdc in (alpha, beta):
            kdc.add_principals(kdc.data_dir / "client.keytab", "migrate")
            kdc.add_principals(kdc.data_dir / "service.keytab", "svc/127.0.0.1")
        yield alpha, beta
    finally:
        alpha.stop()
        beta.stop()


def security(kdc: Kdc, keytab: bool = True) -> ClusterSecurity:
    return ClusterSecurity(auth="kerberos", principal=kdc.principal("migrate"),
                           keytab=str(kdc.data_dir / "client.keytab") if keytab else None,
                           krb5_conf=str(kdc.krb5_conf))


def issued(kdc: Kdc, principal: str, service: str) -> int:
    text = (kdc.data_dir / "kdc-events.log").read_text(errors="replace")
    return len(re.findall(rf"TGS_REQ .*ISSUE: .* {re.escape(principal)} for "
                          rf"{re.escape(service)}", text))


def test_one_process_logs_in_to_two_realms_and_each_handshake_uses_its_own(
        realms: tuple[Kdc, Kdc]) -> None:
    import kerberos as pykerberos
    import spnego

    alpha, beta = realms
    with kerberos_environment():
        kerberos.forget()
        login(security(alpha), "alpha", "alpha:9090")
        login(security(beta), "beta", "beta:9090")
        assert os.environ["KRB5CCNAME"].startswith("DIR:")
        merged = Path(os.environ["KRB5_CONFIG"]).read_text()
        assert "ALPHA.TEST = {" in merged and "BETA.TEST = {" in merged
        assert "127.0.0.1 = " not in merged  # mapped to both realms: left unmapped
        caches = {h["principal"]: h["ccache"] for h in kerberos.logins()}
        assert len(set(caches.values())) == 2
        for kdc in (beta, alpha):  # each as the libraries of the clients do it
            principal = kdc.principal("migrate")
            before = issued(kdc, principal, "svc/127.0.0.1@")
            _, context = pykerberos.authGSSClientInit("svc@127.0.0.1", principal=principal)
            assert pykerberos.authGSSClientStep(context, "") == 0  # Thrift and ZooKeeper
            token = spnego.client(username=principal, hostname="127.0.0.1", service="svc",
                                  protocol="kerberos").step()  # WebHDFS, Thrift over HTTP
            assert token
            assert issued(kdc, principal, f"svc/127.0.0.1@{kdc.realm}") >= before + 1
        kerberos.forget()


def test_a_ticket_cache_identity_beside_a_keytab_one_is_refused(
        realms: tuple[Kdc, Kdc]) -> None:
    alpha, beta = realms
    with kerberos_environment():
        kerberos.forget()
        login(security(alpha), "alpha", "alpha:9090")
        with pytest.raises(KerberosError, match=r"^cluster 'beta', principal migrate@BETA.TEST: "
                           r"this process also logs in as migrate@ALPHA.TEST for another "
                           r"cluster, and two Kerberos identities in one process need a "
                           r"keytab each"):
            login(security(beta, keytab=False), "beta", "beta:9090")
        kerberos.forget()
