"""Errors raised while talking to a cluster's ZooKeeper or WAL storage."""

from __future__ import annotations

from hbase_migrate.errors import HBaseMigrateError


class ClusterError(HBaseMigrateError):
    """A cluster endpoint cannot be reached, or holds something other than expected.

    Messages name the endpoint (ZooKeeper quorum, WebHDFS URL) and the znode or path.
    """


class GatewayUnreachableError(ClusterError):
    """A Thrift gateway did not answer (connection refused, reset or timed out) on any of
    the client's attempts. The message names the gateway (``thrift``/``thrift2``), its
    ``host:port``, the call, the attempts and the last transport error."""


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
