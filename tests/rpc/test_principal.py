"""The security preamble call (HBASE-28321, ``rpc.principal``) at the socket: the principals
a service may run as, the answer of a server that names one, of one that names a stranger,
of one without security and of one too old to know the call; and the embedded cluster's
answer, as an HBase server without security gives it, its connection serving on. Real
Kerberos against real HBase 2.6.1 is in ``test_principal_real``."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.errors import ConfigError
from hbase_migrate.rpc import principal
from hbase_migrate.rpc.codec import (
    AUTH_SIMPLE,
    CONNECTION_CALL_ID,
    RemoteException,
    ReplyDecoder,
    connection_header,
    encode_call,
    encode_reply,
    preamble,
)
from hbase_migrate.rpc.errors import RpcConnectionError
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.wal.protobuf import string_field
from minihbase.rpc.listener import RpcListener
from tests.rpc.scripted import read_exactly

TWO = ClusterSecurity(auth="kerberos", hbase_principal="hbase/_HOST@R.TEST",
                      hbase_master_principal="hmaster/_HOST@R.TEST")
BOTH = ("hmaster/db-1.example@R.TEST", "hbase/db-1.example@R.TEST")


def test_each_service_has_the_principals_hbases_security_info_gives_it() -> None:
    host = "DB-1.Example"  # HBase lower-cases the host it puts in
    assert principal.candidates(TWO, "ClientMetaService", host) == BOTH
    assert principal.candidates(TWO, "MasterService", host) == BOTH[:1]
    assert principal.candidates(TWO, "ClientService", host) == BOTH[1:]
    assert principal.candidates(TWO, "AdminService", host) == BOTH[1:]
    one = ClusterSecurity(auth="kerberos", hbase_principal="hbase/_HOST@R.TEST")
    assert principal.candidates(one, "ClientMetaService", host) == BOTH[1:]
    fixed = ClusterSecurity(auth="kerberos", hbase_principal="hbase/_HOST",
                            hbase_master_principal="hbase/master.example")
    assert principal.candidates(fixed, "ClientMetaService", "rs") == ("hbase/master.example",
                                                                      "hbase/rs")
    with pytest.raises(ConfigError, match="hbase_master_principal must look like"):
        ClusterSecurity(hbase_master_principal="@R.TEST")


@pytest.fixture()
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    client, server = socket.socketpair()
    client.settimeout(5)
    yield client, server
    client.close()
    server.close()


def answering(server: socket.socket, reply: bytes, close: bool = False) -> threading.Thread:
    """The server side: reads the six bytes of the security preamble, sends ``reply``."""
    seen: list[bytes] = []

    def run() -> None:
        seen.append(read_exactly(server, 6))
        server.sendall(reply)
        if close:  # the client may have hung up and the fixture closed the socket first
            with contextlib.suppress(OSError):
                server.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=run)
    thread.seen = seen  # type: ignore[attr-defined]
    thread.start()
    return thread


def named(who: str) -> bytes:
    return encode_reply(CONNECTION_CALL_ID, string_field(1, who))


def test_the_server_named_is_taken_when_it_is_a_candidate(pair: tuple[socket.socket,
                                                                    socket.socket]) -> None:
    client, server = pair
    thread = answering(server, named(BOTH[1]))
    assert principal.ask_principal(client, "db-1:16020", BOTH) == BOTH[1]
    thread.join()
    assert thread.seen == [b"Securi"]  # type: ignore[attr-defined]


def test_a_realm_less_candidate_takes_the_servers_realm(pair: tuple[socket.socket,
                                                                  socket.socket]) -> None:
    client, server = pair
    answering(server, named("hbase/rs@DEFAULT.TEST"))
    assert principal.ask_principal(client, "rs:1", ("hm/rs", "hbase/rs")) == \
        "hbase/rs@DEFAULT.TEST"


def test_a_principal_that_is_no_candidate_is_refused(pair: tuple[socket.socket,
                                                               socket.socket]) -> None:
    client, server = pair
    answering(server, named("evil/db-1.example@R.TEST"))
    with pytest.raises(SaslError, match=r"server db-1:16020: says it runs as "
                       r"'evil/db-1.example@R.TEST', none of hmaster/db-1.example@R.TEST, "
                       r"hbase/db-1.example@R.TEST: check the cluster's hbase_principal"):
        principal.ask_principal(client, "db-1:16020", BOTH)


def test_a_server_without_security_is_refused(pair: tuple[socket.socket,
                                                        socket.socket]) -> None:
    client, server = pair
    error = RemoteException(principal.SECURITY_NOT_ENABLED,
                            principal.SECURITY_NOT_ENABLED + ": security is not enabled")
    answering(server, encode_reply(CONNECTION_CALL_ID, exception=error))
    with pytest.raises(SaslError, match=r"runs without security .* set auth = \"none\""):
        principal.ask_principal(client, "db-1:16020", BOTH)


def test_a_server_before_hbase_2_6_is_told_apart(pair: tuple[socket.socket,
                                                           socket.socket]) -> None:
    """What ServerRpcConnection.doBadPreambleHandling of HBase before 2.6.0 answers."""
    client, server = pair
    error = RemoteException(principal.FATAL_CONNECTION, principal.FATAL_CONNECTION +
                            ": Expected HEADER=HBas but received HEADER=Secu from x",
                            do_not_retry=True)
    answering(server, encode_reply(CONNECTION_CALL_ID, exception=error), close=True)
    assert principal.ask_principal(client, "db-1:16020", BOTH) is None


def test_a_server_closing_at_once_is_told_apart(pair: tuple[socket.socket,
                                                          socket.socket]) -> None:
    client, server = pair
    answering(server, b"", close=True)
    assert principal.ask_principal(client, "db-1:16020", BOTH) is None


def test_no_answer_is_an_error_within_the_timeout(pair: tuple[socket.socket,
                                                            socket.socket]) -> None:
    client, _ = pair
    client.settimeout(0.2)
    with pytest.raises(RpcConnectionError, match="no answer to the security preamble"):
        principal.ask_principal(client, "db-1:16020", BOTH)


def test_what_is_learned_is_kept_per_server_until_forgotten() -> None:
    principal.remember("a:1", BOTH, BOTH[1])
    assert principal.learned("a:1", BOTH) == BOTH[1]
    assert principal.learned("b:1", BOTH) is None
    principal.remember("a:1", BOTH, None)
    assert principal.learned("a:1", BOTH) is None


def test_the_embedded_cluster_answers_as_a_server_without_security() -> None:
    """SecurityNotEnabledException with call id -1, then the same connection takes the
    preamble, the header and a call (answered: the method is not served)."""
    listener = RpcListener("principal", {"ClientService": {}}).start()
    try:
        host, _, port = listener.address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(b"Securi")
            (size,) = struct.unpack(">i", read_exactly(sock, 4))
            reply, = ReplyDecoder().feed(struct.pack(">i", size) + read_exactly(sock, size))
            assert reply.call_id == CONNECTION_CALL_ID and reply.exception is not None
            assert reply.exception.class_name == \
                "org.apache.hadoop.hbase.ipc.SecurityNotEnabledException"
            sock.sendall(preamble(AUTH_SIMPLE) + connection_header("ClientService", "me")
                         + encode_call(7, "Get", b""))
            (size,) = struct.unpack(">i", read_exactly(sock, 4))
            reply, = ReplyDecoder().feed(struct.pack(">i", size) + read_exactly(sock, size))
            assert reply.call_id == 7 and reply.exception is not None
            assert "ClientService.Get is not served" in reply.exception.stack_trace
    finally:
        listener.stop()
