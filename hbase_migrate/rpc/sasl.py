"""SASL on an HBase RPC connection: Kerberos (GSSAPI) login and the security layer
``hbase.rpc.protection`` asks for, as HBase's own client does it (``HBaseSaslRpcClient``,
``SaslUtil``, ``ServerRpcConnection.doRawSaslReply`` of HBase branch-2.6)::

    client  preamble with auth byte KERBEROS (81)
            then per token: int32-BE length | token
    server  int32 status 0 | int32-BE length | token          (a challenge)
            int32 status 0 | int32 -88                         (SWITCH_TO_SIMPLE_AUTH: a
                                                                server without security)
            int32 status 1 | string class | string message     (refused; a string is an
                                                                int32 length and UTF-8)

GSSAPI (RFC 4752) runs the Kerberos exchange (an empty client token once the context is
made), then the server's wrapped 4-byte offer (QOP bits, its largest buffer) answered with
the QOP chosen; the server sends nothing more. Then the ConnectionHeader and every call
follow, and with ``integrity`` or ``privacy`` every byte of both directions travels in
wrapped tokens, each ``int32-BE length | token`` (signed, or sealed for privacy); the bytes
inside are the plain RPC stream, cut anywhere.
"""

from __future__ import annotations

import struct
import threading
from typing import Protocol

from hbase_migrate.cluster.auth.kerberos import KerberosError, credentials, explain, login
from hbase_migrate.cluster.auth.security import ClusterSecurity, service_principal
from hbase_migrate.rpc.codec import AUTH_KERBEROS, MAX_FRAME
from hbase_migrate.rpc.errors import RpcConnectionError, RpcError, RpcFrameError
from hbase_migrate.rpc.tls import Stream

SUCCESS, ERROR = 0, 1
SWITCH_TO_SIMPLE_AUTH = -88
MAX_TOKEN = 1 << 20  # a negotiation token larger than this is no Kerberos token
# hbase.rpc.protection's values and the SASL QOP bit of each (RFC 4752 section 3.3).
PROTECTIONS = {"authentication": 1, "integrity": 2, "privacy": 4}
MAX_BUFFER = 1 << 16  # what this client offers to receive at most per wrapped token
_INT32 = struct.Struct(">i")


class SaslError(KerberosError, RpcError):
    """A SASL negotiation was refused or cannot succeed (one line: server, principals, the
    server's error): not retried, and no outage (a negotiation cut off by the network is
    an RpcConnectionError)."""


class Mechanism(Protocol):
    """A SASL client mechanism after ``step`` has been called until ``complete``."""

    name: str         # the SASL mechanism's name, for messages
    auth: int         # the preamble's auth byte
    user_info: bool   # whether the connection header names the user
    hint: str         # what a refusal's message adds ("" or "; what to do")
    user: str         # who the server will know this client as
    target: str       # the service principal asked for
    complete: bool
    qop: int          # the QOP bit chosen (1: no wrapping)
    max_send: int     # the server's largest token, unwrapped

    def step(self, challenge: bytes | None) -> bytes | None:
        """The next token to send (None: nothing more to send)."""
        ...

    def wrap(self, data: bytes) -> bytes: ...

    def unwrap(self, token: bytes) -> bytes: ...


def protection_bits(protection: str) -> list[int]:
    """The QOP bits of an ``hbase.rpc.protection`` value (a comma-separated list, most
    wanted first)."""
    names = [p.strip() for p in protection.split(",") if p.strip()]
    unknown = [n for n in names if n not in PROTECTIONS]
    if unknown or not names:
        raise ValueError(f"rpc_protection {protection!r}: expected a list of "
                         f"{', '.join(PROTECTIONS)}")
    return [PROTECTIONS[n] for n in names]


def choose_qop(offer: bytes, wanted: list[int]) -> tuple[int, int, bytes]:
    """The QOP bit of ``wanted`` (most wanted first) that the server's security layer
    ``offer`` (QOP bits, its largest buffer) allows, that buffer size, and the answer to
    wrap for the server; ValueError naming both sides when none is."""
    if len(offer) != 4:
        raise ValueError(f"the server's security layer offer is {len(offer)} bytes, "
                         "expected 4")
    (word,) = struct.unpack(">I", offer)
    offered = word >> 24
    chosen = next((bit for bit in wanted if offered & bit), None)
    if chosen is None:
        def names(bits: int) -> str:
            return ", ".join(n for n, b in PROTECTIONS.items() if bits & b) or "none"

        raise ValueError(f"QOP mismatch: rpc_protection asks for {names(sum(wanted))} but "
                         f"the server offers {names(offered)} (its hbase.rpc.protection)")
    answer = struct.pack(">I", chosen << 24 | (MAX_BUFFER if chosen != 1 else 0))
    return chosen, word & 0xFFFFFF, answer


