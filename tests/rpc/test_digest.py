"""DIGEST-MD5 (``rpc.digest``) against values derived independently of it:

* RFC 2831's worked example (section 4): its response value and ``rspauth``;
* DES key bytes worked out by hand from RFC 2831 section 2.4's "56 bits, 7 per byte, parity
  in the low bit";
* Java's own DIGEST-MD5 server (``com.sun.security.sasl.digest``, the one HBase's servers
  run), made as HBase makes it, at ``auth``, ``auth-int`` and ``auth-conf`` with 3DES and
  RC4: the exchange, then messages of many lengths wrapped each way (padding from 1 to 8
  bytes, sequence numbers running on), Java reading what this client sealed and the
  client reading what Java sealed;
* the token identifier as HBase serializes it, and what a damaged token does.
"""

from __future__ import annotations

import base64
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth.tokens import Token, parse_identifier
from hbase_migrate.rpc.digest import (
    DigestMechanism,
    SecurityContext,
    des_key,
    parse_directives,
    response_value,
)
from hbase_migrate.wal.protobuf import bytes_field, varint_field

ORACLE = Path(__file__).parent / "digest_oracle" / "DigestServer.java"


def identifier(owner: str = "migrate@ALPHA.TEST", key_id: int = 7,
               expires: int = 1_800_000_000_000) -> bytes:
    """An AuthenticationTokenIdentifier as HBase writes it (int32 length, TokenIdentifier)."""
    body = (varint_field(1, 0) + bytes_field(2, owner.encode()) + varint_field(3, key_id)
            + varint_field(4, expires - 3_600_000) + varint_field(5, expires)
            + varint_field(6, 3))
    return struct.pack(">i", len(body)) + body


TOKEN = Token.of("alpha", identifier(), bytes(range(20)), "cluster-id")


def test_rfc_2831_worked_example() -> None:
    # RFC 2831 section 4: chris / secret at elwood.innosoft.com, IMAP.
    args = ("chris", "elwood.innosoft.com", "secret", "OA6MG9tEQGm2hh", "OA6MHXh6VqTrRk",
            "auth", "imap/elwood.innosoft.com")
    assert response_value(*args)[0] == "d388dad90d4bbd760a152321f2143af7"
    assert response_value(*args, method="")[0] == "ea40f60335c427b5527b84dbabcdfffd"


def test_des_key_bytes_by_hand() -> None:
    # 56 bits, 7 to a byte in its high bits, the low bit making the byte's parity odd.
    assert des_key(b"\x00" * 7) == b"\x01" * 8
    assert des_key(b"\xff" * 7) == b"\xfe" * 8
    assert des_key(b"\x80" + b"\x00" * 6) == b"\x80" + b"\x01" * 7
    # 0000001|0000010|0000011|...: 7-bit groups 1..8 of the bits of 0x020610 3... by hand:
    groups = list(range(1, 9))
    bits = 0
    for g in groups:
        bits = bits << 7 | g
    expected = bytes((g << 1) | (bin(g << 1).count("1") + 1) % 2 for g in groups)
    assert des_key(bits.to_bytes(7, "big")) == expected


def test_directives_as_java_writes_them() -> None:
    challenge = (b'realm="default",nonce="a\\"b=c,d",qop="auth-conf,auth-int",'
                 b'charset=utf-8,cipher="3des,rc4,des,rc4-56,rc4-40",algorithm=md5-sess')
    d = parse_directives(challenge)
    assert d["realm"] == ["default"] and d["nonce"] == ['a"b=c,d']
    assert d["qop"] == ["auth-conf,auth-int"] and d["charset"] == ["utf-8"]
    assert d["cipher"] == ["3des,rc4,des,rc4-56,rc4-40"] and d["algorithm"] == ["md5-sess"]


def test_the_identifier_as_hbase_writes_it() -> None:
    assert parse_identifier(identifier()) == ("migrate@ALPHA.TEST", 7,
                                              1_800_000_000_000 - 3_600_000,
                                              1_800_000_000_000)
    assert TOKEN.owner == "migrate@ALPHA.TEST" and TOKEN.key_id == 7
    assert bytes(range(20)).hex() not in repr(TOKEN) + TOKEN.describe()
    with pytest.raises(ValueError, match="says 99 bytes"):
        parse_identifier(struct.pack(">i", 99) + b"\x08\x00")


def test_a_damaged_or_replayed_token_fails() -> None:
    h_a1 = bytes(range(16))
    for cipher in (None, "3des", "rc4"):
        client, server = SecurityContext(h_a1, cipher), SecurityContext(h_a1, cipher, False)
        first, second = client.wrap(b"one"), client.wrap(b"two")
        assert server.unwrap(first) == b"one"
        with pytest.raises(ValueError, match=r"sequence number 0, expected 1|MAC|padding"):
            server.unwrap(first)  # replayed
        damaged = bytearray(second)
        damaged[0] ^= 1
        fresh = SecurityContext(h_a1, cipher, False)
        fresh.unwrap(first)
        with pytest.raises(ValueError, match=r"MAC|padding"):
            fresh.unwrap(bytes(damaged))


def frames(proc: subprocess.Popen[bytes], data: bytes | None = None) -> bytes:
    """Send ``data`` (if any) to the oracle as a frame; its next frame."""
    assert proc.stdin is not None and proc.stdout is not None
    if data is not None:
        proc.stdin.write(struct.pack(">i", len(data)) + data)
        proc.stdin.flush()
    head = proc.stdout.read(4)
    assert len(head) == 4, proc.stderr.read().decode() if proc.stderr else ""
    return proc.stdout.read(struct.unpack(">i", head)[0])


@pytest.mark.parametrize(("protection", "ciphers", "agreed"), [
    ("authentication", ("3des", "rc4"), "auth null"),
    ("integrity", ("3des", "rc4"), "auth-int null"),
    ("privacy", ("3des", "rc4"), "auth-conf high"),  # 3des, Java's first
    ("privacy", ("rc4",), "auth-conf high"),
])
def test_against_javas_digest_md5_server(protection: str, ciphers: tuple[str, ...],
                                         agreed: str) -> None:
    java = shutil.which("java")
    if java is None:
        pytest.skip("no java on PATH")
    password = base64.b64encode(TOKEN.password).decode()
    proc = subprocess.Popen([java, str(ORACLE), password, "auth-conf,auth-int,auth"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        mech = DigestMechanism(TOKEN, protection, ciphers=ciphers)
        first = mech.step(None)
        assert first == b""
        response = mech.step(frames(proc, first))
        assert response is not None and b'digest-uri="null/default"' in response
        if protection == "privacy":  # the cipher Java then seals and opens with
            assert f'cipher="{ciphers[0]}"'.encode() in response
        assert mech.step(frames(proc, response)) is None and mech.complete
        username = base64.b64encode(TOKEN.identifier).decode()
        assert frames(proc).decode() == f"{agreed} {username}"
        if protection == "authentication":
            assert mech.qop == 1
            return
        for size in [1, 5, 6, 7, 8, 9, 13, 14, 15, 16, 100, 4093, 70_000]:
            message = bytes((i * 7 + size) % 251 for i in range(size))
            sealed = mech.wrap(message)
            if protection == "privacy":
                assert size < 8 or message[:8] not in sealed  # sealed, not signed only
            else:
                assert sealed[:size] == message
            assert mech.unwrap(frames(proc, sealed)) == message[::-1]
        frames_end = struct.pack(">i", 0)
        assert proc.stdin is not None
        proc.stdin.write(frames_end)
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        proc.kill()
        proc.wait()
