from collections.abc import Iterable, Iterator, Mapping

from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.visible import FamilyRules, ScanSpec
from hbase_migrate.wal.model import Cell

def visible_cells(cells: Iterable[StoreCell], rules: Mapping[bytes, FamilyRules],
                  scan: ScanSpec) -> Iterator[Cell] | None: ...
