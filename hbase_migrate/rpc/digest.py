"""SASL DIGEST-MD5 (RFC 2831) with an HBase delegation token, as HBase's client does it
(``DigestSaslClientAuthenticationProvider``, ``SaslUtil`` of branch-2.6) and Java's
DIGEST-MD5 server (``com.sun.security.sasl.digest``), which HBase's servers run, accepts.

* The preamble's auth byte is DIGEST (82); the client's first token is empty (DIGEST-MD5
  has no initial response), the server answers with its challenge, the client with its
  response, the server with ``rspauth``, which the client checks and answers with nothing.
* User name: the token identifier in base64; password: the token password in base64.
  HBase makes client and server with no protocol and the server name ``default``
  (``SaslUtil.SASL_DEFAULT_REALM``): Java's digest-uri is then ``null/default`` and the
  server's realm ``default``.
* ``hbase.rpc.protection`` maps to the qop: authentication ``auth``, integrity
  ``auth-int``, privacy ``auth-conf``; the first asked for that the server offers is taken.
  For ``auth-conf`` the cipher is the strongest of the server's list this client has, in
  Java's order: ``3des``, then ``rc4``.
* The security layer (RFC 2831 sections 2.3 and 2.4): sequence numbers from 0 each way; a
  MAC of HMAC-MD5(Ki, seq | message)[0..9]; an integrity token is message | MAC | 0x0001 |
  seq; a privacy token is CIPHER(Kc, message | padding | MAC) | 0x0001 | seq, the padding 1
  to 8 bytes each of its own length for 3DES (none for RC4), the cipher state running on
  from token to token (CBC chained, or the RC4 stream).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import struct
from typing import Any

from hbase_migrate.cluster.auth.tokens import Token
from hbase_migrate.rpc.codec import AUTH_DIGEST
from hbase_migrate.rpc.sasl import PROTECTIONS, protection_bits

DIGEST_URI = "null/default"
REALM = "default"
NONCE_COUNT = "00000001"
MAX_BUFFER = 65536  # what this client offers to receive per token (RFC 2831's default)
QOPS = {1: "auth", 2: "auth-int", 4: "auth-conf"}
CIPHERS = ("3des", "rc4")  # the ones this client has, strongest first (Java's order)
_INT_MAGIC = (b"Digest session key to client-to-server signing key magic constant",
              b"Digest session key to server-to-client signing key magic constant")
_CONF_MAGIC = (b"Digest H(A1) to client-to-server sealing key magic constant",
               b"Digest H(A1) to server-to-client sealing key magic constant")
_MESSAGE_TYPE = b"\x00\x01"


def parse_directives(data: bytes) -> dict[str, list[str]]:
    """The ``name=value`` and ``name="quoted value"`` pairs of a challenge (RFC 2831 section
    7.1: comma-separated, spaces allowed around them, ``\\`` escaping inside quotes); each
    name's values in order. ValueError on a malformed one."""
    text = data.decode("utf-8")
    out: dict[str, list[str]] = {}
    pos, n = 0, len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            break
        eq = text.find("=", pos)
        if eq < 0:
            raise ValueError(f"DIGEST-MD5 challenge: no '=' after {text[pos:pos + 20]!r}")
        name = text[pos:eq].strip().lower()
        pos = eq + 1
        while pos < n and text[pos] in " \t":
            pos += 1
        if pos < n and text[pos] == '"':
            value, pos = [], pos + 1
            while pos < n and text[pos] != '"':
                if text[pos] == "\\" and pos + 1 < n:
                    pos += 1
                value.append(text[pos])
                pos += 1
            if pos >= n:
                raise ValueError(f"DIGEST-MD5 challenge: {name}'s quoted value is not closed")
            pos += 1
            out.setdefault(name, []).append("".join(value))
        else:
            end = text.find(",", pos)
            end = n if end < 0 else end
            out.setdefault(name, []).append(text[pos:end].strip())
            pos = end
    return out


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def response_value(username: str, realm: str, password: str, nonce: str, cnonce: str,
                   qop: str, digest_uri: str, method: str = "AUTHENTICATE",
                   authzid: str | None = None, nc: str = NONCE_COUNT) -> tuple[str, bytes]:
    """RFC 2831 section 2.1.2.1: the response value (``method`` AUTHENTICATE for the
    client's, "" for the server's ``rspauth``) and H(A1), the session key."""
    inner = hashlib.md5(f"{username}:{realm}:{password}".encode("iso-8859-1")).digest()
    a1 = inner + f":{nonce}:{cnonce}".encode()
    if authzid is not None:
        a1 += f":{authzid}".encode()
    h_a1 = hashlib.md5(a1).digest()
    a2 = f"{method}:{digest_uri}"
    if qop in ("auth-int", "auth-conf"):
        a2 += ":" + "0" * 32
    kd = f"{h_a1.hex()}:{nonce}:{nc}:{cnonce}:{qop}:{hashlib.md5(a2.encode()).hexdigest()}"
    return hashlib.md5(kd.encode()).hexdigest(), h_a1


