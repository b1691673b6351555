"""The progress bars' column of what a step moved: cells, their rate, the time left, and
the regions a planning pass has passed, or what the step waits for (read from
:data:`hbase_migrate.runstate.meter`)."""

from __future__ import annotations

from typing import Any

from rich.progress import ProgressColumn
from rich.text import Text

from hbase_migrate import runstate


def meter_text(meter: runstate.Meter) -> str:
    """``1,234 cells, 410 cells/s, ETA 0:12`` (and ``planning: region 2/8`` while a
    planning pass copies); empty before the first cell; while the step waits,
    ``waiting for X: 12s of at most 60s`` alone."""
    if meter.waiting is not None:
        return meter.waiting.text()
    parts = []
    if meter.regions_total and meter.ranges_total is None:
        parts.append(f"planning: region {meter.regions_done}/{meter.regions_total}")
    if meter.cells:
        parts.append(f"{meter.cells:,} cells, {meter.rate():,.0f} cells/s")
        eta = meter.eta()
        parts.append("ETA " + (f"{int(eta) // 60}:{int(eta) % 60:02d}"
                               if eta is not None else "?"))
    return ", ".join(parts)


class MeterColumn(ProgressColumn):
    """:func:`meter_text` of the step under way, redrawn with the bar."""

    max_refresh = 0.5

    def render(self, task: Any) -> Text:
        return Text(meter_text(runstate.meter))
