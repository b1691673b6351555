"""The report's sections, each an HTML string built from :class:`ReportData`: the cutover
gate, the step timeline, replay lag and throughput, WAL files and gaps, validation verdicts,
and what replay could not carry (bulk loads, approximated deletes, repairs)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path

from hbase_migrate.audit.records import (
    GateVerdict,
    StepRecord,
    StepStatus,
    ValidationRecord,
    Verdict,
    WalFileRecord,
    WalStatus,
)
from hbase_migrate.audit.status import drained, replay_lag
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.report import model
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
    stacked_bar,
    tiles,
)

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
    """``850 ms``, ``12.3 s``, ``4 min 5 s``, ``2 h 10 min``."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms // 1000), 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {seconds} s" if seconds else "")
    return f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")


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


def who_html(step: StepRecord) -> str:
    if not step.dag_id:
        return badge("CLI", "cli")
    rest = " · ".join(esc(x) for x in (step.run_id, step.task_id) if x)
    return f'{badge(step.dag_id, "dag")} <span class="muted">{rest}</span>'


# -- the step timeline ------------------------------------------------------------------------

def _metrics_summary(kind: str, steps: Sequence[StepRecord]) -> str:
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
        for key in ("verdict", "watermark", "rows", "cells", "ranges", "mismatched",
                    "repaired", "path"):
            value = last.get(key)
            if isinstance(value, (int, float, str)) and not isinstance(value, bool):
                text = clock(int(value)) if key == "watermark" else (
                    count(value) if isinstance(value, (int, float)) else value)
                parts.append(f"{key} {text}")
        if isinstance(last.get("tables"), list):
            parts.append(f"{len(last['tables'])} table(s)")
    return esc(", ".join(parts))


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
                     badge(status.value, status.value), _metrics_summary(kind, group),
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
        rate_plot = Chart(
            "throughput", "Replay throughput per run, and cells replayed in total",
            "cells/s per run (bars)", count, bars=bars,
            series=[Series("cells replayed in total", cumulative, "#1f2933", step=True,
                           right_axis=True)],
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

def _file_tip(f: WalFileRecord) -> str:
    tip = (f"{f.path}: {f.status.value}, {count(f.size or 0)} B, offset {f.offset_reached}, "
           f"{f.entries} entries")
    return tip + (f"; {f.error}" if f.error else "")


def _server_lane(server: str, files: list[WalFileRecord], now: int) -> Lane:
    """One lane per server: each file from its name time to the next file's, consecutive
    files of one status merged into one stretch."""
    timed = [f for f in files if f.name_time is not None]
    segments: list[Segment] = []
    run: list[WalFileRecord] = []

    def end_of(i: int) -> int:
        if i + 1 < len(timed):
            return int(timed[i + 1].name_time or 0)
        f = timed[i]
        return max(int(f.name_time or 0) + 1, f.last_write_time or 0, min(f.last_seen, now))

    def flush(upto: int) -> None:
        if not run:
            return
        first = run[0]
        tip = _file_tip(first) if len(run) == 1 else (
            f"{server}: {len(run)} files {first.status.value}, {run[0].path} … {run[-1].path}")
        outline = RED if first.status is WalStatus.GAP else None
        segments.append(Segment(int(first.name_time or 0), upto,
                                STATUS_COLORS[first.status], tip, outline))
        run.clear()

    for i, f in enumerate(timed):
        if run and (run[0].status is not f.status or f.status in (WalStatus.GAP,
                                                                  WalStatus.FAILED)):
            flush(int(f.name_time or 0))
        run.append(f)
        if i + 1 == len(timed):
            flush(end_of(i))
    return Lane(server, segments)


def wal_files(data: ReportData) -> str:
    files = data.files
    by_status = {s: sum(f.status is s for f in files) for s in WalStatus}
    parts = [(s.value, by_status[s], STATUS_COLORS[s]) for s in WalStatus]
    summary = stacked_bar("wal-status", "Source WAL files by status", parts) if files else \
        empty_plot("wal-status", "Source WAL files by status", "No source WAL file listed yet.")
    servers = sorted({f.server for f in files} | {g.server for g in data.gaps})
    lane_list = [_server_lane(s, [f for f in files if f.server == s], data.now)
                 for s in servers]
    bands = [Segment(g.first_time, g.last_time,
                     RED if g.resolved_at is None else "#8a94a3",
                     f"{g.server}: gap ({g.kind.value}{', resolved' if g.resolved_at else ''})"
                     f": {g.path or g.detail or ''}", lane=g.server)
             for g in data.gaps if g.first_time is not None and g.last_time is not None]
    marks = [(data.migration.watermark, "T0", PURPLE)] if data.migration.watermark else []
    if any(lane.segments for lane in lane_list) or bands:
        coverage = lanes("wal-lanes", "Each source server's WAL files over time (from each "
                         "file's creation to the next), by status; gaps in red",
                         lane_list, bands=bands, marks=marks)
    else:
        coverage = empty_plot("wal-lanes", "WAL files over time", "No WAL file with a name "
                              "time recorded yet.")
    open_gaps = [g for g in data.gaps if g.resolved_at is None]
    gap_rows = [[f"<code>{esc(g.server)}</code>", badge(g.kind.value, "gap"),
                 f"<code>{esc(g.path)}</code>" if g.path else esc(g.detail or ""),
                 esc(clock(g.first_time)), esc(clock(g.last_time)), esc(clock(g.detected_at)),
                 badge("resolved", "succeeded") if g.resolved_at else badge("open", "failed")]
                for g in data.gaps]
    remedies = "".join(f"<li>{esc(r)}</li>" for r in sorted({g.remedy for g in open_gaps}))
    gaps_html = (f'<h3 class="alarm">Gaps: edits lost for the target ({len(open_gaps)} open)'
                 "</h3>" + table(["server", "kind", "WAL file / what is missing",
                                  "edits from (UTC)", "edits to", "detected", "state"],
                                 gap_rows[:MAX_ROWS], total=len(gap_rows))
                 + (f'<p class="note">Remedy:</p><ul class="note">{remedies}</ul>'
                    if remedies else "")) if data.gaps \
        else '<p class="ok">No gap: every listed WAL file was read before it vanished, and ' \
             "every server's WAL chain is covered from the watermark.</p>"
    trouble = [f for f in files if f.status in (WalStatus.FAILED, WalStatus.GAP)
               or not drained(f)]
    trouble_html = ""
    if trouble:
        rows = [[f"<code>{esc(f.path)}</code>", badge(f.status.value, f.status.value),
                 esc(count(f.offset_reached)) + " / " + esc(count(f.size or 0)),
                 f"<code>{esc((f.error or '')[:300])}</code>" if f.error else ""]
                for f in trouble[:MAX_ROWS]]
        trouble_html = "<h3>Files with edits not replayed</h3>" + table(
            ["WAL file", "status", "offset / size (B)", "error"], rows,
            total=len(trouble))
    lead = (f"{len(files)} source WAL file(s) on {len({f.server for f in files})} server(s); "
            f"{count(sum(f.entries for f in files))} entries read. Live files stay "
            "<em>replaying</em> until they are archived and finished; one read to its current "
            "end is caught up.")
    return section("wal", "WAL files", lead, summary, coverage, gaps_html, trouble_html)


# -- validation ---------------------------------------------------------------------------------

def _range_label(v: ValidationRecord) -> str:
    start = to_string_binary(v.range_start) if v.range_start else "first row"
    end = to_string_binary(v.range_end) if v.range_end else "last row"
    return f"[{start}, {end})"


def _range_color(v: ValidationRecord) -> str:
    if v.final_verdict is Verdict.MISMATCH:
        return MISMATCH
    return RECOMPARED if v.recompare_verdict is not None else MATCH


def _differences(v: ValidationRecord) -> str:
    """The first differing cells, where the ledger keeps them."""
    found = [str(d) for d in getattr(v, "differences", ()) or ()][:5]
    return "<br>".join(f"<code>{esc(d[:200])}</code>" for d in found)


def _sides(a: int | None, b: int | None) -> str:
    return f"{'-' if a is None else a} / {'-' if b is None else b}"


def validation(data: ReportData, report_dir: Path | None) -> str:
    runs: dict[int | None, list[ValidationRecord]] = {}
    for v in data.validations:
        runs.setdefault(v.step_id, []).append(v)
    steps = {s.id: s for s in data.steps}
    history = []
    for step_id, rows in runs.items():
        step = steps.get(step_id) if step_id is not None else None
        differing = sum(r.final_verdict is Verdict.MISMATCH for r in rows)
        history.append([esc(f"#{step_id}" if step_id else "-"),
                        esc(clock(max(r.validated_at for r in rows))),
                        who_html(step) if step else "", esc(str(len({r.table_name
                                                                      for r in rows}))),
                        esc(str(len(rows))), esc(str(sum(r.recompare_verdict is not None
                                                         for r in rows))),
                        esc(str(differing)),
                        badge("mismatch" if differing else "match",
                              "failed" if differing else "succeeded")])
    artifacts = model.artifacts(data)
    links = "".join(
        f'<li><a href="{esc(model.link_for(a.path, report_dir))}">{esc(Path(a.path).name)}</a>'
        f' <span class="muted">{esc(a.label)} · {esc(a.where)}</span></li>' for a in artifacts)
    artifacts_html = (f'<h3>Great Expectations results and Data Docs</h3><ul class="links">'
                      f"{links}</ul>") if artifacts else \
        '<p class="note">No Great Expectations result or Data Docs recorded for this ' \
        "migration.</p>"
    if not data.validations:
        return section("validation", "Validation", "", empty_plot(
            "ranges", "Validation verdicts per key range", "No validation recorded yet."),
            artifacts_html)
    latest = list(runs.values())[-1]
    by_table: dict[str, list[ValidationRecord]] = {}
    for v in latest:
        by_table.setdefault(v.table_name, []).append(v)
    grid = tiles("ranges", "Verdict of every key range in the newest validation", [
        (name, [(_range_color(v), f"{name} {_range_label(v)}: {v.final_verdict.value}"
                 f"{' after recompare' if v.recompare_verdict else ''}; rows "
                 f"{_sides(v.source_rows, v.target_rows)}, cells "
                 f"{_sides(v.source_cells, v.target_cells)}") for v in rows])
        for name, rows in by_table.items()])
    bad = [v for v in latest if v.final_verdict is Verdict.MISMATCH]
    bad_html = ""
    if bad:
        bad_html = '<h3 class="alarm">Ranges that differ</h3>' + table(
            ["table", "key range", "rows source / target", "cells source / target",
             "digest source / target", "first differences"],
            [[esc(v.table_name), f"<code>{esc(_range_label(v))}</code>",
              esc(_sides(v.source_rows, v.target_rows)),
              esc(_sides(v.source_cells, v.target_cells)),
              f"<code>{esc((v.source_digest or '-')[:12])} / "
              f"{esc((v.target_digest or '-')[:12])}</code>", _differences(v)]
             for v in bad[:MAX_ROWS]],
            total=len(bad))
    legend = (f'{badge("match", "succeeded")} {badge("match after recompare", "recompared")} '
              f'{badge("mismatch", "failed")}')
    lead = (f"The newest validation compared {len(latest)} key range(s) of "
            f"{len(by_table)} table(s): {len(latest) - len(bad)} match, {len(bad)} differ. "
            f"Tiles: {legend}.")
    return section("validation", "Validation", lead, grid, bad_html,
                   "<h3>Validation runs</h3>",
                   table(["step", "when (UTC)", "who", "tables", "ranges", "recompared",
                          "mismatched", "verdict"], history[-MAX_ROWS:], total=len(history)),
                   artifacts_html)


# -- what replay could not carry -----------------------------------------------------------------

def not_replayed(data: ReportData) -> str:
    loads = model.bulk_loads(data)
    loads_html = table(["table", "region", "families", "written (UTC)", "WAL file", "offset"], [
        [esc(b.get("table", "")), f"<code>{esc(b.get('region', ''))}</code>",
         esc(", ".join(map(str, b.get("families") or ()))), esc(clock(b.get("write_time"))),
         f"<code>{esc(b.get('file', ''))}</code>", esc(b.get("offset", ""))]
        for b in loads[:MAX_ROWS]], total=len(loads)) if loads else \
        '<p class="ok">No BULK_LOAD marker met: no bulk-loaded HFiles to re-copy.</p>'
    approx = [f for f in data.files if f.approximated_deletes]
    approx_html = table(["server", "WAL file", "approximated deletes"], [
        [f"<code>{esc(f.server)}</code>", f"<code>{esc(f.path)}</code>",
         esc(f.approximated_deletes)]
        for f in approx[:MAX_ROWS]], total=len(approx)) if approx else \
        '<p class="ok">No delete was approximated: every delete marker was replayed exactly.' \
        "</p>"
    recompared = [v for v in data.validations if v.recompare_verdict is not None]
    repairs_html = _repairs(data)
    lead = ("Bulk-loaded HFiles leave only a BULK_LOAD marker in the WAL: their region's key "
            "range is re-copied from the source, never replayed. Through a Thrift1 gateway a "
            "single-version delete can only be approximated, and each one is counted. "
            f"{len(recompared)} key range(s) were compared again after replay caught up.")
    return section("carried", "What replay could not carry", lead,
                   f"<h3>Bulk loads ({len(loads)})</h3>", loads_html,
                   f"<h3>Approximated deletes ({sum(f.approximated_deletes for f in approx)})"
                   "</h3>", approx_html,
                   f"<h3>Repairs ({len(data.repairs) + len(_repair_steps(data))})</h3>",
                   repairs_html)


def _repair_steps(data: ReportData) -> list[StepRecord]:
    return [s for s in data.steps if "repair" in s.kind]


def _repairs(data: ReportData) -> str:
    """Repaired ranges (where the ledger keeps them), and steps of a repair kind."""
    steps = {s.id: s for s in data.steps}
    out = []
    if data.repairs:
        rows = []
        for r in data.repairs[:MAX_ROWS]:
            step = steps.get(r.step_id) if r.step_id is not None else None
            verdict = str(getattr(r.verdict, "value", r.verdict) or "not compared")
            start = to_string_binary(r.range_start) if r.range_start else "first row"
            end = to_string_binary(r.range_end) if r.range_end else "last row"
            rows.append([esc(r.table_name), f"<code>{esc(f'[{start}, {end})')}</code>",
                         esc(r.reason.replace("_", " ")), esc(r.puts), esc(r.deletes),
                         badge(verdict, {"match": "succeeded", "mismatch": "failed"}.get(
                             verdict, "cli")),
                         esc(clock(r.repaired_at)), who_html(step) if step else ""])
        out.append(table(["table", "key range", "why", "puts", "deletes", "verdict after",
                          "when (UTC)", "who"], rows, total=len(data.repairs)))
    repair_steps = _repair_steps(data)
    if repair_steps:
        out.append(table(["step", "when (UTC)", "who", "status", "what it did", "error"], [
            [esc(f"#{s.id}"), esc(clock(s.started_at)), who_html(s),
             badge(s.status.value, s.status.value), _metrics_summary(s.kind, [s]),
             esc(s.error or "")] for s in repair_steps[:MAX_ROWS]], total=len(repair_steps)))
    return "".join(out) or '<p class="note">No repair recorded.</p>'



def facts_of(data: ReportData) -> list[tuple[str, str, str]]:
    """The headline figures: (label, value, tone)."""
    files = data.files
    done = sum(f.status is not WalStatus.GAP and drained(f) for f in files)
    open_gaps = sum(g.resolved_at is None for g in data.gaps)
    lag = replay_lag(files, data.now) if files else None
    cells = sum(model.cells_of(s.metrics) for s in data.steps if s.kind in model.REPLAY_KINDS)
    latest: list[ValidationRecord] = []
    if data.validations:
        newest = data.validations[-1].step_id
        latest = [v for v in data.validations if v.step_id == newest]
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
