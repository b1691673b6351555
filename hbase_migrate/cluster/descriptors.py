"""Typed descriptions of an HBase table: column families, regions (names: ``tablename.py``).

Both gateway adapters return these values, the schema copy writes them to a target, and the
embedded cluster keeps its own schema in them. Region names follow HBase's
``RegionInfo.createRegionName`` (new format): ``<table>,<startKey>,<regionId>.<md5>.`` where
the encoded name ``<md5>`` is the MD5 hex digest of ``<table>,<startKey>,<regionId>``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FOREVER = 2147483647  # HConstants.FOREVER: a family TTL meaning "never expires"
ALL_VERSIONS = FOREVER  # what a read asks for: the server caps versions at each family's VERSIONS
Columns = Sequence[tuple[bytes, bytes | None]]  # (family, qualifier or None = whole family)
TimeRange = tuple[int, int]  # [from, to) in ms
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF  # HConstants.LATEST_TIMESTAMP


DEFAULT_MOB_THRESHOLD = 100 * 1024  # ColumnFamilyDescriptorBuilder.DEFAULT_MOB_THRESHOLD


@dataclass(frozen=True)
class FamilyDescriptor:
    """One column family with the settings a copy must carry over.

    ``ttl`` is in seconds (``FOREVER`` = never expires); ``scope`` is the replication scope
    (0 local, 1 global). Compression and bloom filter are kept by name as HBase prints them.
    ``encryption`` is read, never written to a target (the key is the cluster's own).
    """

    name: bytes
    max_versions: int = 1
    min_versions: int = 0
    ttl: int = FOREVER
    scope: int = 0
    compression: str = "NONE"
    bloom_filter: str = "ROW"
    in_memory: bool = False
    block_cache: bool = True
    block_size: int = 65536
    data_block_encoding: str = "NONE"
    keep_deleted_cells: str = "FALSE"
    mob: bool = False  # IS_MOB: values above mob_threshold bytes kept in MOB files
    mob_threshold: int = DEFAULT_MOB_THRESHOLD  # MOB_THRESHOLD
    encryption: str = ""  # ENCRYPTION: the cipher of its store files ("AES"), "" for none

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items()
                if k != "name" and not (k == "encryption" and not v)}
        return {"name": self.name.hex(), **data}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FamilyDescriptor:
        values = dict(data)
        return cls(name=bytes.fromhex(values.pop("name")), **values)


@dataclass(frozen=True)
class TableDescriptor:
    """A table name (``ns:t``, default namespace omitted) and its column families."""

    name: str
    families: tuple[FamilyDescriptor, ...]
    attributes: tuple[tuple[bytes, bytes], ...] = ()

    def family(self, name: bytes) -> FamilyDescriptor | None:
        return next((f for f in self.families if f.name == name), None)


def region_name(table: str, start_key: bytes, region_id: int) -> bytes:
    """HBase's full region name: ``table,startKey,regionId.encodedName.``."""
    prefix = b"%s,%s,%d" % (table.encode(), start_key, region_id)
    return prefix + b"." + hashlib.md5(prefix).hexdigest().encode() + b"."


def encoded_region_name(table: str, start_key: bytes, region_id: int) -> str:
    """The encoded region name: MD5 hex of ``table,startKey,regionId``."""
    return hashlib.md5(b"%s,%s,%d" % (table.encode(), start_key, region_id)).hexdigest()


@dataclass(frozen=True)
class RegionDescriptor:
    """One region of a table and the server holding it. An empty end key means "to the end"."""

    table: str
    start_key: bytes
    end_key: bytes
    region_id: int
    server_host: str = ""
    server_port: int = 0
    server_start_code: int = 0
    name: bytes = field(default=b"")

    @property
    def region_name(self) -> bytes:
        return self.name or region_name(self.table, self.start_key, self.region_id)

    @property
    def encoded_name(self) -> str:
        return encoded_region_name(self.table, self.start_key, self.region_id)

    def contains(self, row: bytes) -> bool:
        return self.start_key <= row and (not self.end_key or row < self.end_key)
