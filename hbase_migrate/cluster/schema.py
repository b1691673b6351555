"""Table and namespace descriptors as HBase's master sends and takes them (``HBase.proto``,
branch-2.6), mapped to the project's ``TableDescriptor`` / ``FamilyDescriptor``::

    TableName            1 namespace  2 qualifier                          (bytes)
    BytesBytesPair       1 first  2 second                                 (bytes)
    NameStringPair       1 name  2 value                                   (string)
    ColumnFamilySchema   1 name  2 attributes (BytesBytesPair)  3 configuration
    TableSchema          1 table_name  2 attributes (BytesBytesPair)  3 column_families
                         4 configuration (NameStringPair)
    NamespaceDescriptor  1 name (bytes)  2 configuration (NameStringPair)
    TableState           1 state (ENABLED 0, DISABLED 1, DISABLING 2, ENABLING 3)

A family's settings travel as attributes keyed by HBase's own names
(``ColumnFamilyDescriptorBuilder``), every value the text of a Java value: ``VERSIONS "3"``,
``TTL "86400"`` (seconds), ``BLOCKCACHE "true"``, ``COMPRESSION "GZ"`` (enum names). A key
the family lacks takes HBase's default (the ``FamilyDescriptor`` defaults are those); keys
the project does not carry (``INDEX_BLOCK_ENCODING``, ...) are left out when read. A
table's own attributes (``MAX_FILESIZE``, ``DURABILITY``, custom keys) are kept as the
byte pairs HBase holds, sorted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor, TableDescriptor
from hbase_migrate.tablename import split_table_name, table_string
from hbase_migrate.wal.messages import TableName, decode_table_name, encode_table_name
from hbase_migrate.wal.protobuf import Message, ProtobufError, bytes_field, string_field

TABLE_STATES = ("ENABLED", "DISABLED", "DISABLING", "ENABLING")


def table_name(table: str) -> TableName:
    """The ``TableName`` of ``ns:t`` (``default`` when no namespace is named)."""
    namespace, qualifier = split_table_name(table)
    return TableName(namespace.encode(), qualifier.encode())


def table_name_message(table: str) -> bytes:
    return encode_table_name(table_name(table))


def table_from_message(data: bytes) -> str:
    """``ns:t`` (default namespace left out) of a ``TableName`` message."""
    return table_string(*decode_table_name(data))


def pair(first: bytes, second: bytes) -> bytes:
    """A ``BytesBytesPair``."""
    return bytes_field(1, first) + bytes_field(2, second)


def decode_pair(data: bytes) -> tuple[bytes, bytes]:
    m = Message(data, "BytesBytesPair")
    return m.req_bytes(1, "first"), m.req_bytes(2, "second")


# --- column families ----------------------------------------------------------------------


def _flag(value: bool) -> str:
    return "true" if value else "false"


def family_attributes(family: FamilyDescriptor) -> dict[str, str]:
    """A family's settings under HBase's key names, as HBase's client writes them."""
    return {
        "BLOCKCACHE": _flag(family.block_cache),
        "BLOCKSIZE": str(family.block_size),
        "BLOOMFILTER": family.bloom_filter,
        "COMPRESSION": family.compression,
        "DATA_BLOCK_ENCODING": family.data_block_encoding,
        "IN_MEMORY": _flag(family.in_memory),
        "KEEP_DELETED_CELLS": family.keep_deleted_cells,
        "MIN_VERSIONS": str(family.min_versions),
        "REPLICATION_SCOPE": str(family.scope),
        "TTL": str(family.ttl),
        "VERSIONS": str(family.max_versions),
        # HBase writes the MOB keys only when set (they have no entry in DEFAULT_VALUES)
        **({"IS_MOB": "true", "MOB_THRESHOLD": str(family.mob_threshold)} if family.mob
           else {}),
    }


