"""HBase delegation tokens: what one is, and the token each cluster's connections use in this
process.

A token is what HBase's ``TokenProvider`` coprocessor issues to a Kerberos-authenticated
client (``AuthenticationService.GetAuthenticationToken``): an identifier, the serialized
``AuthenticationTokenIdentifier`` (an int32-BE length, then the ``TokenIdentifier`` message of
``Authentication.proto``: 1 kind, 2 username, 3 key_id, 4 issue_date, 5 expiration_date,
6 sequence_number), and a password, the HMAC of the identifier under the cluster's current
key. A connection authenticates with it by SASL DIGEST-MD5 (:mod:`hbase_migrate.rpc.digest`).

The password is a secret: it is kept out of ``repr``, logs, errors and the ledger; what
messages name is the owner, the key id and the expiry.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass, field

from hbase_migrate.timeutil import format_time
from hbase_migrate.wal.protobuf import Message, ProtobufError

HBASE_AUTH_TOKEN = "HBASE_AUTH_TOKEN"  # the token kind HBase's client and servers name


@dataclass(frozen=True)
class Token:
    """One delegation token of cluster ``cluster`` (``service``: the cluster id HBase puts
    in it)."""

    cluster: str
    identifier: bytes = field(repr=False)
    password: bytes = field(repr=False)
    service: str = ""
    owner: str = ""
    key_id: int = 0
    issued_ms: int = 0
    expires_ms: int = 0

    @classmethod
    def of(cls, cluster: str, identifier: bytes, password: bytes, service: str = "") -> Token:
        """A token from the bytes HBase sent; ValueError when the identifier is not one."""
        owner, key_id, issued, expires = parse_identifier(identifier)
        return cls(cluster, identifier, password, service, owner, key_id, issued, expires)

    def describe(self) -> str:
        """What messages say of it (never the password)."""
        expiry = f", expires {format_time(self.expires_ms)}" if self.expires_ms else ""
        return f"token of {self.owner} (key {self.key_id}{expiry})"


def parse_identifier(identifier: bytes) -> tuple[str, int, int, int]:
    """``(owner, key id, issue ms, expiration ms)`` of a serialized
    AuthenticationTokenIdentifier."""
    if len(identifier) < 4:
        raise ValueError(f"a token identifier of {len(identifier)} bytes (expected an int32 "
                         "length and a TokenIdentifier message)")
    (size,) = struct.unpack_from(">i", identifier)
    if size != len(identifier) - 4:
        raise ValueError(f"a token identifier says {size} bytes but holds "
                         f"{len(identifier) - 4}")
    try:
        m = Message(identifier[4:], "TokenIdentifier")
        kind = m.req_int(1, "kind")
        owner = m.req_bytes(2, "username").decode("utf-8", "replace")
        key_id = m.req_int(3, "key_id")
        issued, expires = m.opt_int(4) or 0, m.opt_int(5) or 0
    except ProtobufError as exc:
        raise ValueError(f"a token identifier that is no TokenIdentifier: {exc}") from None
    if kind != 0:
        raise ValueError(f"a token identifier of kind {kind}, expected {HBASE_AUTH_TOKEN} (0)")
    return owner, key_id, issued, expires


_lock = threading.Lock()
_tokens: dict[str, Token] = {}


def use_token(token: Token) -> None:
    """From now on this process's connections to ``token.cluster`` authenticate with it
    (DIGEST-MD5) instead of Kerberos."""
    with _lock:
        _tokens[token.cluster] = token


def token_for(cluster: str) -> Token | None:
    with _lock:
        return _tokens.get(cluster)


def forget_tokens(*clusters: str) -> None:
    """Back to Kerberos for ``clusters`` (none named: every cluster)."""
    with _lock:
        for cluster in clusters or list(_tokens):
            _tokens.pop(cluster, None)