def des_key(seven: bytes) -> bytes:
    """Eight DES key bytes of 56 key bits: seven bits per byte, shifted left, the low bit
    set for odd parity (as Java's DIGEST-MD5 ``addDesParity`` makes them)."""
    bits = int.from_bytes(seven, "big")
    out = bytearray()
    for shift in range(49, -1, -7):
        b = ((bits >> shift) & 0x7F) << 1
        out.append(b | (bin(b).count("1") + 1) % 2)
    return bytes(out)


class _Cipher:
    """One direction's cipher state: 3DES in CBC (key and IV of the 16-byte Kc as Java's
    ``makeDesKeys`` and RFC 2831 say) or RC4 with Kc itself."""

    def __init__(self, name: str, kc: bytes, encrypt: bool) -> None:
        from cryptography.hazmat.decrepit.ciphers.algorithms import ARC4, TripleDES
        from cryptography.hazmat.primitives.ciphers import Cipher, modes

        cipher: Cipher[Any]
        if name == "3des":
            k1, k2 = des_key(kc[:7]), des_key(kc[7:14])
            cipher = Cipher(TripleDES(k1 + k2 + k1), modes.CBC(kc[8:16]))
            self.block = 8
        else:
            cipher = Cipher(ARC4(kc), None)
            self.block = 1
        self._ctx = cipher.encryptor() if encrypt else cipher.decryptor()

    def update(self, data: bytes) -> bytes:
        return self._ctx.update(data)


class SecurityContext:
    """The integrity (``cipher`` None) or privacy layer of a session key H(A1), one side's
    view (``client``: this side is the client)."""

    def __init__(self, h_a1: bytes, cipher: str | None, client: bool = True) -> None:
        kic, kis = (hashlib.md5(h_a1 + m).digest() for m in _INT_MAGIC)
        self._my_ki, self._peer_ki = (kic, kis) if client else (kis, kic)
        self._my_seq = self._peer_seq = 0
        self._enc = self._dec = None
        if cipher is not None:
            # H(A1)[0..16] for 3des, des and rc4 (5 and 7 bytes for rc4-40 and rc4-56).
            kcc, kcs = (hashlib.md5(h_a1[:16] + m).digest() for m in _CONF_MAGIC)
            mine, peer = (kcc, kcs) if client else (kcs, kcc)
            self._enc, self._dec = _Cipher(cipher, mine, True), _Cipher(cipher, peer, False)

    @staticmethod
    def _mac(ki: bytes, seq: bytes, message: bytes) -> bytes:
        return hmac.new(ki, seq + message, "md5").digest()[:10]

    def wrap(self, message: bytes) -> bytes:
        seq = struct.pack(">I", self._my_seq)
        self._my_seq += 1
        mac = self._mac(self._my_ki, seq, message)
        if self._enc is None:
            return message + mac + _MESSAGE_TYPE + seq
        pad = b""
        if self._enc.block > 1:
            size = self._enc.block - (len(message) + 10) % self._enc.block
            pad = bytes([size]) * size
        return self._enc.update(message + pad + mac) + _MESSAGE_TYPE + seq

    def unwrap(self, token: bytes) -> bytes:
        if len(token) < 16:
            raise ValueError(f"a DIGEST-MD5 token of {len(token)} bytes (at least 16)")
        body, kind, seq = token[:-6], token[-6:-4], token[-4:]
        if kind != _MESSAGE_TYPE:
            raise ValueError(f"DIGEST-MD5 message type {kind.hex()}, expected 0001")
        if self._dec is None:
            message, mac = body[:-10], body[-10:]
        else:
            if self._dec.block > 1 and len(body) % self._dec.block:
                raise ValueError(f"a DIGEST-MD5 sealed token of {len(body)} bytes is no "
                                 f"whole number of {self._dec.block}-byte blocks")
            plain = self._dec.update(body)
            padded, mac = plain[:-10], plain[-10:]
            size = padded[-1] if self._dec.block > 1 and padded else 0
            if size > self._dec.block or size > len(padded) or \
                    padded[len(padded) - size:] != bytes([size]) * size:
                raise ValueError("DIGEST-MD5 padding is damaged (wrong key or a forged "
                                 "token)")
            message = padded[:len(padded) - size]
        if not hmac.compare_digest(mac, self._mac(self._peer_ki, seq, message)):
            raise ValueError("DIGEST-MD5 MAC mismatch (a damaged or forged token)")
        (number,) = struct.unpack(">I", seq)
        if number != self._peer_seq:
            raise ValueError(f"DIGEST-MD5 sequence number {number}, expected "
                             f"{self._peer_seq} (a token lost, replayed or reordered)")
        self._peer_seq += 1
        return message


