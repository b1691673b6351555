"""Delegation tokens over HBase's RPC: ``AuthenticationService`` of HBase's
``TokenProvider`` coprocessor, called as HBase's own client calls it
(``ClientTokenUtil.obtainToken``: the coprocessor endpoint of ``hbase:meta``'s region holding
the empty row), through ``ClientService.ExecService`` (``Client.proto``)::

    CoprocessorServiceRequest   1 region (RegionSpecifier)  2 call
    CoprocessorServiceCall      1 row  2 service_name  3 method_name  4 request
    CoprocessorServiceResponse  1 region  2 value (NameBytesPair: the response message)
    GetAuthenticationTokenResponse  1 token: 1 identifier  2 password  3 service
    WhoAmIResponse              1 username  2 auth_method

Only a Kerberos-authenticated connection is given a token. A cluster whose regions do not
load ``TokenProvider`` answers ``UnknownProtocolException`` ("No registered coprocessor
service found for AuthenticationService"): it issues no tokens, and its clients
keep logging in from their keytab.
"""

from __future__ import annotations

import logging

from hbase_migrate.cluster.auth.tokens import Token
from hbase_migrate.rpc.cluster import NativeCluster
from hbase_migrate.rpc.errors import RemoteError
from hbase_migrate.rpc.messages import decode_name_bytes_pair, region_specifier
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field

log = logging.getLogger(__name__)

META_REGION = b"hbase:meta,,1"  # the first region of hbase:meta: it holds the empty row
# HBase names its own endpoints (package hbase.pb) by their short name
# (CoprocessorRpcUtils.getServiceName), both when a region registers one and in the call.
SERVICE = "AuthenticationService"
NO_SERVICE = "org.apache.hadoop.hbase.exceptions.UnknownProtocolException"


def exec_service_request(region: bytes, row: bytes, service: str, method: str,
                         request: bytes) -> bytes:
    call = (bytes_field(1, row) + string_field(2, service) + string_field(3, method)
            + bytes_field(4, request))
    return bytes_field(1, region_specifier(region)) + bytes_field(2, call)


def exec_service_value(response: bytes) -> bytes:
    """The endpoint's response message of a CoprocessorServiceResponse."""
    value = Message(response, "CoprocessorServiceResponse").req_bytes(2, "value")
    return decode_name_bytes_pair(value)[1]


def call_endpoint(cluster: NativeCluster, method: str) -> bytes:
    """``AuthenticationService.<method>`` on the meta region's server (its location read
    once more from ZooKeeper when the region moved)."""
    request = exec_service_request(META_REGION, b"", SERVICE, method, b"")
    for attempt in (1, 2):
        conn = cluster.data.pool.get(*cluster.data.locator.meta_server())
        try:
            reply = conn.call("ExecService", request)
        except RemoteError as exc:
            if attempt == 1 and exc.class_name != NO_SERVICE and exc.retryable:
                cluster.data.locator.forget_meta()
                continue
            raise
        return exec_service_value(reply.response or b"")
    raise AssertionError("unreachable")


def obtain_token(cluster: NativeCluster, name: str) -> Token | None:
    """A delegation token of cluster ``name`` for the principal ``cluster`` is
    authenticated as (Kerberos); None, with one info line, when the cluster issues none."""
    try:
        response = call_endpoint(cluster, "GetAuthenticationToken")
    except RemoteError as exc:
        if exc.class_name != NO_SERVICE:
            raise
        log.info("cluster %r issues no delegation tokens (server %s: no TokenProvider "
                 "coprocessor, %s); Spark executors log in from the keytab", name,
                 exc.server, exc.class_name.rpartition(".")[2])
        return None
    token = Message(response, "GetAuthenticationTokenResponse").opt_bytes(1)
    if not token:
        raise ValueError(f"cluster {name!r}: GetAuthenticationToken answered without a token")
    m = Message(token, "Token")
    return Token.of(name, m.opt_bytes(1) or b"", m.opt_bytes(2) or b"",
                    (m.opt_bytes(3) or b"").decode("utf-8", "replace"))


def who_am_i(cluster: NativeCluster) -> tuple[str, str]:
    """``(user, authentication method)`` the server holding meta knows this client as
    (``KERBEROS``, ``TOKEN``, ...)."""
    m = Message(call_endpoint(cluster, "WhoAmI"), "WhoAmIResponse")
    return m.opt_str(1) or "", m.opt_str(2) or ""
