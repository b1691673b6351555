"""Thrift over HTTP, for HBase gateways in HTTP mode (``hbase.regionserver.thrift.http``).

Such a gateway (HBase's ``ThriftServer.setupHTTPServer``) serves a Thrift servlet on Jetty
at every path, binary protocol only: each call is one POST whose body is the request and
whose response body is the reply. :class:`HttpTransport` buffers what the protocol writes
and POSTs it on flush over one keep-alive ``requests`` session (``https`` when the cluster
names a ``tls_ca_file``). A Kerberos-secured gateway (``ThriftHttpServlet``) wants SPNEGO
on every POST and answers 401 without it: each POST carries a fresh ``Negotiate`` token
for the cluster's ``http_principal``, as WebHDFS's requests do. Failures become what the
Thrift clients already handle: a connection error, an HTTP error status or a bad reply is a
:class:`~thriftpy2.transport.TTransportException` (retried, then "unreachable"), a timeout
a :class:`TimeoutError`, a 401 one line naming cluster, endpoint and principal.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from thriftpy2.transport import TBufferedTransport, TTransportBase, TTransportException

from hbase_migrate.cluster.auth.security import ClusterSecurity

log = logging.getLogger(__name__)

CONTENT_TYPE = "application/x-thrift"
PATH = "/"  # the servlet answers at any path (HttpServerUtil.PATH_SPEC_ANY, "/*")


class HttpTransport(TTransportBase):
    """One gateway's Thrift-over-HTTP transport (wrap it in a buffered transport)."""

    def __init__(self, host: str, port: int, timeout: float | None, *,
                 security: ClusterSecurity | None = None, cluster: str = "",
                 gateway: str = "thrift") -> None:
        """``timeout`` in seconds (None: wait); ``security`` of the cluster named
        ``cluster`` makes its Kerberos and TLS settings apply; ``gateway`` names the
        gateway kind in messages."""
        self.host, self.port, self.timeout = host, port, timeout
        self.security, self.cluster, self.gateway = security, cluster, gateway
        tls = security is not None and security.tls_ca_file is not None
        self.url = f"{'https' if tls else 'http'}://{host}:{port}{PATH}"
        self.endpoint = f"{host}:{port}"
        self._verify: str | bool = (security.tls_ca_file if security is not None
                                    and security.tls_ca_file else True)
        self._session: Any = None
        self._wbuf = io.BytesIO()
        self._rbuf = io.BytesIO()

    @property
    def kerberos(self) -> bool:
        return self.security is not None and self.security.kerberos

    def is_open(self) -> bool:
        return self._session is not None

    def open(self) -> None:
        """A keep-alive session (after a Kerberos login for a secured cluster)."""
        if self._session is not None:
            return
        from requests import Session

        from hbase_migrate.cluster.auth.kerberos import login

        if self.kerberos:
            login(self.security, self.cluster, self.endpoint)
        session = Session()
        session.headers.update({"Content-Type": CONTENT_TYPE, "Accept": CONTENT_TYPE})
        self._session = session

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def write(self, buf: bytes) -> None:
        self._wbuf.write(buf)

    def read(self, sz: int) -> bytes:
        return self._rbuf.read(sz)

    def _read(self, sz: int) -> bytes:
        return self._rbuf.read(sz)

    def flush(self) -> None:
        """POST the buffered request; the reply body becomes what :meth:`read` returns."""
        body, self._wbuf = self._wbuf.getvalue(), io.BytesIO()
        if not body:
            return
        self.open()
        self._rbuf = io.BytesIO(self._post(body))

    def _post(self, body: bytes) -> bytes:
        import requests
        from requests_kerberos.exceptions import KerberosExchangeError

        auth = None
        if self.kerberos:
            from hbase_migrate.cluster.auth.kerberos import http_auth

            assert self.security is not None
            auth = http_auth(self.security, self.host, preemptive=True)
        try:
            # verify per call: a session's is overridden by REQUESTS_CA_BUNDLE when set
            reply = self._session.post(self.url, data=body, auth=auth, timeout=self.timeout,
                                       verify=self._verify)
        except requests.Timeout as exc:
            self.close()
            raise TimeoutError(f"{self.url}: timed out after {self.timeout:g}s") from exc
        except KerberosExchangeError as exc:
            self.close()
            raise self._refused(str(exc)) from exc
        except requests.RequestException as exc:
            self.close()
            raise TTransportException(TTransportException.NOT_OPEN,
                                      f"{self.url}: {exc}") from exc
        if reply.status_code == 401:
            lines = reply.text.strip().splitlines()
            raise self._refused(f"HTTP 401 {lines[0] if lines else reply.reason}")
        if reply.status_code != 200:
            self.close()
            raise TTransportException(TTransportException.UNKNOWN,
                                      f"{self.url}: HTTP {reply.status_code} {reply.reason}")
        return bytes(reply.content)

    def _refused(self, why: str) -> Exception:
        """The one-line error of a 401 or of a SPNEGO exchange that failed."""
        from hbase_migrate.cluster.auth.kerberos import KerberosError, explain

        endpoint = f"{self.gateway} gateway {self.url}"
        if not self.kerberos:
            return KerberosError(
                f"cluster {self.cluster!r}, {endpoint}: the gateway requires SPNEGO "
                "(Kerberos) authentication and this client has no credentials; set auth = "
                "\"kerberos\" with principal and keytab for the cluster",
                endpoint=self.endpoint)
        assert self.security is not None
        return explain(f"SPNEGO refused: {why}", self.security, self.cluster, endpoint,
                       self.security.http_principal)


def http_transport(host: str, port: int, timeout: float | None, *,
                   security: ClusterSecurity | None, cluster: str, gateway: str
                   ) -> TTransportBase:
    """:class:`HttpTransport` wrapped in thriftpy2's buffered transport (which the binary
    protocol's fast implementation reads from), not yet opened."""
    return TBufferedTransport(  # type: ignore[no-untyped-call]
        HttpTransport(host, port, timeout, security=security, cluster=cluster,
                      gateway=gateway))