class DigestMechanism:
    """The client side of DIGEST-MD5 with ``token`` at ``protection``
    (``hbase.rpc.protection``, most wanted first); a ``Mechanism`` of :mod:`rpc.sasl`."""

    name = "DIGEST-MD5"
    auth = AUTH_DIGEST
    user_info = False  # HBase's client sends no user in the connection header with a token

    def __init__(self, token: Token, protection: str, cnonce: str | None = None,
                 ciphers: tuple[str, ...] = CIPHERS) -> None:
        self.token = token
        self.user = token.owner
        self.target = f"cluster {token.cluster!r} ({token.describe()})"
        self.hint = ("; the token expired or the cluster no longer holds its key: run the "
                     "job again so it obtains a new one (tokens live "
                     "hbase.auth.token.max.lifetime, 7 days by default)")
        self._wanted = protection_bits(protection)
        self._cnonce = cnonce or base64.b64encode(secrets.token_bytes(30)).decode()
        self._ciphers = ciphers  # for privacy, most wanted first (of CIPHERS)
        self._expected = ""
        self._h_a1 = b""
        self._cipher: str | None = None
        self._layer: SecurityContext | None = None
        self._started = False
        self.complete = False
        self.qop = 1
        self.max_send = 0

    def step(self, challenge: bytes | None) -> bytes | None:
        if not self._started:
            self._started = True
            return b""
        assert challenge is not None
        if not self._expected:
            return self._respond(parse_directives(challenge))
        got = parse_directives(challenge).get("rspauth", [""])[0]
        if not hmac.compare_digest(got.encode(), self._expected.encode()):
            raise ValueError("the server's rspauth does not match: it does not hold this "
                             "token's key")
        if self.qop != 1:
            self._layer = SecurityContext(self._h_a1, self._cipher)
        self.complete = True
        return None

    def _respond(self, d: dict[str, list[str]]) -> bytes:
        if d.get("algorithm", [""])[0].lower() != "md5-sess" or "nonce" not in d:
            raise ValueError("the DIGEST-MD5 challenge has no nonce or algorithm=md5-sess")
        offered = [q.strip() for v in d.get("qop", ["auth"]) for q in v.split(",")]
        qop = next((QOPS[bit] for bit in self._wanted if QOPS[bit] in offered), None)
        if qop is None:
            names = {bit: name for name, bit in PROTECTIONS.items()}
            theirs = ", ".join(names[b] for b, q in QOPS.items() if q in offered)
            raise ValueError(f"QOP mismatch: rpc_protection asks for "
                             f"{', '.join(names[b] for b in self._wanted)} but the server "
                             f"offers {theirs or 'none'} (its hbase.rpc.protection)")
        self.qop = next(bit for bit, name in QOPS.items() if name == qop)
        realm = d.get("realm", [REALM])[0]
        nonce = d["nonce"][0]
        username = base64.b64encode(self.token.identifier).decode()
        password = base64.b64encode(self.token.password).decode()
        value, self._h_a1 = response_value(username, realm, password, nonce, self._cnonce,
                                           qop, DIGEST_URI)
        self._expected, _ = response_value(username, realm, password, nonce, self._cnonce,
                                           qop, DIGEST_URI, method="")
        maxbuf = int(d.get("maxbuf", [str(MAX_BUFFER)])[0])
        self.max_send = maxbuf - (26 if qop == "auth-conf" else 16)
        parts = []
        if "charset" in d:
            parts.append("charset=utf-8")
        parts += [f'username="{_quote(username)}"', f'realm="{_quote(realm)}"',
                  f'nonce="{_quote(nonce)}"', f"nc={NONCE_COUNT}",
                  f'cnonce="{_quote(self._cnonce)}"', f'digest-uri="{DIGEST_URI}"',
                  f"maxbuf={MAX_BUFFER}", f"response={value}", f"qop={qop}"]
        if qop == "auth-conf":
            theirs_c = [c.strip() for v in d.get("cipher", []) for c in v.split(",")]
            self._cipher = next((c for c in self._ciphers if c in theirs_c), None)
            if self._cipher is None:
                raise ValueError(f"privacy: the server offers the ciphers "
                                 f"{', '.join(theirs_c) or 'none'}; this client has "
                                 f"{', '.join(self._ciphers)}")
            parts.append(f'cipher="{self._cipher}"')
        return ",".join(parts).encode()

    # The two directions share no state: wrap runs under the connection's write lock,
    # unwrap in its reader thread.
    def wrap(self, data: bytes) -> bytes:
        assert self._layer is not None
        return self._layer.wrap(data)

    def unwrap(self, token: bytes) -> bytes:
        assert self._layer is not None
        return self._layer.unwrap(token)


def token_login(token: Token, protection: str, host: str) -> DigestMechanism:
    """DIGEST-MD5 with ``token`` for the server at ``host`` (the same for every server of
    its cluster: a token is no host's)."""
    return DigestMechanism(token, protection)
