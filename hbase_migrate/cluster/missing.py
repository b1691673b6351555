"""A table or column family a migration needs that a cluster lacks, said in words.

HBase reports these tersely and differently on each path: real HBase's Thrift2 answers a
scan of a missing table with the bare name (``scan big: big``), a batch of puts with
``Failed 1 action: big: 1 time, servers with issues: null``. So the cause is not read from
the message: once a call failed, the cluster is asked whether the table and its families
are there (:func:`find_missing`, over Thrift2 or Thrift1), and a missing one becomes a
:class:`MissingTableError` or :class:`MissingFamilyError` naming the table, the side
(source or target), the cluster and its endpoints, and what to do. Both are configuration
errors: no retry mends them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.errors import ConfigError


class MissingSchemaError(ConfigError):
    """A table or family a migration needs is missing on one side: ``table``, ``side``
    (``source`` or ``target``) and ``endpoints`` (the cluster's ``host:port`` list)."""

    def __init__(self, message: str, *, table: str, side: str, endpoints: str) -> None:
        super().__init__(message)
        self.table, self.side, self.endpoints = table, side, endpoints


class MissingTableError(MissingSchemaError):
    """The table does not exist on that side."""


class MissingFamilyError(MissingSchemaError):
    """The table exists on that side without a column family the migration needs."""


# What find_missing asks a cluster: a table's descriptor, None when it does not exist.
SchemaReader = Callable[[str], TableDescriptor | None]


def where(side: str, endpoints: ClusterEndpoints) -> str:
    """``the source cluster 'name' (thrift2 h:p, thrift h:p)``; for a cluster reached
    natively ``(ZooKeeper h:p/hbase)``."""
    if endpoints.native and endpoints.bootstrap:
        shown = [f"uri {endpoints.uri}"]
    elif endpoints.native:
        shown = [f"ZooKeeper {endpoints.zookeeper}{endpoints.znode_parent}"]
    else:
        shown = [f"thrift2 {endpoints.thrift2}"] if endpoints.thrift2 else []
        shown += [f"thrift {endpoints.thrift}"] if endpoints.thrift else []
    return f"the {side} cluster {endpoints.name!r} ({', '.join(shown)})"


def gateway_list(endpoints: ClusterEndpoints) -> str:
    """Where the cluster was asked: its gateways, or its ZooKeeper quorum when native."""
    if endpoints.native:
        return endpoints.zookeeper or endpoints.uri or ""
    return ",".join(e for e in (endpoints.thrift2, endpoints.thrift) if e)


def _names(families: Collection[bytes]) -> str:
    return ", ".join(repr(f.decode("utf-8", "replace")) for f in sorted(families)) or "none"


def find_missing(describe: SchemaReader, side: str, endpoints: ClusterEndpoints, table: str,
                 families: Collection[bytes], *, why: str, fix: str
                 ) -> MissingSchemaError | None:
    """The error for ``table`` (on ``side``, read with ``describe``) when it is missing or
    lacks one of ``families``; ``why`` says where the families come from ("of the source
    table orders"), ``fix`` what to do when the table is missing."""
    desc = describe(table)
    here, at = where(side, endpoints), gateway_list(endpoints)
    if desc is None:
        return MissingTableError(f"{side} table {table!r} does not exist on {here}: {fix}",
                                 table=table, side=side, endpoints=at)
    have = {f.name for f in desc.families}
    lacking = set(families) - have
    if not lacking:
        return None
    return MissingFamilyError(
        f"{side} table {table!r} on {here} has no column family {_names(lacking)} {why} "
        f"(it has {_names(have)}): add the family to the table (hbase shell: alter "
        f"'{table}', '{sorted(lacking)[0].decode('utf-8', 'replace')}'), or leave it out of "
        "[[tables]] families", table=table, side=side, endpoints=at)
