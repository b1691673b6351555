"""After a step failed on an error the server answered: was a table or family missing?

:func:`explain_missing` asks both clusters (over their client, native or Thrift2; over
Thrift1 when the cluster names no Thrift2 gateway, or when that gateway has no admin calls
as HBase 1.x's) whether every table of the migration and the families it needs are there,
and returns the :class:`~hbase_migrate.cluster.missing.MissingSchemaError` that says which
is not (the step then raises it instead of HBase's terse message), or None.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from thriftpy2.thrift import TApplicationException

from hbase_migrate.cluster.client import Client, Thrift1Gateway
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError
from hbase_migrate.cluster.missing import MissingSchemaError, find_missing
from hbase_migrate.config import ClusterSpec, MigrationSpec
from hbase_migrate.errors import ConfigError, HBaseMigrateError
from hbase_migrate.hbase import open_cluster

log = logging.getLogger(__name__)
Describe = Callable[[str], TableDescriptor | None]
SOURCE_FIX = ("check [[tables]] source in the migration config (a typo?), or create the "
              "table there")
TARGET_FIX = "run prepare to create it like the source table (or check [[tables]] target)"


def no_such_call(exc: ClusterError) -> bool:
    """Whether a Thrift2 gateway answered that it has no such call: HBase 1.x's has no
    admin calls (``tableExists``, ``getTableDescriptor``: ``Invalid method name``, the
    cause of the client's error)."""
    cause = exc.__cause__
    return isinstance(cause, TApplicationException) and \
        cause.type == TApplicationException.UNKNOWN_METHOD


def target_has(spec: MigrationSpec, client: Client, table: str) -> bool:
    """Whether ``table`` exists on the target; a target whose Thrift2 gateway has no admin
    calls (HBase 1.x) is refused: a 1.x gateway stores a family-version delete as a
    whole-family delete, with no error."""
    try:
        return client.table_exists(table)
    except ClusterError as exc:
        if no_such_call(exc):
            raise ConfigError(
                f"target cluster {open_cluster(spec.target).name!r}: an HBase 1.x target is not "
                f"supported (its Thrift2 gateway {client.endpoint} has no admin calls and "
                "writes a family-version delete as a whole-family delete)") from exc
        raise


@contextmanager
def schema_reader(cluster: ClusterSpec) -> Iterator[Describe]:
    """A function giving a table's descriptor on ``cluster``, None when it does not exist:
    over its client where it has one (native, Thrift2 or Bigtable: its handle says), else
    (or when its Thrift2 gateway has no admin calls, as HBase 1.x's) over Thrift1."""
    handle = open_cluster(cluster)
    with ExitStack() as stack:
        t2: Client | None = stack.enter_context(handle.client()) if handle.has_client \
            else None
        opened: list[Thrift1Gateway] = []

        def describe1(table: str) -> TableDescriptor | None:
            if not opened:
                opened.append(stack.enter_context(handle.thrift1(
                    "to look a table up (HBase 1.x's Thrift2 gateway has no admin "
                    "calls)")))
            t1 = opened[0]
            names = set(t1.tables())
            found = table in names or table.removeprefix("default:") in names
            return t1.table_descriptor(table) if found else None

        def describe(table: str) -> TableDescriptor | None:
            nonlocal t2
            if t2 is not None:
                try:
                    return t2.table_descriptor(table) if t2.table_exists(table) else None
                except ClusterError as exc:
                    if not no_such_call(exc):
                        raise
                    log.info("%s: %s; reading table descriptors over Thrift1", t2.endpoint, exc)
                    t2 = None
            return describe1(table)
        yield describe


def check_source(spec: MigrationSpec, describe: Describe) -> None:
    """Raise the error naming the first source table of ``spec`` missing, or lacking a
    family its ``[[tables]] families`` names (before anything is written); ``describe``
    reads the source (:func:`schema_reader`)."""
    endpoints = open_cluster(spec.source).endpoints
    for t in spec.tables:
        found = find_missing(describe, "source", endpoints, t.source,
                             {f.encode() for f in t.families},
                             why="named in [[tables]] families", fix=SOURCE_FIX)
        if found is not None:
            raise found


def explain_missing(spec: MigrationSpec, *, target_made: bool = True
                    ) -> MissingSchemaError | None:
    """The first table or family of ``spec`` missing on the source, or on the target
    (``target_made``: a step after prepare; prepare itself makes the target tables)."""
    with schema_reader(spec.source) as source:
        cache: dict[str, TableDescriptor | None] = {}

        def described(table: str) -> TableDescriptor | None:
            if table not in cache:
                cache[table] = source(table)
            return cache[table]

        src = open_cluster(spec.source).endpoints
        for t in spec.tables:
            named = {f.encode() for f in t.families}
            found = find_missing(described, "source", src, t.source, named,
                                 why="named in [[tables]] families", fix=SOURCE_FIX)
            if found is not None:
                return found
    if not target_made or spec.target.bigtable is not None:  # Bigtable's errors name it
        return None
    with schema_reader(spec.target) as target:
        dst = open_cluster(spec.target).endpoints
        for t in spec.tables:
            desc = cache.get(t.source)
            needed = {f.encode() for f in t.families} or {
                f.name for f in (desc.families if desc else ())}
            found = find_missing(target, "target", dst, t.target, needed,
                                 why=f"of source table {t.source!r}", fix=TARGET_FIX)
            if found is not None:
                return found
    return None


def check_schema(spec: MigrationSpec) -> None:
    """Raise the error naming the first table or family of ``spec`` missing on the source
    or the target (a step after prepare, before it reads or writes)."""
    found = explain_missing(spec)
    if found is not None:
        raise found


def worth_explaining(exc: BaseException) -> bool:
    """Whether a step's error may hide a missing table or family: an error of ours that is
    no configuration error and no outage (a server's answer, a failed range or file)."""
    if not isinstance(exc, HBaseMigrateError) or isinstance(exc, ConfigError):
        return False
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ServiceUnreachableError):
            return False
        seen = seen.__cause__ or seen.__context__
    return True


def explained(spec: MigrationSpec, exc: BaseException, *, target_made: bool = True
              ) -> MissingSchemaError | None:
    """:func:`explain_missing` for a step that raised ``exc`` (None when ``exc`` is not
    worth it, or asking the clusters failed too), its message ending with the call that
    failed."""
    if not worth_explaining(exc):
        return None
    try:
        found = explain_missing(spec, target_made=target_made)
    except Exception:  # the clusters cannot tell: the step's own error stands
        return None
    if found is None:
        return None
    call = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    found.args = (f"{found} (the call that failed: {call[:200]})",)
    return found