class GssapiMechanism:
    """SASL GSSAPI through python-gssapi with the credentials of ``security``'s principal
    (its own credential cache, filled from its keytab: see
    :mod:`hbase_migrate.cluster.auth.kerberos`) for the HBase server at ``host``."""

    name = "GSSAPI"
    auth = AUTH_KERBEROS
    user_info = True
    hint = ""

    def __init__(self, security: ClusterSecurity, host: str) -> None:
        import gssapi

        creds = credentials(security)
        self.user = str(creds.name)
        service, server_host = service_principal(security.hbase_principal, host)
        realm = security.hbase_principal.partition("@")[2]
        if realm:
            self.target = f"{service}/{server_host}@{realm}"
            name = gssapi.Name(self.target, gssapi.NameType.kerberos_principal)
        else:
            self.target = f"{service}/{server_host}"
            name = gssapi.Name(f"{service}@{server_host}", gssapi.NameType.hostbased_service)
        flags = gssapi.RequirementFlag
        self._wanted = protection_bits(security.rpc_protection)
        self._context = gssapi.SecurityContext(
            name=name, creds=creds, usage="initiate",
            flags=flags.mutual_authentication | flags.integrity | flags.confidentiality)
        self._lock = threading.Lock()  # one GSS context: wrap and unwrap in turn
        self.complete = False
        self.qop = 1
        self.max_send = 0

    def step(self, challenge: bytes | None) -> bytes:
        if not self._context.complete:
            return self._context.step(challenge) or b""
        assert challenge is not None
        offer = self._context.unwrap(challenge).message
        self.qop, self.max_send, answer = choose_qop(offer, self._wanted)
        self.complete = True
        return bytes(self._context.wrap(answer, False).message)

    def wrap(self, data: bytes) -> bytes:
        with self._lock:
            return bytes(self._context.wrap(data, self.qop == 4).message)

    def unwrap(self, token: bytes) -> bytes:
        with self._lock:
            result = self._context.unwrap(token)
        if self.qop == 4 and not result.encrypted:
            raise ValueError("privacy was agreed but the server sent a token in the clear")
        return bytes(result.message)


def gssapi_login(security: ClusterSecurity, cluster: str, endpoint: str, host: str
                 ) -> GssapiMechanism:
    """GSSAPI for the server at ``host`` after logging in as ``security``'s principal (a
    failed login: one line naming cluster, endpoint and principal)."""
    login(security, cluster, endpoint)
    try:
        return GssapiMechanism(security, host)
    except Exception as exc:  # GSSError: no usable credentials, a malformed name
        raise explain(exc, security, cluster, endpoint) from None


# --- negotiation ---------------------------------------------------------------------------


def _read(sock: Stream, n: int, what: str, server: str, hung_up: str = "") -> bytes:
    """``n`` bytes; ``hung_up`` is added to the error of a server that closes before any."""
    out = bytearray()
    while len(out) < n:
        try:
            data = sock.recv(n - len(out))
        except TimeoutError:
            raise RpcConnectionError(f"server {server}: SASL negotiation: no {what} "
                                     f"within {sock.gettimeout():g} s ({len(out)} of {n} "
                                     "bytes came)", server=server) from None
        if not data:
            raise RpcConnectionError(f"server {server}: SASL negotiation: the server closed "
                                     f"the connection in its {what} ({len(out)} of {n} "
                                     f"bytes came){'' if out else hung_up}", server=server)
        out += data
    return bytes(out)


def _read_string(sock: Stream, server: str) -> str:
    (size,) = _INT32.unpack(_read(sock, 4, "error", server))
    if size < 0:
        return ""
    if size > MAX_TOKEN:
        raise SaslError(f"server {server}: SASL negotiation: an error string of {size} "
                        "bytes", endpoint=server)
    return _read(sock, size, "error", server).decode("utf-8", "replace")


def refused(server: str, mechanism: Mechanism, cls: str, message: str) -> SaslError:
    """The error of a negotiation the server refused with ``cls`` and ``message``."""
    detail = " ".join(message.split())
    return SaslError(f"server {server}: SASL {mechanism.name} as {mechanism.user} to "
                     f"{mechanism.target} refused: {cls}" + (f": {detail}" if detail else "")
                     + mechanism.hint, endpoint=server)


def _challenge(sock: Stream, mechanism: Mechanism, server: str, hung_up: str = ""
               ) -> bytes | None:
    """The server's next token; None when it asks to fall back to SIMPLE auth."""
    (status,) = _INT32.unpack(_read(sock, 4, "status", server, hung_up))
    if status == ERROR:
        raise refused(server, mechanism, _read_string(sock, server),
                      _read_string(sock, server))
    if status != SUCCESS:
        raise SaslError(f"server {server}: SASL negotiation: status {status} is neither "
                        "success (0) nor error (1)", endpoint=server)
    (size,) = _INT32.unpack(_read(sock, 4, "token length", server))
    if size == SWITCH_TO_SIMPLE_AUTH:
        return None
    if size < 0 or size > MAX_TOKEN:
        raise SaslError(f"server {server}: SASL negotiation: a token of {size} bytes (at "
                        f"most {MAX_TOKEN})", endpoint=server)
    return _read(sock, size, f"token of {size} bytes", server)


