from collections.abc import Iterable, Sequence

from hbase_migrate.wal.model import Cell

def digest_rows(rows: Iterable[Sequence[Cell]]) -> tuple[int, int, str]: ...
