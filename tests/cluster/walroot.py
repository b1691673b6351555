"""The HBase root tree the cluster tests build: live, splitting and archived WALs."""

from __future__ import annotations

from typing import NamedTuple


class TreeFile(NamedTuple):
    relpath: str
    size: int
    mtime_ms: int
    state: str | None  # None: not a WAL (not listed by the WAL stores)
    server: str | None


RS1 = "rs1.example.com,16020,1700000000000"
RS1_ENC = "rs1.example.com%2C16020%2C1700000000000"
TREE = (
    TreeFile(f"WALs/{RS1}/{RS1_ENC}.1700000100000", 300_000, 1700000150123, "live", RS1),
    TreeFile(f"WALs/{RS1}/{RS1_ENC}.meta.1700000100001.meta", 10, 1700000150124, "live", RS1),
    TreeFile("WALs/rs-2,16020,1700000000001-splitting/rs-2%2C16020%2C1700000000001.1700000050000",
             2_000, 1700000060000, "splitting", "rs-2,16020,1700000000001"),
    TreeFile(f"oldWALs/{RS1_ENC}.1700000000000", 5_000, 1700000200000, "archived", RS1),
    TreeFile("oldWALs/rs3,16020,3/rs3%2C16020%2C3.1700000000005", 0, 1700000200001,
             "archived", "rs3,16020,3"),
    TreeFile("oldWALs/pv2-00000000000000000001.log", 7, 1700000200002, None, None),
)
LIVE = TREE[0]


def content(relpath: str, size: int) -> bytes:
    """Deterministic bytes of a tree file (a repeating pattern seeded by its path)."""
    seed = relpath.encode()
    return (seed * (size // len(seed) + 1))[:size]
