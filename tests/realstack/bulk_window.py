"""The window of WAL edits the real-stack bulk tests load (``test_bulk_window_real``,
``test_bulk_load_rpc_real``, its 3.0 twin and ``test_bulk_replay_real``): what the snapshot
copy left in the target, then puts around the copy's versions and after, a key written
twice and deletes of the four types, many at the copy's cells; a seeded draw, the same each
run. The tables split at :data:`SPLIT`."""

from __future__ import annotations

import random

from hbase_migrate.replay.mutations import RowMutation, WalPosition, to_mutations
from hbase_migrate.wal.model import Cell, CellType

T = 1_700_000_000_000
SPLIT = b"r100"  # the tables' two regions: ["", SPLIT) and [SPLIT, "")


def copy_cells() -> list[Cell]:
    """What the snapshot copy left in the target: two versions of every column."""
    return [Cell(b"r%03d" % r, family, b"q%d" % q, T - 100 - v, CellType.PUT, b"copy-%d" % v)
            for r in range(200) for family in (b"f", b"g") for q in range(3) for v in range(2)]


def window_entries() -> list[list[Cell]]:
    """WAL entries of the window, in order: puts at times around the copy's and after it, a
    key rewritten, and deletes of each type, many at the copy's cells."""
    rng = random.Random(78)
    entries: list[list[Cell]] = []
    for n in range(600):
        row = b"r%03d" % rng.randrange(200)
        family = rng.choice((b"f", b"g"))
        qualifier = b"q%d" % rng.randrange(3)
        roll = rng.random()
        if roll < 0.6:
            ts = T + rng.randrange(-150, 50)  # among the copy's versions, or newer
            entries.append([Cell(row, family, qualifier, ts, CellType.PUT, b"w%d" % n),
                            Cell(row, family, b"extra", ts, CellType.PUT, b"x%d" % n)])
        elif roll < 0.7:
            entries.append([Cell(row, family, qualifier, T - 100, CellType.DELETE)])
        elif roll < 0.8:
            entries.append([Cell(row, family, qualifier, T - 50, CellType.DELETE_COLUMN)])
        elif roll < 0.9:
            entries.append([Cell(row, family, b"", T - 101, CellType.DELETE_FAMILY_VERSION)])
        else:
            entries.append([Cell(row, family, b"", T - 100 + rng.randrange(-2, 2),
                                 CellType.DELETE_FAMILY)])
    # a key written twice in the window: the later value is what reads see
    entries.append([Cell(b"r007", b"f", b"q0", T + 500, CellType.PUT, b"earlier")])
    entries.append([Cell(b"r007", b"f", b"q0", T + 500, CellType.PUT, b"later")])
    return entries


def mutations(entries: list[list[Cell]]) -> list[list[RowMutation]]:
    """Each entry as the replay's mutations, at a position of its own in one WAL."""
    return [to_mutations(cells, WalPosition("wal", n, n)) for n, cells in enumerate(entries)]
