"""Thrift over SASL/GSSAPI for a secured HBase gateway (``hbase.thrift.security.qop``).

thriftpy2's ``TSaslClientTransport`` speaks Thrift's SASL framing (a START and OK message,
challenges until COMPLETE, then length-prefixed frames, wrapped when the QOP is auth-int or
auth-conf); it drives a client with the classic ``sasl`` module's interface. :class:`GssapiSasl`
is that interface over ``pure-sasl``'s GSSAPI mechanism, which asks MIT Kerberos for the
ticket (see :mod:`hbase_migrate.cluster.auth.kerberos`). The QOP asked for is the cluster's
``qop`` only: a gateway offering another is refused by the mechanism, and the error says so.
"""

from __future__ import annotations

import struct
from typing import Any

from thriftpy2.transport import TSaslClientTransport, TTransportBase

from hbase_migrate.cluster.auth.security import ClusterSecurity, service_principal

MECHANISM = "GSSAPI"


class GssapiSasl:
    """The ``sasl.Client`` calls thriftpy2's SASL transport makes, over pure-sasl."""

    def __init__(self, host: str, service: str, qop: str, principal: str | None) -> None:
        from puresasl.client import SASLClient

        props: dict[str, Any] = {"principal": principal} if principal else {}
        self._client = SASLClient(host, service=service, mechanism=MECHANISM,
                                  qops=(qop.encode(),), **props)
        self._wrapping = qop != "auth"

    def start(self, mechanism: str) -> tuple[bool, str, bytes]:
        return True, mechanism, self._client.process() or b""

    def step(self, challenge: bytes) -> tuple[bool, bytes]:
        return True, self._client.process(challenge) or b""

    def encode(self, data: bytes) -> tuple[bool, bytes]:
        """``data`` itself under auth; a length-prefixed wrapped frame otherwise."""
        if not self._wrapping:
            return True, data
        wrapped = self._client.wrap(data)
        return True, struct.pack(">I", len(wrapped)) + wrapped

    def decode(self, frame: bytes) -> tuple[bool, bytes]:
        return True, self._client.unwrap(frame[4:])

    def getError(self) -> str:
        return "SASL GSSAPI failed"


def sasl_transport(security: ClusterSecurity, host: str, socket: TTransportBase
                   ) -> TTransportBase:
    """``socket`` wrapped in SASL/GSSAPI for a gateway at ``host`` (not yet opened)."""
    service, server_host = service_principal(security.hbase_principal, host)
    return TSaslClientTransport(  # type: ignore[no-untyped-call]
        lambda: GssapiSasl(server_host, service, security.qop, security.principal),
        MECHANISM, socket)


def open_secured(transport: TTransportBase, socket: TTransportBase, security: ClusterSecurity,
                 cluster: str, endpoint: str) -> None:
    """Connect ``socket`` (its errors are the caller's: an unreachable gateway), then run
    the SASL handshake of ``transport``: a handshake that fails raises a one-line
    :class:`~hbase_migrate.cluster.auth.kerberos.KerberosError` (no ticket, a wrong principal,
    a QOP the gateway does not offer...)."""
    import kerberos as pykerberos
    from puresasl import SASLError, SASLProtocolException
    from thriftpy2.transport import TTransportException

    from hbase_migrate.cluster.auth.kerberos import explain, login

    login(security, cluster, endpoint)
    socket.open()
    service = "/".join(service_principal(security.hbase_principal, endpoint.rpartition(":")[0]))
    try:
        transport.open()
    except (pykerberos.GSSError, SASLError, SASLProtocolException) as exc:
        transport.close()
        if isinstance(exc, SASLProtocolException) and "quality of protection" in str(exc):
            raise explain_qop(exc, security, cluster, endpoint) from None
        raise explain(exc, security, cluster, endpoint, service) from None
    except TTransportException as exc:
        transport.close()
        if "Bad status" not in str(exc.message):
            raise
        raise explain(exc, security, cluster, endpoint, service) from None


def explain_qop(exc: Exception, security: ClusterSecurity, cluster: str, endpoint: str
                ) -> Exception:
    from hbase_migrate.cluster.auth.kerberos import KerberosError

    offered = str(exc).rpartition("offering")[2].partition(")")[0].strip(" (")
    return KerberosError(
        f"cluster {cluster!r}, {endpoint}, principal {security.principal}: QOP mismatch: "
        f"qop = {security.qop!r} but the gateway offers {offered or 'another'}; set qop to "
        "the gateway's hbase.thrift.security.qop", endpoint=endpoint)


_START, _BAD, _ERROR = 1, 3, 4


def sasl_required(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether the Thrift server at ``host:port`` speaks SASL: asked with a SASL START for
    a mechanism no server offers, which a SASL server refuses with a BAD or ERROR message
    and a plain Thrift server does not answer. For a client without credentials whose call
    got no answer."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(struct.pack(">BI", _START, 4) + b"NONE")
            reply = sock.recv(1)
    except OSError:
        return False
    return reply[:1] in (bytes([_BAD]), bytes([_ERROR]))


def credentials_missing(cluster: str, gateway: str, endpoint: str) -> Exception:
    """The error of a client without credentials that reached a SASL gateway."""
    from hbase_migrate.cluster.auth.kerberos import KerberosError

    return KerberosError(
        f"cluster {cluster!r}, {gateway} gateway {endpoint}: the gateway requires SASL "
        "(Kerberos) authentication and this client has no credentials; set auth = "
        "\"kerberos\" with principal and keytab for the cluster", endpoint=endpoint)
