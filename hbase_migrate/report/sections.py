"""The report's sections about steps, each an HTML string built from :class:`ReportData`: the
cutover gate, the step timeline, replay lag and throughput, and the headline figures."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

from hbase_migrate.audit.records import (
    GateVerdict,
    StepStatus,
    Verdict,
    WalStatus,
)
from hbase_migrate.audit.status import drained, replay_lag
from hbase_migrate.report import model
from hbase_migrate.report.html import (
    BLUE,
    MAX_ROWS,
    PURPLE,
    STEP_COLORS,
    badge,
    clock,
    count,
    duration,
    metrics_summary,
    section,
    table,
    when,
    who_html,
)
from hbase_migrate.report.model import ReportData
from hbase_migrate.report.svg import (
    Bar,
    Chart,
    Lane,
    Segment,
    Series,
    empty_plot,
    esc,
    lanes,
)


def gate(data: ReportData) -> str:
    check = model.latest_cutover(data)
    if check is None:
        return section("gate", "Cutover gate", "", '<div class="verdict none"><b>No cutover '
                       "check recorded yet.</b> Run <code>hbase-migrate cutover check</code> "
                       "(or the <code>hbase_migrate_cutover</code> DAG) to get the verdict."
                       "</div>")
    m = check.metrics
    go = m.get("verdict") == GateVerdict.GO
    reasons = [str(r) for r in m.get("reasons") or ()]
    items = "".join(f"<li>{esc(r)}</li>" for r in reasons) or \
        "<li>every WAL file replayed, no open gap, lag below the threshold, and the last " \
        "validation after the last catch-up matched on every range</li>"
    facts = [("replay lag", duration(m.get("lag"))), ("threshold", duration(m.get("max_lag"))),
             ("open gaps", str(m.get("open_gaps", "-"))),
             ("WAL files not drained", str(m.get("files_not_drained", "-"))),
             ("checked", when(check.ended_at)), ("by", who_html(check))]
    dl = "".join(f"<div><dt>{esc(k)}</dt><dd>{v if k == 'by' else esc(v)}</dd></div>"
                 for k, v in facts)
    title = "GO: the target can take over" if go else "NO-GO: the target cannot take over yet"
    heading = "Why" if not go else "All clear"
    return section("gate", "Cutover gate", "", f'<div class="verdict {"go" if go else "nogo"}">'
                   f'<div class="verdict-title">{esc(title)}</div><h3>{heading}</h3>'
                   f'<ul class="reasons">{items}</ul><dl class="facts">{dl}</dl></div>')


def timeline(data: ReportData) -> str:
    steps = data.steps
    if not steps:
        return section("timeline", "Steps", "", empty_plot(
            "timeline", "Step timeline", "No step recorded yet."))
    lane_of: dict[str, list[Segment]] = {}
    for s in steps:
        label = f"{s.kind} · {model.caller(s)}"
        end = s.ended_at if s.ended_at is not None else data.now
        tip = (f"#{s.id} {s.kind} by {model.who(s)}: {when(s.started_at)}, "
               f"{duration(end - s.started_at)}, {s.status.value}"
               + (f": {s.error}" if s.error else ""))
        lane_of.setdefault(label, []).append(Segment(s.started_at, end, STEP_COLORS[s.status],
                                                     tip))
    marks = []
    if data.migration.watermark is not None:
        marks.append((data.migration.watermark, "T0", "#7b4bc4"))
    plot = lanes("timeline", "Steps over time, one lane per kind of step and caller",
                 [Lane(k, v) for k, v in lane_of.items()], marks=marks)
    rows = []
    grouped = groupby(steps, key=lambda s: (s.kind, model.caller(s), s.status))
    for (kind, _, status), group_iter in grouped:
        group = list(group_iter)
        first, last = group[0], group[-1]
        ids = f"#{first.id}" if len(group) == 1 else f"#{first.id} to #{last.id} ({len(group)})"
        errors = [s.error for s in group if s.error]
        by = who_html(first) if len(group) == 1 or not first.dag_id else (
            f'{badge(first.dag_id, "dag")} <span class="muted">{len(group)} runs: '
            f"{esc(first.run_id or '')} … {esc(last.run_id or '')}</span>")
        rows.append([ids, esc(kind), by, esc(clock(first.started_at)),
                     esc(duration((last.ended_at or data.now) - first.started_at)),
                     badge(status.value, status.value), metrics_summary(kind, group),
                     esc(errors[-1][:300]) if errors else ""])
    legend = " ".join(badge(s.value, s.value) for s in StepStatus)
    return section(
        "timeline", "Steps",
        "Every lifecycle step the ledger recorded, with who ran it: the command line (CLI) or "
        f"an Airflow DAG run. Bars: {legend}. Consecutive runs of the same step by the same "
        "caller are one row of the table.",
        plot, table(["step", "kind", "who", "started (UTC)", "took", "status", "what it did",
                     "error"], rows[:MAX_ROWS], total=len(rows), cls="steps"))


# -- replay: lag and throughput ----------------------------------------------------------------

def _lag_unit(points: Sequence[tuple[int, float]]) -> tuple[float, str]:
    top = max((v for _, v in points), default=0)
    return (60_000.0, "min") if top >= 180_000 else (1000.0, "s")


def replay(data: ReportData) -> str:
    runs = model.replay_runs(data)
    points = model.lag_points(data)
    check = model.latest_cutover(data)
    max_lag = check.metrics.get("max_lag") if check else None
    marks = [(data.migration.watermark, "T0", PURPLE)] if data.migration.watermark else []
    if points:
        scale, unit = _lag_unit(points + ([(0, float(max_lag))] if max_lag else []))
        lag_plot = Chart(
            "lag", "Replay lag over time (after each catch-up run and cutover check)",
            f"replay lag ({unit})", count,
            series=[Series("replay lag", [(t, v / scale) for t, v in points], BLUE, area=True)],
            threshold=(max_lag / scale, f"cutover threshold {duration(max_lag)}")
            if isinstance(max_lag, (int, float)) else None, marks=marks).svg()
    else:
        lag_plot = empty_plot("lag", "Replay lag over time",
                              "No replay lag recorded yet: it is measured by each catch-up run.")
    if runs:
        cumulative, total = [], 0
        for r in runs:
            total += r.cells
            cumulative.append((r.step.ended_at or r.step.started_at, float(total)))
        bars = [Bar(r.step.started_at, r.step.ended_at or r.step.started_at, r.rate,
                    PURPLE if r.step.kind == "backfill" else BLUE,
                    f"#{r.step.id} {r.step.kind}: {r.cells} cells in "
                    f"{duration(r.seconds * 1000)} ({count(r.rate)} cells/s)")
                for r in runs]
        limits = [(r.step.started_at, float(r.limit or 0)) for r in runs]
        limit_line = ([Series("replay limit in force (cells/s; 0: unlimited)", limits,
                              "#d62828", step=True)] if any(v for _, v in limits) else [])
        rate_plot = Chart(
            "throughput", "Replay throughput per run, and cells replayed in total",
            "cells/s per run (bars)", count, bars=bars,
            series=[Series("cells replayed in total", cumulative, "#1f2933", step=True,
                           right_axis=True), *limit_line],
            right_label="cells replayed in total (line)", right_fmt=count, marks=marks).svg()
        busy = [r for r in runs if r.cells]
        mean = sum(r.cells for r in busy) / max(0.001, sum(r.seconds for r in busy))
        lead = (f"{len(runs)} replay run(s) ({sum(r.step.kind == 'backfill' for r in runs)} "
                f"backfill), {count(total)} cells and {count(sum(r.entries for r in runs))} "
                f"WAL entries replayed; {count(mean)} cells/s while busy, peak "
                f"{count(max(r.rate for r in runs))} cells/s. Backfill runs in purple.")
    else:
        rate_plot = empty_plot("throughput", "Replay throughput", "No replay run recorded yet.")
        lead = "No replay run recorded yet."
    now_lag = replay_lag(data.files, data.now) if data.files else None
    lead += f" Replay lag as of this report: {esc(duration(now_lag))}."
    return section("replay", "Replay: lag and throughput", lead,
                   '<h3>Replay lag</h3>', lag_plot, '<h3>Throughput</h3>', rate_plot)


# -- WAL files and gaps ------------------------------------------------------------------------


def facts_of(data: ReportData) -> list[tuple[str, str, str]]:
    """The headline figures: (label, value, tone)."""
    files = data.files
    done = sum(f.status is not WalStatus.GAP and drained(f) for f in files)
    open_gaps = sum(g.resolved_at is None for g in data.gaps)
    lag = replay_lag(files, data.now) if files else None
    cells = sum(model.cells_of(s.metrics) for s in data.steps if s.kind in model.REPLAY_KINDS)
    latest = model.latest_validation(data)
    matching = sum(v.final_verdict is Verdict.MATCH for v in latest)
    return [
        ("state", data.migration.state, "neutral"),
        ("WAL caught up", f"{done} / {len(files)}", "good" if done == len(files) and files
         else "neutral"),
        ("cells replayed", count(cells), "neutral"),
        ("replay lag now", duration(lag), "good" if lag == 0 else "neutral"),
        ("open gaps", str(open_gaps), "bad" if open_gaps else "good"),
        ("ranges matching", f"{matching} / {len(latest)}" if latest else "-",
         "good" if latest and matching == len(latest) else "bad" if latest else "neutral"),
    ]
