"""Errors raised while talking to a cluster's ZooKeeper or WAL storage."""

from __future__ import annotations

from hbase_migrate.cluster.retry import Kind
from hbase_migrate.errors import HBaseMigrateError


class ClusterError(HBaseMigrateError):
    """A cluster endpoint cannot be reached, or holds something other than expected.

    Messages name the endpoint (ZooKeeper quorum, WebHDFS URL) and the znode or path;
    ``endpoint`` holds it where the raiser knew it.
    """

    def __init__(self, message: str, *, endpoint: str | None = None) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class ServiceUnreachableError(ClusterError):
    """A service did not answer (connection refused, reset or timed out): an outage, not a
    fault of the request or of the data. ``service`` names its kind for messages ("the
    target gateway"); a long run waits for it to come back (:mod:`hbase_migrate.outage`)."""

    service = "service"
    kind = Kind.OUTAGE  # NEVER: a subclass that stops a run the same way but is no outage


class GatewayUnreachableError(ServiceUnreachableError):
    """A Thrift gateway did not answer (connection refused, reset or timed out) on any of
    the client's attempts. The message names the gateway (``thrift``/``thrift2``), its
    ``host:port``, the call, the attempts and the last transport error."""

    service = "gateway"


class WebHdfsUnreachableError(ServiceUnreachableError):
    """The WebHDFS endpoint (a NameNode or an HttpFS gateway) did not answer, or answered
    that it cannot serve yet (safe mode, a standby NameNode)."""

    service = "WebHDFS"


class ZooKeeperUnreachableError(ServiceUnreachableError):
    """No ZooKeeper session could be had, or the session was lost during a call."""

    service = "ZooKeeper"


class ZooKeeperNeverAnsweredError(ZooKeeperUnreachableError):
    """No server of the quorum has given a session since this process started: a wrong
    host or port looks like that, so callers fail at once instead of waiting it out, and a
    scheduler does not retry the step."""

    at_once = True


class ZkPayloadError(ClusterError):
    """A znode payload is not the HBase encoding it should be (metadata prefix, ``PBUF``,
    protobuf message)."""


class MigrationLockedError(ClusterError):
    """Another process holds the lock of a migration, and waiting for it timed out."""

    def __init__(self, migration: str, holder: str | None, path: str, timeout: float,
                 detail: str = "") -> None:
        self.migration = migration
        self.holder = holder
        self.path = path
        who = f"held by {holder!r}" if holder else "held by another process"
        more = f"; {detail}" if detail else ""
        super().__init__(
            f"migration {migration!r} is locked ({who}, lock {path}){more}; "
            f"gave up after waiting {timeout:g} s: is another replay of it still running?"
        )
