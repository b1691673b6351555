"""Which WAL entries and cells a replay applies, and where: the frozen ``ReplayFilter``.

* Tables: ``src=dst`` mappings (``t`` alone means ``t=t``); names are normalised as HBase
  prints them (``default:t`` == ``t``). With mappings, only listed tables are replayed; with
  none, every user table is replayed into itself (WALPlayer without a table list).
* System tables (namespace ``hbase``, and ``master:store``) are skipped unless
  ``include_system_tables``; then they are replayed only where mapped or when no mapping
  is given.
* Column families per source table (optional): other families' cells are dropped, counted.
* ``write_time`` window ``[start_time, end_time)`` on the WALKey (either bound optional).

METAFAMILY marker cells are never data; :mod:`hbase_migrate.replay.marker_log` reads them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from hbase_migrate.errors import ConfigError
from hbase_migrate.tablename import InvalidTableNameError, normalize_table_name

SYSTEM_NAMESPACE = "hbase"
SYSTEM_TABLES = frozenset({"master:store"})

SKIP_SYSTEM = "system table"
SKIP_UNMAPPED = "table not mapped"
SKIP_BEFORE = "before the write-time window"
SKIP_AFTER = "after the write-time window"


def is_system_table(name: str) -> bool:
    """``hbase:*`` and ``master:store`` (HBase 2.4+'s master region)."""
    return name.startswith(SYSTEM_NAMESPACE + ":") or name in SYSTEM_TABLES


def _mapping(item: str) -> tuple[str, str]:
    source, sep, target = item.partition("=")
    if not source.strip() or (sep and not target.strip()):
        raise ConfigError(f"table mapping {item!r}: expected 'source' or 'source=target'")
    try:
        src = normalize_table_name(source.strip())
        return src, normalize_table_name(target.strip()) if sep else src
    except InvalidTableNameError as exc:
        raise ConfigError(f"table mapping {item!r}: {exc}") from exc


@dataclass(frozen=True)
class ReplayFilter:
    """What to replay. Build it with :meth:`build`; the fields are already normalised."""

    tables: tuple[tuple[str, str], ...] = ()  # (source, target); empty = each into itself
    families: tuple[tuple[str, frozenset[bytes]], ...] = ()  # source table -> families
    start_time: int | None = None
    end_time: int | None = None
    include_system_tables: bool = False

    def __post_init__(self) -> None:
        sources = [s for s, _ in self.tables]
        if len(set(sources)) != len(sources):
            raise ConfigError(f"a source table is mapped twice: {sources}")
        if self.start_time is not None and self.end_time is not None and (
                self.start_time >= self.end_time):
            raise ConfigError(f"write-time window [{self.start_time}, {self.end_time}) is "
                              "empty: start must be before end")
        for source, _ in self.families:
            if self.tables and source not in sources:
                raise ConfigError(f"families are given for table {source!r}, which is not "
                                  f"among the mapped tables {sources}")

    @classmethod
    def build(cls, tables: Iterable[str] = (),
              families: Mapping[str, Iterable[bytes | str]] | None = None, *,
              start_time: int | None = None, end_time: int | None = None,
              include_system_tables: bool = False) -> ReplayFilter:
        """From ``["src=dst", "t"]`` and ``{"src": ["cf", ...]}`` (source table names)."""
        fams = tuple(
            (_mapping(name)[0],
             frozenset(f.encode() if isinstance(f, str) else f for f in wanted))
            for name, wanted in (families or {}).items())
        return cls(tuple(_mapping(t) for t in tables), fams, start_time, end_time,
                   include_system_tables)

    def target_of(self, source: str) -> str | None:
        """The target table of a (normalised) source table, None when it is not replayed."""
        if is_system_table(source) and not self.include_system_tables:
            return None
        if not self.tables:
            return source
        return next((dst for src, dst in self.tables if src == source), None)

    def skip_reason(self, source: str, write_time: int) -> str | None:
        """Why an entry of ``source`` written at ``write_time`` is skipped, or None."""
        return self.table_skip_reason(source) or self.time_skip_reason(write_time)

    def table_skip_reason(self, source: str) -> str | None:
        """Why every entry of ``source`` is skipped, or None."""
        if is_system_table(source) and not self.include_system_tables:
            return SKIP_SYSTEM
        if self.target_of(source) is None:
            return SKIP_UNMAPPED
        return None

    def time_skip_reason(self, write_time: int) -> str | None:
        """Why an entry written at ``write_time`` is skipped (the window), or None."""
        if self.start_time is not None and write_time < self.start_time:
            return SKIP_BEFORE
        if self.end_time is not None and write_time >= self.end_time:
            return SKIP_AFTER
        return None

    def families_of(self, source: str) -> frozenset[bytes] | None:
        """The families replayed for ``source``; None means all of them."""
        return next((f for src, f in self.families if src == source), None)
