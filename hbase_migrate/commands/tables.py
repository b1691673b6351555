"""Tables for a terminal that show every name whole: a long server or WAL file name wraps
within its column (``overflow="fold"``) instead of being cut with an ellipsis, at any
terminal width (a pipe is 80 columns)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table


def table(*headers: str, **options: Any) -> Table:
    """A ``rich`` table whose columns fold long values rather than cut them."""
    from rich.table import Table

    found = Table(*headers, **options)
    for column in found.columns:
        column.overflow = "fold"
    return found
