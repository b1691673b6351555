"""The report's sections about WAL files: files by status and server with gaps highlighted,
and what replay could not carry (bulk loads, approximated deletes, repairs)."""

from __future__ import annotations

from hbase_migrate.audit.records import (
    StepRecord,
    WalFileRecord,
    WalStatus,
)
from hbase_migrate.audit.status import drained
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.report import model
from hbase_migrate.report.html import (
    MAX_ROWS,
    PURPLE,
    RED,
    STATUS_COLORS,
    badge,
    clock,
    count,
    duration,
    metrics_summary,
    section,
    table,
    who_html,
)
from hbase_migrate.report.model import ReportData
from hbase_migrate.report.svg import (
    Lane,
    Segment,
    empty_plot,
    esc,
    lanes,
    stacked_bar,
)


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
             badge(s.status.value, s.status.value), metrics_summary(s.kind, [s]),
             esc(s.error or "")] for s in repair_steps[:MAX_ROWS]], total=len(repair_steps)))
    return "".join(out) or '<p class="note">No repair recorded.</p>'


def cdc_stream(data: ReportData) -> str:
    """The CDC stream to Kafka, when it ran: messages acknowledged, lag, WAL files by status,
    open gaps, and each server's newest file with the offset the broker acknowledged."""
    figures = data.cdc
    if figures is None:
        return ""
    files = ", ".join(f"{n} {esc(k)}" for k, n in sorted(figures.wal_files.items()))
    lead = (f"{figures.messages or 0} messages acknowledged by the broker over the "
            f"stream's runs; lag {duration(figures.lag)}; WAL files {files or 'none'}; "
            f"{figures.open_gaps} open gap(s) in the stream; "
            f"{count(sum(figures.cells.values()))} cells sent. Offsets are the stream's own "
            "(kept apart from replay's).")
    rows = [(esc(o["server"]), esc(o["file"]), str(o["offset"]), esc(o["status"]))
            for o in figures.offsets]
    return section("cdc", "CDC stream (Kafka)", lead,
                   table(("server", "newest WAL file", "offset acknowledged", "status"), rows))
