"""TLS on an HBase RPC connection (HBase 2.6+: ``hbase.server.netty.tls.enabled``), as HBase's
own client does it (``NettyRpcConnection``, ``X509Util``, ``HBaseTrustManager`` of branch-2.6):

* the TLS handshake comes first, then the preamble, the SASL negotiation if any, and every
  call, all inside TLS (SASL's own wrapping, under integrity or privacy, too);
* the server's certificate chain is checked against the cluster's ``tls_ca_file`` (HBase's
  ``hbase.rpc.tls.truststore.location``; none: the system's CAs), TLS 1.2 at least;
* the host name is checked HBase's way (``hbase.client.netty.tls.verify.server.hostname``,
  on by default): the server's IP address, then its host name, each against the
  certificate's subject alternative names (IP entries for an address, DNS entries with a
  one-label wildcard for a name), or its common name when it has none;
* a client certificate and key (``tls_cert_file``, ``tls_key_file``) are offered to a server
  that asks for one (``hbase.server.netty.tls.client.auth.mode``, NEED by default).

The TLS state lives in a memory BIO (``ssl.SSLObject``) under a lock rather than in an
``SSLSocket``: one thread reads the connection while callers write it, and an OpenSSL
connection must not be used by two threads at once. Sending happens outside that lock, so
a writer blocked by a full socket never keeps the reader from draining replies.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import socket
import ssl
import threading
from typing import Any, Protocol

from hbase_migrate.cluster.auth.security import ClusterSecurity, warn_if_exposed
from hbase_migrate.errors import ConfigError
from hbase_migrate.rpc.errors import RpcConnectionError, RpcError

log = logging.getLogger(__name__)

_READ = 1 << 16
# How long a TLS 1.3 client waits after its handshake for the server's first records: its
# session tickets (the client's certificate accepted) or an alert (refused). A server that
# sends neither costs this once per connection; its alert is then recognised on first use.
SETTLE = 1.0
# Alerts of a server that refused the client's certificate, or found none (TLS 1.2, 1.3).
_CERT_ALERTS = ("CERTIFICATE_REQUIRED", "BAD_CERTIFICATE", "CERTIFICATE_UNKNOWN",
                "UNKNOWN_CA", "CERTIFICATE_EXPIRED")


class RpcTlsError(RpcError):
    """A TLS handshake with an HBase server failed for a reason retrying cannot mend: a
    certificate not trusted or not naming the server, TLS on one side only, a client
    certificate the server wants and was not given. One line naming the server."""


class Stream(Protocol):
    """What a connection reads and writes: a socket, or a TLS channel over one."""

    def recv(self, size: int, /) -> bytes: ...

    def sendall(self, data: bytes, /) -> None: ...

    def settimeout(self, value: float | None, /) -> None: ...

    def gettimeout(self) -> float | None: ...

    def shutdown(self, how: int, /) -> None: ...

    def close(self) -> None: ...


def client_context(security: ClusterSecurity) -> ssl.SSLContext:
    """The TLS context of a cluster's RPC clients (one per security settings and state of
    their files: a CA, certificate or key replaced where it was, as a rotation does, is
    loaded again); files that cannot be loaded: ConfigError naming the key and file."""
    files = (security.tls_ca_file, security.tls_cert_file, security.tls_key_file)
    stamps = tuple(_stamp(f) for f in files)
    known = _LOADED.get(security)
    if known is not None and known[0] == stamps:
        return known[1]
    try:
        context = _load_context(security)
    except ConfigError as exc:
        if known is None:
            raise
        # a rotation caught halfway (a new certificate beside the old key): the context
        # loaded before serves until the files load together
        log.warning("%s; the TLS files loaded before are used until these load", exc)
        return known[1]
    _LOADED[security] = (stamps, context)
    return context


# the last context each settings loaded, with the state of the files it was loaded from
_LOADED: dict[ClusterSecurity, tuple[tuple[tuple[int, ...], ...], ssl.SSLContext]] = {}


def _stamp(path: str | None) -> tuple[int, ...]:
    """What tells a file's contents apart without reading it (none: missing or unnamed)."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return ()
    return () if st is None else (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _load_context(security: ClusterSecurity) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False  # checked as HBase does, after the handshake
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        if security.tls_ca_file:
            context.load_verify_locations(cafile=security.tls_ca_file)
        else:
            context.load_default_certs()
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"security: tls_ca_file {security.tls_ca_file}: cannot load CA "
                          f"certificates: {exc}") from None
    if security.tls_cert_file and security.tls_key_file:
        warn_if_exposed(security.tls_key_file, "the RPC client's TLS private key")
        try:
            context.load_cert_chain(security.tls_cert_file, security.tls_key_file)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"security: tls_cert_file {security.tls_cert_file} with "
                              f"tls_key_file {security.tls_key_file}: cannot load the client "
                              f"certificate and key: {exc}") from None
    return context


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _name_matches(host: str, pattern: str) -> bool:
    """``host`` against a DNS name of a certificate, a ``*`` standing for part of one label
    (HBase's ``matchIdentityStrict``)."""
    host, pattern = host.lower().rstrip("."), pattern.lower().rstrip(".")
    prefix, star, suffix = pattern.partition("*")
    if not star:
        return host == pattern
    if len(host) < len(prefix) + len(suffix) or not host.startswith(prefix) \
            or not host.endswith(suffix):
        return False
    return "." not in host[len(prefix) : len(host) - len(suffix)]


