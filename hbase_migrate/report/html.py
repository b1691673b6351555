"""The report's small HTML pieces: times, counts, tables, badges, sections, who ran a step
and what it did, and the report's colours."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from hbase_migrate.audit.records import StepRecord, StepStatus, WalStatus
from hbase_migrate.report import model
from hbase_migrate.report.svg import esc
from hbase_migrate.timeutil import human_duration

STATUS_COLORS = {
    WalStatus.REPLAYED: "#2e9e5b", WalStatus.SKIPPED: "#b8c1cc", WalStatus.SEEN: "#8fb8e8",
    WalStatus.REPLAYING: "#3b7dd8", WalStatus.FAILED: "#e08a00", WalStatus.GAP: "#d62828",
}
STEP_COLORS = {StepStatus.SUCCEEDED: "#2e9e5b", StepStatus.FAILED: "#d62828",
               StepStatus.RUNNING: "#3b7dd8"}
MATCH, RECOMPARED, MISMATCH = "#2e9e5b", "#49b6a6", "#d62828"
BLUE, PURPLE, RED = "#3b7dd8", "#7b4bc4", "#d62828"
MAX_ROWS = 100  # rows of a detail table; the rest is counted


def when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def clock(ms: int | None) -> str:
    """A time for a table cell, short: ``05-28 20:28:40`` (UTC)."""
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%m-%d %H:%M:%S")


def duration(ms: float | None) -> str:
    """``850 ms``, ``12.3 s``, ``4 min 5 s``, ``2 h 10 min`` (:func:`human_duration`)."""
    return "-" if ms is None else human_duration(ms)


def count(n: float) -> str:
    """``950``, ``12.5k``, ``3.2M``."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + unit
    return f"{n:.0f}" if float(n).is_integer() else f"{n:.1f}"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, total: int | None = None,
          cls: str = "") -> str:
    """An HTML table of already-escaped cells; ``total`` notes rows left out."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    more = ""
    if total is not None and total > MAX_ROWS:
        more = f'<p class="note">{total - MAX_ROWS} more not shown (of {total}).</p>'
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>' \
           f"</table>{more}"


def badge(text: str, kind: str) -> str:
    return f'<span class="badge {esc(kind)}">{esc(text)}</span>'


def section(anchor: str, title: str, lead: str, *body: str) -> str:
    lead_html = f'<p class="lead">{lead}</p>' if lead else ""
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{lead_html}{"".join(body)}</section>'


# -- the cutover gate -------------------------------------------------------------------------


def who_html(step: StepRecord) -> str:
    if not step.dag_id:
        return badge("CLI", "cli")
    rest = " · ".join(esc(x) for x in (step.run_id, step.task_id) if x)
    where = f" on {esc(step.host)}" if step.host else ""  # the Airflow worker's host
    return f'{badge(step.dag_id, "dag")} <span class="muted">{rest}{where}</span>'


# -- the step timeline ------------------------------------------------------------------------


def metrics_summary(kind: str, steps: Sequence[StepRecord]) -> str:
    ms = [s.metrics for s in steps]
    parts: list[str] = []
    if kind in model.REPLAY_KINDS:
        parts.append(f"{sum(int(m.get('files_read') or 0) for m in ms)} files read")
        parts.append(f"{count(sum(model.cells_of(m) for m in ms))} cells")
        windows = [w for m in ms if isinstance(w := m.get("window"), dict)]
        if kind == "backfill" and windows and windows[-1].get("end"):
            w = windows[-1]
            parts.append(f"window {clock(w.get('start'))} → {clock(w.get('end'))}")
    else:
        last = ms[-1]
        for key in ("action", "detail", "verdict", "watermark", "rows", "cells", "ranges",
                    "mismatched", "repaired", "path"):
            value = last.get(key)
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                text = clock(int(value)) if key == "watermark" else (
                    count(value) if isinstance(value, (int, float)) else value)
                parts.append(f"{key} {text}")
        if isinstance(last.get("tables"), list):
            parts.append(f"{len(last['tables'])} table(s)")
    return esc(", ".join(parts))
