"""Terminal tables show every name whole: at 80 columns (a pipe) a long WAL file name wraps
within its column instead of being cut."""

from __future__ import annotations

import io

from rich.console import Console

from hbase_migrate.commands.tables import table

SERVER = "regionserver-17.prod.dc1.example.com,16020,1700000000000"
WAL = "regionserver-17.prod.dc1.example.com%2C16020%2C1700000000000.1700000123456"


def printed(width: int) -> str:
    out = io.StringIO()
    wals = table("server", "WAL file", "state")
    wals.add_row(SERVER, WAL, "live")
    Console(file=out, width=width, color_system=None).print(wals)
    return out.getvalue()


def cells_of(text: str, column: int) -> str:
    """One column's text, its wrapped lines joined."""
    parts = [line.split("│") for line in text.splitlines() if line.count("│") == 4]
    return "".join(p[column + 1].strip() for p in parts)


def test_long_names_wrap_whole_at_any_width() -> None:
    for width in (80, 60):
        text = printed(width)
        assert "…" not in text
        assert cells_of(text, 0) == SERVER and cells_of(text, 1) == WAL, text