def certificate_names(cert: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    """The IP addresses and DNS names of a certificate's subject alternative names, and
    its common names."""
    alt = cert.get("subjectAltName", ())
    addresses = [value.strip() for kind, value in alt if kind == "IP Address"]
    names = [value for kind, value in alt if kind == "DNS"]
    common = [value for rdn in cert.get("subject", ()) for key, value in rdn
              if key == "commonName"]
    return addresses, names, common


def identity_matches(cert: dict[str, Any], host: str) -> bool:
    """Whether ``cert`` names ``host`` (an address or a name) as HBase's
    ``HBaseHostnameVerifier`` decides."""
    addresses, names, common = certificate_names(cert)
    if addresses or names:
        if _is_address(host):
            wanted = ipaddress.ip_address(host)
            return any(_is_address(a) and ipaddress.ip_address(a) == wanted
                       for a in addresses)
        return any(_name_matches(host, n) for n in names)
    return bool(common) and _name_matches(host, common[0])


def verify_host(cert: dict[str, Any], host: str, address: str, server: str) -> None:
    """HBase's check of a server's certificate (``HBaseTrustManager``): its IP address,
    then its host name (found by reverse lookup when only the address is known)."""
    if identity_matches(cert, address):
        return
    name = host
    if _is_address(host):
        try:
            name = socket.gethostbyaddr(address)[0]
        except OSError:
            name = ""
    if name and identity_matches(cert, name):
        return
    addresses, names, common = certificate_names(cert)
    named = ", ".join(addresses + names) or f"CN={common[0] if common else '(none)'}"
    raise RpcTlsError(f"server {server}: TLS: its certificate names {named}, not "
                      f"{address}" + (f" or {name}" if name and name != address else "")
                      + " (hostname verification, as HBase's hbase.client.netty.tls.verify."
                      "server.hostname; rpc_tls_verify_hostname = \"false\" skips it)")


def _handshake_error(exc: Exception, server: str, security: ClusterSecurity) -> RpcError:
    if isinstance(exc, ssl.SSLCertVerificationError):
        trusted = f"tls_ca_file {security.tls_ca_file}" if security.tls_ca_file \
            else "the system's CAs (no tls_ca_file)"
        return RpcTlsError(f"server {server}: TLS: its certificate is not trusted by "
                           f"{trusted}: {exc.verify_message}; expected a certificate signed "
                           "by that CA (the servers' hbase.rpc.tls.keystore)")
    reason = getattr(exc, "reason", None) or str(exc)
    alert = isinstance(exc, ssl.SSLError) and "ALERT" in reason.upper()
    if alert and (any(a in reason.upper() for a in _CERT_ALERTS) or not security.tls_cert_file):
        given = (f"refused tls_cert_file {security.tls_cert_file}" if security.tls_cert_file
                 else "none was given: set tls_cert_file and tls_key_file")
        return RpcTlsError(f"server {server}: TLS: the server refused this client's "
                           f"certificate ({reason}): expected one signed by a CA the servers "
                           f"trust (hbase.rpc.tls.truststore; hbase.server.netty.tls.client."
                           f"auth.mode wants one); {given}")
    if alert:
        return RpcTlsError(f"server {server}: TLS: the server refused the handshake "
                           f"({reason}): expected TLS 1.2 or later and a cipher both sides "
                           "take (hbase.rpc.tls.protocol, hbase.rpc.tls.ciphersuites)")
    if isinstance(exc, ssl.SSLError) and not isinstance(exc, ssl.SSLEOFError):
        return RpcTlsError(f"server {server}: TLS handshake failed ({reason}): expected a "
                           "server with TLS on its RPC port (hbase.server.netty.tls.enabled), "
                           "as the cluster's rpc_tls = \"on\" says")
    return RpcConnectionError(f"server {server}: TLS handshake broke: "
                              f"{getattr(exc, 'strerror', None) or reason}", server=server)


class TlsChannel:
    """A TCP socket with TLS on it, shared by one reading thread and serialised writers."""

    def __init__(self, sock: socket.socket, host: str, server: str,
                 security: ClusterSecurity) -> None:
        self._sock = sock
        self.server = server
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = client_context(security).wrap_bio(
            self._incoming, self._outgoing,
            server_hostname=None if _is_address(host) else host)  # SNI as HBase sends it
        self._state = threading.Lock()  # the TLS state
        self._send = threading.Lock()   # the socket's write side, in order
        self._security = security
        self._early = b""  # application bytes read while settling, for the first recv
        self._used = False  # application bytes received since the handshake
        self._reading = False  # a reader has called recv (it alone reads the socket)
        try:
            self._handshake()
            if self._tls.version() == "TLSv1.3":
                self._settle()
        except OSError as exc:
            raise _handshake_error(exc, server, security) from None
        self.hostname_verified = security.rpc_tls_verify_hostname == "true"
        if self.hostname_verified:
            cert = self._tls.getpeercert()
            assert cert is not None  # CERT_REQUIRED: a verified certificate
            verify_host(cert, host, sock.getpeername()[0], server)

    @property
    def version(self) -> str:
        """The TLS version negotiated (``TLSv1.2``, ``TLSv1.3``)."""
        return self._tls.version() or ""

    @property
    def cipher(self) -> str:
        cipher = self._tls.cipher()
        return cipher[0] if cipher else ""

    def _handshake(self) -> None:
        while True:
            try:
                self._tls.do_handshake()
            except ssl.SSLWantReadError:
                self._flush()
                if not self._fill():
                    raise ssl.SSLEOFError("the server closed the connection in the "
                                          "handshake") from None
                continue
            self._flush()
            return

    def _settle(self) -> None:
        """Under TLS 1.3 a server judges the client's certificate after the client's side of
        the handshake ended, and answers with its session tickets or an alert. Wait for that
        answer (at most ``SETTLE`` seconds) so that a refusal is the handshake's error, as
        under TLS 1.2, whatever the timing."""
        timeout = self._sock.gettimeout()
        self._sock.settimeout(SETTLE if timeout is None else min(SETTLE, timeout))
        try:
            while True:
                try:
                    ended = not self._fill()
                except TimeoutError:
                    return  # a server that sends no tickets: its alert, if any, comes later
                try:
                    self._early = self._tls.read(_READ)
                    return
                except ssl.SSLWantReadError:
                    if not ended:
                        return  # tickets read: the certificate was taken
                except ssl.SSLZeroReturnError:
                    raise ssl.SSLEOFError("the server closed the connection right after "
                                          "the handshake") from None
                if ended:
                    raise ssl.SSLEOFError("the server closed the connection right after the "
                                          "handshake")
        finally:
            self._sock.settimeout(timeout)

    def _refusal(self, exc: OSError) -> RpcError | None:
        """The server's alert behind ``exc``, a read or write failing before any reply came
        (a TLS 1.3 server refusing the client's certificate after the client's side of the
        handshake ended): the alert itself, or one still waiting to be read after the
        server's reset. None when there is none."""
        if isinstance(exc, ssl.SSLError):
            alert = "ALERT" in (getattr(exc, "reason", None) or str(exc)).upper()
            return _handshake_error(exc, self.server, self._security) if alert else None
        timeout = self._sock.gettimeout()
        try:
            self._sock.setblocking(False)
            while self._fill():
                with self._state:
                    try:
                        self._tls.read(_READ)
                    except ssl.SSLWantReadError:
                        continue
                    except ssl.SSLError as alert:
                        return self._refusal(alert)
                    return None
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                self._sock.settimeout(timeout)
        return None

    def _fill(self) -> bool:
        """Read the socket into the TLS state; False at its end."""
        data = self._sock.recv(_READ)
        with self._state:
            if data:
                self._incoming.write(data)
            else:
                self._incoming.write_eof()
        return bool(data)

    def _flush(self) -> None:
        with self._send:
            with self._state:
                data = self._outgoing.read()
            if data:
                self._sock.sendall(data)

    # --- the stream ---------------------------------------------------------------------

    def recv(self, size: int, /) -> bytes:
        self._reading = True
        if self._early:
            data, self._early = self._early[:size], self._early[size:]
            return data
        try:
            data = self._recv(size)
        except OSError as exc:
            refusal = None if self._used or isinstance(exc, TimeoutError) \
                else self._refusal(exc)
            if refusal is None:
                raise
            raise refusal from None
        self._used = self._used or bool(data)
        return data

    def _recv(self, size: int) -> bytes:
        while True:
            with self._state:
                try:
                    return self._tls.read(size)
                except ssl.SSLWantReadError:
                    pass
                except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                    return b""
            self._flush()  # alerts or tickets the TLS layer wants sent
            if not self._fill():
                with self._state:
                    try:
                        return self._tls.read(size)
                    except (ssl.SSLZeroReturnError, ssl.SSLEOFError, ssl.SSLWantReadError):
                        return b""

    def sendall(self, data: bytes, /) -> None:
        with self._send:
            with self._state:
                view = memoryview(data)
                while view:
                    view = view[self._tls.write(view):]
                out = self._outgoing.read()
            try:
                self._sock.sendall(out)
            except OSError as exc:
                refusal = None if self._used or self._reading or isinstance(
                    exc, TimeoutError) else self._refusal(exc)
                if refusal is None:
                    raise
                raise refusal from None

    def settimeout(self, value: float | None, /) -> None:
        self._sock.settimeout(value)

    def gettimeout(self) -> float | None:
        return self._sock.gettimeout()

    def shutdown(self, how: int, /) -> None:
        self._sock.shutdown(how)

    def close(self) -> None:
        self._sock.close()
