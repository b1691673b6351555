"""HBase's own RPC with Kerberos against the session's secured real HBase 2.6.1
(``secured_stack``: its own KDC and realm; ``hbase.rpc.protection`` =
``privacy,integrity,authentication``, so its servers offer every level and
``cluster.json``'s ``rpc_protection`` lists them, privacy first).

* The RPC servers refuse a connection without SASL (the proof they are secured).
* The cluster's own setting agrees on privacy with the master; each single level is agreed
  as asked.
* ``connect()`` (the native client) at ``authentication``, ``integrity`` and ``privacy``:
  the master's calls (a table created with split keys, its descriptor, namespaces), the
  region servers' (writes and raw scans of every cell type, a flush through AdminService),
  each cross-checked through the Thrift2 gateway (SASL, its own QOP).
* A service principal the KDC does not know is one line naming it, raised at once through
  the client protocol (a refusal is not retried).
* No key of the keytab appears in the log.
* The lifecycle with both clusters native over Kerberos (at privacy) ends in a match.
* What HBase cannot show, against a GSSAPI acceptor of HBase's framing holding the stack's
  HBase service key: privacy tokens sealed on the wire (nothing of the header readable),
  integrity tokens signed only, and a QOP the server does not offer refused in one line
  naming both sides.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import gssapi
import pytest

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.hbase.connect import connect
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.codec import decode_call, encode_reply
from hbase_migrate.rpc.connection import Connection
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.messages import get_response
from hbase_migrate.rpc.sasl import GssapiMechanism, SaslError, gssapi_login
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType, cell_order
from realstack.hbase import RealHBase
from tests.realstack import fixtures
from tests.realstack.fixtures import (
    borrowed,
    keytab_keys,
    leaks,
    stack_endpoints,
)
from tests.rpc.cells import FAMILIES, ROWS, SPLITS, every_kind
from tests.rpc.scripted import read_exactly
from tests.rpc.secured import lifecycle_native, master

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
TABLE = "sasl_cells"
CELL = Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")


@pytest.fixture(scope="module")
def secured(secured_stack: RealHBase) -> Iterator[RealHBase]:
    yield from borrowed(secured_stack)


@pytest.fixture(scope="module")
def endpoints(secured: RealHBase) -> ClusterEndpoints:
    found = stack_endpoints(secured)
    assert found.security is not None and found.security.kerberos
    assert found.security.rpc_protection == fixtures.SECURED_PROTECTION
    return found


def test_the_rpc_servers_refuse_simple_auth(endpoints: ClusterEndpoints) -> None:
    conn = Connection(*master(endpoints), service="MasterService", call_timeout=20)
    try:
        with pytest.raises(RemoteError) as refused:
            conn.call("IsMasterRunning", b"")
    finally:
        conn.close()
    assert "AccessDeniedException" in refused.value.class_name


def agreed(endpoints: ClusterEndpoints, protection: str | None = None) -> int:
    """The QOP bit the master agrees on with a client asking for ``protection`` (the
    cluster's own setting when None), after one call through the security layer."""
    assert endpoints.security is not None
    security = replace(endpoints.security,
                       rpc_protection=protection or endpoints.security.rpc_protection)
    made: list[GssapiMechanism] = []

    def mechanism(host: str) -> GssapiMechanism:
        made.append(gssapi_login(security, endpoints.name, "master", host))
        return made[0]

    conn = Connection(*master(endpoints), service="MasterService", mechanism=mechanism)
    try:
        conn.call("IsMasterRunning", b"")
    finally:
        conn.close()
    return made[0].qop


def test_each_protection_is_agreed_with_the_master(endpoints: ClusterEndpoints) -> None:
    assert agreed(endpoints) == 4  # the cluster's list, privacy first
    assert [agreed(endpoints, level) for level in ("authentication", "integrity", "privacy")] \
        == [1, 2, 4]


@pytest.mark.parametrize("protection", ["authentication", "integrity", "privacy"])
def test_native_over_kerberos_cross_checked_through_thrift2(
        endpoints: ClusterEndpoints, secured: RealHBase, protection: str,
        caplog: pytest.LogCaptureFixture) -> None:
    assert endpoints.security is not None
    caplog.set_level(logging.DEBUG)
    table = f"{TABLE}_{protection}"
    native_endpoints = replace(endpoints, client="native", security=replace(
        endpoints.security, rpc_protection=protection))
    with connect(native_endpoints, ClientSettings()) as native, \
            Thrift2Client(endpoints.thrift2 or "", **endpoints.client_auth) as t2:
        assert isinstance(native, NativeCluster)  # connect() gives the native client
        native.create_table(TableDescriptor(table, FAMILIES), SPLITS)
        assert native.table_exists(table) and t2.table_exists(table)
        assert native.table_descriptor(table) == t2.table_descriptor(table)
        assert "default" in native.namespaces()
        assert [r.start_key for r in native.regions(table)] == [b"", *SPLITS]
        written = every_kind(ROWS)
        native.write_cells(table, written)
        raw = [c for piece in native.scan(table, raw=True) for c in piece]
        assert raw == sorted(written, key=cell_order)
        visible = [c for piece in native.scan(table) for c in piece]
        assert visible == [c for piece in t2.scan(table) for c in piece]
        assert visible and all(c.type == CellType.PUT for c in visible)
        # The other way: what Thrift2 writes, the native client reads.
        extra = [c._replace(row=b"t2-" + c.row) for c in written if c.type == CellType.PUT]
        t2.put_cells(table, extra)
        assert native.get(table, b"t2-a") == sorted(
            (c for c in extra if c.row == b"t2-a"), key=cell_order)
        native.admin.flush(table)  # AdminService on the region server, over SASL
        assert [c for piece in native.scan(table) for c in piece] == \
            [c for piece in t2.scan(table) for c in piece]
    assert not leaks(caplog.text, keytab_keys(secured.kdc, secured.data_dir / "client.keytab")
                     if secured.kdc else [])


def test_an_unknown_service_principal_is_one_line(endpoints: ClusterEndpoints) -> None:
    assert endpoints.security is not None
    wrong = replace(endpoints.security, hbase_principal="hbase/nohost@" +
                    endpoints.security.hbase_principal.partition("@")[2])
    with pytest.raises(SaslError) as unknown:
        Connection(*master(endpoints), service="MasterService", security=wrong,
                   cluster=endpoints.name)
    message = str(unknown.value)
    assert "\n" not in message and " to hbase/nohost@" in message
    assert "not found in Kerberos database" in message
    assert endpoints.security.principal and endpoints.security.principal in message
    # Through the client protocol: the master's and the region servers' calls fail at once
    # with that line (a refusal is not retried, nor taken for an outage).
    began = time.monotonic()
    with connect(replace(endpoints, client="native", security=wrong)) as native:
        with pytest.raises(SaslError, match="hbase/nohost@"):
            native.table_exists(TABLE)
        with pytest.raises(SaslError, match="hbase/nohost@"):
            native.get(TABLE, b"a")
    assert time.monotonic() - began < 20


# --- what HBase cannot show, with real Kerberos: a GSSAPI acceptor of HBase's framing --------


class Acceptor:
    """The server side of HBase's SASL framing with python-gssapi as ``hbase/localhost``
    from the stack's service keytab: it offers ``offer`` (QOP bits), then reads the wrapped
    connection header and one call, and answers the call with a wrapped reply. Keeps the
    raw bytes it received after negotiation (a client that hangs up ends it early)."""

    def __init__(self, keytab: str, offer: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.creds = gssapi.Credentials(usage="accept", store={b"keytab": keytab.encode()})
        self.offer = offer
        self.seen: dict[str, Any] = {}
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _token(self, conn: socket.socket) -> bytes:
        (size,) = struct.unpack(">i", read_exactly(conn, 4))
        return read_exactly(conn, size)

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, contextlib.suppress(EOFError, OSError):
            self.seen["preamble"] = read_exactly(conn, 6)
            ctx = gssapi.SecurityContext(creds=self.creds, usage="accept")
            while not ctx.complete:
                out = ctx.step(self._token(conn)) or b""
                conn.sendall(struct.pack(">ii", 0, len(out)) + out)
            assert self._token(conn) == b""  # the client's empty token, context made
            offer = ctx.wrap(struct.pack(">I", self.offer << 24 | 1 << 16), False).message
            conn.sendall(struct.pack(">ii", 0, len(offer)) + offer)
            (word,) = struct.unpack(">I", ctx.unwrap(self._token(conn)).message)
            self.seen["qop"] = word >> 24
            self.seen["client"] = str(ctx.initiator_name)
            plain, raw, sealed = b"", b"", []
            while True:  # the header and one call, each int32-length framed
                size = struct.unpack_from(">i", plain)[0] if len(plain) >= 4 else -1
                if size >= 0 and len(plain) >= 4 + size:
                    if "header" not in self.seen:
                        self.seen["header"], plain = plain[4 : 4 + size], plain[4 + size :]
                        continue
                    call = decode_call(plain[4 : 4 + size])
                    break
                token = self._token(conn)
                raw += token
                result = ctx.unwrap(token)
                sealed.append(result.encrypted)
                plain += result.message
            self.seen["raw"], self.seen["sealed"] = raw, sealed
            reply = encode_reply(call.call_id, *get_response([CELL]))
            wrapped = ctx.wrap(reply, self.seen["qop"] == 4).message
            conn.sendall(struct.pack(">i", len(wrapped)) + wrapped)
            time.sleep(2)


@pytest.mark.parametrize(("protection", "qop"), [("privacy", 4), ("integrity", 2)])
def test_wrapping_with_real_kerberos(secured: RealHBase, endpoints: ClusterEndpoints,
                                     protection: str, qop: int) -> None:
    """The client's GSSAPI with the cluster's principal and keytab against an acceptor
    holding the HBase service key: the QOP agreed, every frame sealed (privacy: nothing of
    the header readable on the wire) or signed (integrity), the reply unwrapped."""
    assert endpoints.security is not None
    acceptor = Acceptor(str(secured.data_dir / "service.keytab"), 1 | 2 | 4)
    security = replace(endpoints.security, rpc_protection=protection)
    conn = Connection("127.0.0.1", acceptor.port, security=security, cluster=endpoints.name)
    try:
        reply = conn.call("Get", b"\x0a\x00")
    finally:
        conn.close()
        acceptor.listener.close()
    seen = acceptor.seen
    assert seen["preamble"] == b"HBas\x00\x51" and seen["qop"] == qop
    assert seen["client"] == security.principal
    assert security.principal and security.principal.encode() in seen["header"]
    assert all(seen["sealed"]) if qop == 4 else not any(seen["sealed"])
    assert (b"ClientService" in seen["raw"]) is (qop == 2)
    assert reply.call_id == 0 and reply.cell_block


def test_a_protection_the_server_does_not_offer_is_one_line(
        endpoints: ClusterEndpoints, secured: RealHBase) -> None:
    assert endpoints.security is not None
    acceptor = Acceptor(str(secured.data_dir / "service.keytab"), 1)  # authentication only
    private = replace(endpoints.security, rpc_protection="privacy")
    try:
        with pytest.raises(SaslError) as refused:
            Connection("127.0.0.1", acceptor.port, security=private, cluster=endpoints.name)
    finally:
        acceptor.listener.close()
    message = str(refused.value)
    assert "\n" not in message
    assert "QOP mismatch: rpc_protection asks for privacy but the server offers " \
           "authentication" in message
    assert endpoints.security.principal and endpoints.security.principal in message
    assert "hbase/localhost@" in message


# --- the lifecycle, both clusters native over Kerberos ---------------------------------------


def test_lifecycle_native_over_kerberos(secured: RealHBase, endpoints: ClusterEndpoints,
                                        tmp_path: Path) -> None:
    """prepare, the ``scan`` copy under a live writer, replay from the real WALs (read over
    SPNEGO WebHDFS) and validate, with both clusters' client native (their cluster.json
    names no gateway; its RPC protection list agrees on privacy); Thrift2 with SASL checks
    the target cell for cell."""
    lifecycle_native(secured, endpoints, tmp_path, "sasl_life")
