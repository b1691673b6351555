"""What a secured realstack Kafka broker needs beside its properties: Kerberos principals
from a KDC, a certificate authority of its own and the broker's PEM key store, and a SCRAM
user.

* Kerberos: the broker's service principal ``kafka/127.0.0.1`` (the host part is the address
  clients connect to: the realm's ``krb5.conf`` turns off DNS canonicalisation) and the
  client principal :data:`CLIENT_PRINCIPAL`, each exported to a keytab in the broker's
  folder.
* TLS: ``openssl`` makes a CA (``tls/ca.pem``) and a key and certificate for ``127.0.0.1``
  signed by it (``tls/broker.pem``: the unencrypted PKCS#8 key and the certificate, Kafka's
  ``ssl.keystore.type=PEM``), once per folder.
* SCRAM: the user :data:`SCRAM_USER` with a random password (``scram.password``, mode 0600),
  set with the Admin API over the broker's PLAINTEXT listener once it serves: the password
  never becomes a process argument.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path

from realstack.kdc import Kdc
from realstack.maven import RealStackError

HOST = "127.0.0.1"
SERVICE = "kafka"
CLIENT_PRINCIPAL = "cdc-client"
SCRAM_USER = "cdc-scram"
SCRAM_MECHANISM = "SCRAM-SHA-512"
SCRAM_ITERATIONS = 4096


def kerberos_principals(kdc: Kdc, folder: Path) -> tuple[Path, Path]:
    """The broker's and the client's principals in ``kdc``, exported to ``kafka.keytab`` and
    ``client.keytab`` in ``folder`` (made again when the KDC is new: its keys are)."""
    broker, client = folder / "kafka.keytab", folder / "client.keytab"
    for keytab in (broker, client):
        keytab.unlink(missing_ok=True)
    kdc.add_principals(broker, f"{SERVICE}/{HOST}")
    kdc.add_principals(client, CLIENT_PRINCIPAL)
    return broker, client


def gssapi_jaas(kdc: Kdc, keytab: Path) -> str:
    """The broker's login for its GSSAPI listener (``...gssapi.sasl.jaas.config``)."""
    return ("com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
            f'storeKey=true keyTab="{keytab}" principal="{kdc.principal(f"{SERVICE}/{HOST}")}";')


def _openssl(args: list[str], folder: Path) -> None:
    tool = shutil.which("openssl")
    if tool is None:
        raise RealStackError("openssl not found: the TLS listener's certificates need it "
                             "(Debian: apt-get install -y openssl)")
    done = subprocess.run([tool, *args], cwd=folder, capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode:
        raise RealStackError(f"openssl {args[0]} in {folder} failed: {done.stderr.strip()}")


def certificates(folder: Path) -> tuple[Path, Path]:
    """``(ca.pem, broker.pem)`` in ``folder`` (made once): a CA and the broker's key and
    certificate for ``127.0.0.1`` signed by it."""
    folder.mkdir(parents=True, exist_ok=True)
    ca, store = folder / "ca.pem", folder / "broker.pem"
    if ca.is_file() and store.is_file():
        return ca, store
    (folder / "san.ext").write_text(f"subjectAltName=IP:{HOST},DNS:localhost\n",
                                    encoding="utf-8")
    _openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-keyout",
              "ca.key", "-out", "ca.pem", "-subj", "/CN=hbase-migrate realstack CA"], folder)
    _openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out",
              "broker.csr", "-subj", f"/CN={HOST}"], folder)
    _openssl(["x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
              "-CAcreateserial", "-days", "30", "-extfile", "san.ext", "-out", "broker.crt"],
             folder)
    store.write_bytes((folder / "broker.key").read_bytes() + (folder / "broker.crt").read_bytes())
    for name in ("ca.key", "broker.key", "broker.pem"):
        (folder / name).chmod(0o600)
    return ca, store


def scram_password(folder: Path) -> str:
    """The SCRAM user's password, made once (``scram.password``, mode 0600)."""
    path = folder / "scram.password"
    if not path.is_file():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(18), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


def add_scram_user(bootstrap: str, password: str) -> None:
    """Set :data:`SCRAM_USER`'s credentials through the broker at ``bootstrap``."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient({"bootstrap.servers": bootstrap})
    upsert = UserScramCredentialUpsertion(
        SCRAM_USER, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, SCRAM_ITERATIONS),
        password.encode())
    try:
        admin.alter_user_scram_credentials([upsert])[SCRAM_USER].result(60)
    except KafkaException as exc:
        raise RealStackError(f"Kafka on {bootstrap}: could not set the SCRAM credentials of "
                             f"{SCRAM_USER!r}: {exc}") from None
