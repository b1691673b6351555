"""Certificates for a real stack with TLS on HBase's RPC (``--rpc-tls``): made at start in
``<stack>/tls``, a CA of the stack's own and, signed by it,

* ``server.p12``: the servers' keystore (PKCS12, HBase's ``hbase.rpc.tls.keystore``), its
  password in ``keystore.password`` (mode 600), which the launcher reads: it is never an
  argument of a process, never in ``cluster.json`` or a log;
* ``ca.pem``: the CA certificate, the servers' truststore and the clients' ``tls_ca_file``;
* ``client.pem``, ``client.key``: a client certificate and its key (mode 600), since HBase's
  servers want one by default (``hbase.server.netty.tls.client.auth.mode`` NEED).

Every certificate names ``localhost`` and ``127.0.0.1``, where the stack's servers and
clients run (HBase checks the host names of both sides by default), or the ``hosts`` given."""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID = datetime.timedelta(days=30)


@dataclass(frozen=True)
class TlsFiles:
    folder: Path
    ca: Path
    keystore: Path
    password: Path
    client_cert: Path
    client_key: Path


def _private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


HOSTS = ("localhost", "127.0.0.1")


def _alt_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey,
                 issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None,
                 hosts: tuple[str, ...] = HOSTS) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (x509.CertificateBuilder().subject_name(name)
               .issuer_name(issuer[0] if issuer else name).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + VALID))
    if issuer is None:  # the CA
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0),
                                        critical=True)
    else:
        builder = (builder
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None),
                                  critical=True)
                   .add_extension(x509.SubjectAlternativeName(
                       [_alt_name(host) for host in hosts]), critical=False)
                   .add_extension(x509.ExtendedKeyUsage(
                       [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False))
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def make_tls(folder: Path, name: str, hosts: tuple[str, ...] = HOSTS) -> TlsFiles:
    """A new CA named after the stack ``name`` and the files above, in ``folder``; the
    server's certificate names ``hosts``."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate(f"{name} realstack CA", ca_key, None)
    issuer = (ca.subject, ca_key)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _certificate(hosts[0], server_key, issuer, hosts)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = _certificate("hbase-migrate", client_key, issuer)
    files = TlsFiles(folder, folder / "ca.pem", folder / "server.p12",
                     folder / "keystore.password", folder / "client.pem",
                     folder / "client.key")
    password = secrets.token_urlsafe(18)
    _private(files.password, password.encode())
    _private(files.keystore, pkcs12.serialize_key_and_certificates(
        b"server", server_key, server, [ca],
        serialization.BestAvailableEncryption(password.encode())))
    files.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files.client_cert.write_bytes(client.public_bytes(serialization.Encoding.PEM))
    _private(files.client_key, client_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return files