def negotiate(sock: Stream, mechanism: Mechanism, server: str, hung_up: str = ""
              ) -> SecurityLayer:
    """Run the SASL exchange on ``sock`` (the preamble sent; its timeout bounds each
    read); the security layer agreed, or SaslError naming the server and principals.
    ``hung_up``: what the error of a server that hangs up before its first byte adds."""
    first = hung_up
    try:
        token: bytes | None = mechanism.step(None)
        while True:
            if token is not None:
                sock.sendall(_INT32.pack(len(token)) + token)
            if mechanism.complete:
                return SecurityLayer(mechanism, server)
            token = _challenge(sock, mechanism, server, first)
            first = ""
            if token is None:
                raise SaslError(f"server {server}: the server does not use Kerberos (it "
                                "asked to fall back to SIMPLE auth) and this cluster's "
                                "security says auth = \"kerberos\"; set auth = \"none\"",
                                endpoint=server)
            token = mechanism.step(token)
    except OSError as exc:
        raise RpcConnectionError(f"server {server}: SASL negotiation broke: "
                                 f"{exc.strerror or exc}{first}", server=server) from None
    except RpcError:
        raise
    except Exception as exc:  # the mechanism's own: GSSError, a QOP mismatch
        text = " ".join(str(exc).split())
        raise SaslError(f"server {server}: SASL {mechanism.name} as {mechanism.user} to "
                        f"{mechanism.target} failed: {text}", endpoint=server) from None


# --- the security layer --------------------------------------------------------------------


class SecurityLayer:
    """What negotiation agreed: ``seal`` makes the bytes to send of plain RPC bytes,
    ``open`` the plain bytes of those received (wrapped tokens may arrive in pieces)."""

    def __init__(self, mechanism: Mechanism | None = None, server: str = "") -> None:
        self.wrapping = mechanism is not None and mechanism.qop != 1
        self._mechanism = mechanism
        self.server = server
        self._buf = bytearray()
        self._offset = 0  # stream offset of _buf[0]
        # Until the first bytes are read: the server may still refuse the negotiation's
        # last token (a status 1 where a reply or token starts: no reply frame or wrapped
        # token is 1 byte long).
        self._head: bytearray | None = bytearray() if mechanism is not None else None

    def seal(self, data: bytes) -> bytes:
        """``data`` as it goes on the wire (callers send in order: wrapping numbers the
        tokens)."""
        if not self.wrapping or self._mechanism is None:
            return data
        step = self._mechanism.max_send or len(data) or 1
        out = bytearray()
        for pos in range(0, len(data), step):
            token = self._mechanism.wrap(data[pos : pos + step])
            out += _INT32.pack(len(token)) + token
        return bytes(out)

    def open(self, data: bytes) -> bytes:
        """The plain bytes of the whole tokens received so far."""
        if self._head is not None:
            data = self._after_refusal(data)
        if not self.wrapping or self._mechanism is None:
            return data
        self._buf += data
        plain = bytearray()
        while len(self._buf) >= 4:
            (size,) = _INT32.unpack_from(self._buf)
            if size <= 0 or size > MAX_FRAME:
                raise RpcFrameError(f"wrapped token length {size} is not a token",
                                    offset=self._offset, call_id=None, server=self.server)
            if len(self._buf) - 4 < size:
                break
            try:
                plain += self._mechanism.unwrap(bytes(self._buf[4 : 4 + size]))
            except Exception as exc:  # GSSError: a forged, damaged or replayed token
                raise RpcFrameError(f"wrapped token of {size} bytes does not unwrap: "
                                    f"{' '.join(str(exc).split())}", offset=self._offset,
                                    call_id=None, server=self.server) from None
            del self._buf[: 4 + size]
            self._offset += 4 + size
        return bytes(plain)

    def _after_refusal(self, data: bytes) -> bytes:
        """``data`` once the stream is known not to start with a SASL error; raises
        SaslError when it does."""
        assert self._head is not None and self._mechanism is not None
        head = self._head
        head += data
        if len(head) < 4:
            return b""
        if _INT32.unpack_from(head)[0] != ERROR:
            self._head = None
            return bytes(head)
        strings: list[str] = []
        pos = 4
        while len(strings) < 2 and len(head) >= pos + 4:
            (size,) = _INT32.unpack_from(head, pos)
            if len(head) < pos + 4 + max(size, 0):
                return b""
            strings.append(bytes(head[pos + 4 : pos + 4 + max(size, 0)]).decode("utf-8",
                                                                              "replace"))
            pos += 4 + max(size, 0)
        if len(strings) < 2:
            return b""
        raise refused(self.server, self._mechanism, *strings)

    def cut_off(self) -> str:
        """What an ended stream leaves unread of a wrapped token ("" if nothing)."""
        if not self.wrapping or not self._buf:
            return ""
        if len(self._buf) < 4:
            return f" ({len(self._buf)} bytes of a wrapped token's length at offset " \
                   f"{self._offset})"
        (size,) = _INT32.unpack_from(self._buf)
        return f" (a wrapped token of {size} bytes at offset {self._offset} cut off after " \
               f"{len(self._buf) - 4})"


PLAIN = SecurityLayer()
