"""HBase schema as Bigtable's: table ids, column families with garbage-collection rules,
split points.

* A table ``ns:name`` becomes ``ns.name`` (``default:name`` and ``name`` stay ``name``):
  Bigtable ids take ``[_a-zA-Z0-9][-_.a-zA-Z0-9]*``, and ``.`` cannot appear in an HBase
  namespace, so the mapping is one to one for the names HBase allows.
* A family's rule, as HBase keeps cells: at most ``VERSIONS`` versions; with a ``TTL``,
  versions older than it go too, except the newest ``MIN_VERSIONS``:
  ``union(max_versions(VERSIONS), intersection(max_age(TTL), max_versions(MIN_VERSIONS)))``
  (without ``MIN_VERSIONS``: ``union(max_versions, max_age)``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.errors import ConfigError

_TABLE_ID = re.compile(r"[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,49}")
_FAMILY_ID = re.compile(r"[-_.a-zA-Z0-9]{1,64}")


def table_id(name: str) -> str:
    """The Bigtable table id of the HBase table ``name``."""
    namespace, sep, table = name.rpartition(":")
    found = f"{namespace}.{table}" if sep and namespace != "default" else table
    if not _TABLE_ID.fullmatch(found):
        raise ConfigError(f"table {name!r}: its Bigtable id {found!r} is not one "
                          "([_a-zA-Z0-9][-_.a-zA-Z0-9]*, at most 50 characters): map it to "
                          "another name with [[tables]] target")
    return found


def family_id(table: str, family: bytes) -> str:
    """The Bigtable family id of an HBase family (the same text)."""
    text = family.decode("ascii", "replace")
    if not _FAMILY_ID.fullmatch(text):
        raise ConfigError(f"table {table}: family {family!r} cannot be a Bigtable family id "
                          "([-_.a-zA-Z0-9], at most 64 characters): leave it out with "
                          "[[tables]] families")
    return text


@dataclass(frozen=True)
class Retention:
    """What a family keeps: ``versions`` (None: every one), ``max_age`` in ms (None:
    forever), ``min_versions`` kept past ``max_age``."""

    versions: int | None
    max_age: int | None
    min_versions: int = 0

    @classmethod
    def of(cls, family: FamilyDescriptor) -> Retention:
        versions = None if family.max_versions >= FOREVER else family.max_versions
        max_age = None if family.ttl >= FOREVER else family.ttl * 1000
        return cls(versions, max_age, family.min_versions if max_age is not None else 0)

    def kept(self, timestamps_desc: list[int], now_ms: int) -> int:
        """How many of a column's versions (newest first) HBase returns: the first
        ``versions``, less those older than ``max_age`` beyond the first ``min_versions``."""
        keep = len(timestamps_desc) if self.versions is None else min(
            self.versions, len(timestamps_desc))
        if self.max_age is None:
            return keep
        for i in range(keep):
            if i >= self.min_versions and timestamps_desc[i] < now_ms - self.max_age:
                return i
        return keep

    def gc_rule(self) -> object | None:
        """The Google client's GC rule (None: keep everything)."""
        from google.cloud.bigtable import column_family as cf

        versions = cf.MaxVersionsGCRule(self.versions) if self.versions else None
        if self.max_age is None:
            return versions
        age: object = cf.MaxAgeGCRule(datetime.timedelta(milliseconds=self.max_age))
        if self.min_versions:
            age = cf.GCRuleIntersection([age, cf.MaxVersionsGCRule(self.min_versions)])
        return age if versions is None else cf.GCRuleUnion([versions, age])

    @classmethod
    def from_gc_rule(cls, rule: object | None) -> Retention:
        """The inverse of :meth:`gc_rule` for the rules it writes."""
        from google.cloud.bigtable import column_family as cf

        versions = max_age = None
        min_versions = 0
        rules = rule.rules if isinstance(rule, cf.GCRuleUnion) else [rule]
        for part in rules:
            if isinstance(part, cf.MaxVersionsGCRule):
                versions = part.max_num_versions
            elif isinstance(part, cf.MaxAgeGCRule):
                max_age = int(part.max_age.total_seconds() * 1000)
            elif isinstance(part, cf.GCRuleIntersection):
                for inner in part.rules:
                    if isinstance(inner, cf.MaxAgeGCRule):
                        max_age = int(inner.max_age.total_seconds() * 1000)
                    elif isinstance(inner, cf.MaxVersionsGCRule):
                        min_versions = inner.max_num_versions
        return cls(versions, max_age, min_versions)

    def family(self, name: bytes) -> FamilyDescriptor:
        """An HBase descriptor of a family kept like this."""
        return FamilyDescriptor(name, max_versions=self.versions or FOREVER,
                                min_versions=self.min_versions,
                                ttl=FOREVER if self.max_age is None else self.max_age // 1000)