def family_message(family: FamilyDescriptor) -> bytes:
    """A ``ColumnFamilySchema`` carrying every setting of ``family``."""
    return bytes_field(1, family.name) + b"".join(
        bytes_field(2, pair(k.encode(), v.encode()))
        for k, v in sorted(family_attributes(family).items()))


def _ttl(text: str) -> int:
    return FOREVER if text.upper() == "FOREVER" else int(text)


def _bool(text: str) -> bool:
    return text.lower() == "true"  # Boolean.valueOf


# key -> (FamilyDescriptor field, how HBase's getter parses the text)
_READ: dict[str, tuple[str, Callable[[str], object]]] = {
    "VERSIONS": ("max_versions", int),
    "MIN_VERSIONS": ("min_versions", int),
    "TTL": ("ttl", _ttl),
    "REPLICATION_SCOPE": ("scope", int),
    "COMPRESSION": ("compression", str.upper),
    "BLOOMFILTER": ("bloom_filter", str.upper),
    "IN_MEMORY": ("in_memory", _bool),
    "BLOCKCACHE": ("block_cache", _bool),
    "BLOCKSIZE": ("block_size", int),
    "DATA_BLOCK_ENCODING": ("data_block_encoding", str),
    "KEEP_DELETED_CELLS": ("keep_deleted_cells", str.upper),
    "IS_MOB": ("mob", _bool),
    "MOB_THRESHOLD": ("mob_threshold", int),
    "ENCRYPTION": ("encryption", str),
}


def decode_family(data: bytes) -> FamilyDescriptor:
    """A ``ColumnFamilySchema``; a setting that does not parse raises ProtobufError naming
    the family, the key and the value."""
    m = Message(data, "ColumnFamilySchema")
    name = m.req_bytes(1, "name")
    values: dict[str, object] = {}
    for key, value in (decode_pair(p) for p in m.repeated(2)):
        known = _READ.get(key.decode("utf-8", "replace"))
        if known is None:
            continue
        text = value.decode("utf-8", "replace")
        try:
            values[known[0]] = known[1](text)
        except ValueError:
            raise ProtobufError(f"family {name!r}: attribute {key.decode()} = {text!r} is "
                                "not what HBase writes there") from None
    return FamilyDescriptor(name, **values)  # type: ignore[arg-type]


# --- tables -------------------------------------------------------------------------------


def table_schema(desc: TableDescriptor) -> bytes:
    """A ``TableSchema``: name, the table's attributes, every family's settings."""
    return (bytes_field(1, table_name_message(desc.name))
            + b"".join(bytes_field(2, pair(k, v)) for k, v in sorted(desc.attributes))
            + b"".join(bytes_field(3, family_message(f)) for f in desc.families))


def decode_table_schema(data: bytes) -> TableDescriptor:
    m = Message(data, "TableSchema")
    name = table_from_message(m.req_bytes(1, "table_name"))
    families = m.msgs(3, decode_family)
    return TableDescriptor(name, families, tuple(sorted(m.msgs(2, decode_pair))))


# --- namespaces ---------------------------------------------------------------------------


class Namespace(NamedTuple):
    """A namespace and its configuration (quotas and the like, as HBase keeps them)."""

    name: str
    configuration: tuple[tuple[str, str], ...] = ()


def namespace_message(namespace: Namespace) -> bytes:
    return bytes_field(1, namespace.name.encode()) + b"".join(
        bytes_field(2, string_field(1, k) + string_field(2, v))
        for k, v in namespace.configuration)


def _name_string_pair(data: bytes) -> tuple[str, str]:
    m = Message(data, "NameStringPair")
    return m.req_str(1, "name"), m.req_str(2, "value")


def decode_namespace(data: bytes) -> Namespace:
    m = Message(data, "NamespaceDescriptor")
    return Namespace(m.req_bytes(1, "name").decode("utf-8", "surrogateescape"),
                     m.msgs(2, _name_string_pair))
