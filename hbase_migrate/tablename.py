"""HBase table names: ``[namespace:]qualifier``, checked and rendered as HBase does.

A neutral module below ``wal/`` and ``cluster/``: the WAL layer renders the table names it
reads with ``table_name``, the clients and the embedded cluster check and split names with
``split_table_name`` and ``normalize_table_name``.
"""

from __future__ import annotations

import re

from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.errors import HBaseMigrateError

DEFAULT_NAMESPACE = "default"

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_]+$")
_QUALIFIER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class InvalidTableNameError(HBaseMigrateError):
    """A table name that HBase would refuse."""


def split_table_name(name: str) -> tuple[str, str]:
    """``"ns:t"`` -> ``("ns", "t")``; a name without namespace is in ``default``."""
    namespace, sep, qualifier = name.partition(":")
    if not sep:
        namespace, qualifier = DEFAULT_NAMESPACE, name
    if not _NAMESPACE_RE.match(namespace) or not _QUALIFIER_RE.match(qualifier):
        raise InvalidTableNameError(
            f"illegal table name {name!r}: expected [namespace:]qualifier with namespace "
            "[A-Za-z0-9_]+ and qualifier [A-Za-z0-9_][A-Za-z0-9_.-]*"
        )
    return namespace, qualifier


def normalize_table_name(name: str) -> str:
    """The name as HBase prints it: the default namespace is omitted."""
    namespace, qualifier = split_table_name(name)
    return qualifier if namespace == DEFAULT_NAMESPACE else f"{namespace}:{qualifier}"


def table_name(raw: bytes | str) -> str:
    """The one rendering of a table name read from a WAL (or given as text): as HBase prints
    it, ``default:`` omitted, bytes as ``Bytes.toStringBinary``; a name HBase would refuse
    is kept as rendered, so it can still be reported."""
    text = to_string_binary(raw) if isinstance(raw, bytes) else raw
    try:
        return normalize_table_name(text)
    except InvalidTableNameError:
        return text


def table_string(namespace: bytes, qualifier: bytes) -> str:
    """``ns:t``, the default namespace left out (``TableName.getNameAsString``)."""
    name = qualifier if namespace in (b"", b"default") else namespace + b":" + qualifier
    return name.decode("utf-8", "surrogateescape")
