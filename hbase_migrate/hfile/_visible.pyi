from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.merge import MergeSource
from hbase_migrate.hfile.visible import FamilyRules, ScanSpec
from hbase_migrate.wal.model import Cell

def visible_cells(cells: Iterable[StoreCell], rules: Mapping[bytes, FamilyRules],
                  scan: ScanSpec) -> Iterator[Cell] | None: ...
def store_settings(rules: Mapping[bytes, FamilyRules], scan: ScanSpec
                   ) -> dict[bytes, tuple[int, int, int, int, int, int, bool]] | None: ...
def merged_cells(sources: Sequence[MergeSource], mob_references: bool,
                 newer: Iterator[StoreCell], start: bytes) -> Iterator[StoreCell]: ...
def region_rows(sources: Sequence[MergeSource], mob_references: bool,
                newer: Iterator[StoreCell], start: bytes, stop: bytes,
                rules: Mapping[bytes, FamilyRules], scan: ScanSpec,
                resolve: Callable[[Cell], Cell] | None) -> Iterator[list[Cell]] | None: ...
