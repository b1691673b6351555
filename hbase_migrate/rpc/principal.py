"""Which Kerberos principal an HBase server runs as, and the preamble call that asks it.

HBase names a service's principal by configuration: ``hbase.master.kerberos.principal`` for
the master's services, ``hbase.regionserver.kerberos.principal`` for the region servers'
(``SecurityInfo`` of HBase branch-2.6). ``ClientMetaService``, the registry's, is served by
both, so its connection has two candidates. When they differ (with ``_HOST`` put in), HBase
2.6.0 and 3.0.0-beta-1 on ask the server first (HBASE-28321: ``RpcConnection
.getServerPrincipals``, ``BlockingRpcConnection.chooseServerPrincipal``,
``NettyRpcConnection``; ``RpcClient.SECURITY_PREAMBLE_HEADER``; the server's
``ServerRpcConnection.processPreamble`` and ``doSecurityPreambleResponse``;
``SecurityPreamableResponse`` in ``RPC.proto``)::

    client  "Securi"                         (six bytes, in place of "HBas" version auth)
    server  int32-BE total length | varint length | ResponseHeader {call_id -1}
            | varint length | SecurityPreamableResponse {1 server_principal}
            then reads a preamble again on the same connection
    server without security: the same frame with ResponseHeader.exception
            SecurityNotEnabledException (the connection goes on)
    server before HBASE-28321: FatalConnectionException "Expected HEADER=HBas but
            received HEADER=Secu..." and the connection closed

The answer must be one of the candidates (else the server is refused, as HBase does); the
connection then negotiates GSSAPI with it. A server that runs without security is refused
(this cluster says Kerberos; HBase falls back to SIMPLE only where allowed). A server too
old to know the call is reconnected to with the service's first candidate (HBase's client
fails the call there). A principal learned is kept per server until a negotiation with it
fails (HBase's ``lastSucceededServerPrincipal``).
"""

from __future__ import annotations

import threading

from hbase_migrate.cluster.auth.security import ClusterSecurity, service_principal
from hbase_migrate.rpc.codec import CONNECTION_CALL_ID, Reply, ReplyDecoder
from hbase_migrate.rpc.errors import RpcConnectionError, RpcFrameError
from hbase_migrate.rpc.sasl import SaslError
from hbase_migrate.rpc.tls import Stream
from hbase_migrate.wal.protobuf import Message, ProtobufError

SECURITY_PREAMBLE = b"Securi"
SECURITY_NOT_ENABLED = "org.apache.hadoop.hbase.ipc.SecurityNotEnabledException"
FATAL_CONNECTION = "org.apache.hadoop.hbase.ipc.FatalConnectionException"
# The services of HBase's master principal; ClientMetaService has both; others the region
# servers' (SecurityInfo).
MASTER_SERVICES = frozenset({"MasterService", "RegionServerStatusService", "HbckService",
                             "LockService"})
BOTH_SERVICES = frozenset({"ClientMetaService"})

_learned: dict[tuple[str, tuple[str, ...]], str] = {}
_lock = threading.Lock()


def principal_name(pattern: str, host: str) -> str:
    """``pattern`` with ``_HOST`` replaced by ``host`` (lower case, as HBase does)."""
    service, server_host = service_principal(pattern, host.lower())
    realm = pattern.partition("@")[2]
    return f"{service}/{server_host}" + (f"@{realm}" if realm else "")


def candidates(security: ClusterSecurity, service: str, host: str) -> tuple[str, ...]:
    """The principals a server at ``host`` may run ``service`` as, master's first."""
    master = principal_name(security.hbase_master_principal or security.hbase_principal, host)
    region = principal_name(security.hbase_principal, host)
    if service in MASTER_SERVICES:
        return (master,)
    if service in BOTH_SERVICES:
        return tuple(dict.fromkeys((master, region)))
    return (region,)


def learned(server: str, names: tuple[str, ...]) -> str | None:
    with _lock:
        return _learned.get((server, names))


def remember(server: str, names: tuple[str, ...], principal: str | None) -> None:
    """Keep the principal a negotiation with ``server`` succeeded with (None: forget)."""
    with _lock:
        if principal is None:
            _learned.pop((server, names), None)
        else:
            _learned[(server, names)] = principal


def _matches(told: str, candidate: str) -> bool:
    """A candidate without a realm takes the server's name in any realm (the default)."""
    return told == candidate or ("@" not in candidate and told.partition("@")[0] == candidate)


def ask_principal(stream: Stream, server: str, names: tuple[str, ...]) -> str | None:
    """Send the security preamble on ``stream`` (nothing sent before; its timeout bounds
    the wait) and return the principal the server names, one of ``names``; None when the
    server does not know the preamble (HBase before 2.6.0: it closed the connection)."""
    decoder = ReplyDecoder(server)
    try:
        stream.sendall(SECURITY_PREAMBLE)
        replies: list[Reply] = []
        while not replies:
            data = stream.recv(1 << 16)
            if not data:
                return None
            replies = decoder.feed(data)
    except TimeoutError:
        raise RpcConnectionError(f"server {server}: no answer to the security preamble "
                                 f"(asking its principal) within {stream.gettimeout():g} s",
                                 server=server) from None
    except OSError as exc:
        raise RpcConnectionError(f"server {server}: the security preamble (asking its "
                                 f"principal) broke: {exc.strerror or exc}",
                                 server=server) from None
    reply = replies[0]
    if reply.exception is not None:
        name, trace = reply.exception.class_name, reply.exception.stack_trace
        if name == FATAL_CONNECTION and "Expected HEADER=" in trace:
            return None
        if name == SECURITY_NOT_ENABLED:
            raise SaslError(f"server {server}: runs without security (it answered the "
                            "security preamble with SecurityNotEnabledException) and this "
                            "cluster's security says auth = \"kerberos\"; set auth = "
                            "\"none\"", endpoint=server)
        first = trace.strip().splitlines()[0] if trace.strip() else name
        raise SaslError(f"server {server}: the security preamble was refused: {first}",
                        endpoint=server)
    if reply.call_id != CONNECTION_CALL_ID or reply.response is None:
        raise RpcFrameError("the answer to the security preamble has call id "
                            f"{reply.call_id} and no SecurityPreamableResponse",
                            offset=reply.offset, call_id=reply.call_id, server=server)
    try:
        told = Message(reply.response, "SecurityPreamableResponse").opt_str(1) or ""
    except ProtobufError as exc:
        raise RpcFrameError(f"SecurityPreamableResponse: {exc}", offset=reply.offset,
                            call_id=reply.call_id, server=server) from None
    chosen = next((c for c in names if _matches(told, c)), None)
    if chosen is None:
        raise SaslError(f"server {server}: says it runs as {told!r}, none of "
                        f"{', '.join(names)}: check the cluster's hbase_principal and "
                        "hbase_master_principal", endpoint=server)
    return told
