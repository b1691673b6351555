"""Target schema: the source table's column families and region split points, copied.

A target created with the source's split points has the same region boundaries, so copies,
replays and range checksums line up region by region on both sides.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.tablename import split_table_name

log = logging.getLogger(__name__)


class SchemaMismatchError(HBaseMigrateError):
    """The target table exists with column families that cannot hold the source's data."""


def split_points(client: Client, table: str) -> list[bytes]:
    """The start keys of every region but the first, in order."""
    return [r.start_key for r in client.regions(table) if r.start_key]


def copy_schema(source: Client, target: Client, table: str,
                target_table: str | None = None, *,
                described: TableDescriptor | None = None) -> TableDescriptor:
    """Create ``target_table`` on the target like ``table`` on the source (families with
    VERSIONS, TTL, scope, compression, bloom; same split points). An existing target table
    is accepted when it has every source family with at least as many versions and a TTL no
    shorter; otherwise :class:`SchemaMismatchError` names the family and setting.
    ``described``: the source table's descriptor, when read otherwise (HBase 1.x's Thrift2
    gateway has no ``getTableDescriptor``)."""
    target_table = target_table or table
    desc = described or source.table_descriptor(table)
    if target.table_exists(target_table):
        existing = target.table_descriptor(target_table)
        _check_compatible(desc, existing, target.endpoint)
        return existing
    splits = split_points(source, table)
    wanted = replace(desc, name=target_table)
    namespace, _ = split_table_name(target_table)
    if namespace not in target.namespaces():  # HBase creates tables in existing ones only
        target.create_namespace(namespace)
        log.info("created namespace %s on %s", namespace, target.endpoint)
    target.create_table(wanted, splits)
    log.info("created %s on %s with %d families and %d split points",
             target_table, target.endpoint, len(desc.families), len(splits))
    return wanted


def _check_compatible(source: TableDescriptor, target: TableDescriptor, where: str) -> None:
    for fam in source.families:
        have = target.family(fam.name)
        name = fam.name.decode("utf-8", "replace")
        if have is None:
            raise SchemaMismatchError(
                f"{where}: table {target.name} lacks column family {name!r} of "
                f"source table {source.name}")
        if have.max_versions < fam.max_versions:
            raise SchemaMismatchError(
                f"{where}: {target.name}:{name} keeps {have.max_versions} versions, the source "
                f"keeps {fam.max_versions}; older versions would be lost")
        if have.ttl < fam.ttl:
            raise SchemaMismatchError(
                f"{where}: {target.name}:{name} has TTL {have.ttl}s, shorter than the "
                f"source's {fam.ttl}s; cells would expire early")
