"""A key range of a table: ``[start, stop)``, empty bounds open, rendered in hex everywhere
(messages, JSON, the ledger), the way the ledger stores range bounds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hbase_migrate.errors import HBaseMigrateError


class RangeError(HBaseMigrateError):
    """A key range is malformed, unknown, or its work failed (the message names it)."""


@dataclass(frozen=True, order=True)
class KeyRange:
    """Rows ``start <= row < stop`` of ``table`` (a source table name); ``b""`` is open."""

    table: str
    start: bytes = b""
    stop: bytes = b""

    def __post_init__(self) -> None:
        if self.stop and self.start >= self.stop:
            raise RangeError(f"table {self.table}: empty key range: start {self.start.hex()!r} "
                             f"is not before stop {self.stop.hex()!r}")

    def contains(self, row: bytes) -> bool:
        return self.start <= row and (not self.stop or row < self.stop)

    @property
    def bounds(self) -> str:
        """``[6162, 6364)`` with open ends shown as ``-inf`` / ``+inf``."""
        return f"[{self.start.hex() or '-inf'}, {self.stop.hex() or '+inf'})"

    def __str__(self) -> str:
        return f"{self.table} {self.bounds}"

    @property
    def id(self) -> str:
        """A compact text naming the range: ``table:starthex-stophex``."""
        return f"{self.table}:{self.start.hex()}-{self.stop.hex()}"

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "start": self.start.hex(), "stop": self.stop.hex(),
                "bounds": self.bounds}

    @classmethod
    def parse(cls, text: str, table: str | None = None) -> KeyRange:
        """Read :attr:`id` back (``table:start-stop`` in hex), or ``start-stop`` when
        ``table`` is given."""
        name, sep, span = text.rpartition(":")
        if not sep:
            name, span = table or "", text
        start, dash, stop = span.partition("-")
        try:
            if not name or not dash:
                raise ValueError("expected TABLE:STARTHEX-STOPHEX")
            return cls(name, bytes.fromhex(start), bytes.fromhex(stop))
        except ValueError as exc:
            raise RangeError(f"key range {text!r}: {exc} (e.g. orders:61-6d, bounds in hex, "
                             "empty for open)") from None
