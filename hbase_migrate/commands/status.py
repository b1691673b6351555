"""``hbase-migrate status``: replay lag, pending WAL files, gaps, retention warnings and the
last validation verdict of each migration in a ledger.

Exit codes: 0 when no open gap, 3 when a migration has an open gap (WAL edits lost for the
target), 2 on errors. ``--json`` prints the shape documented in
:mod:`hbase_migrate.audit.status`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hbase_migrate.commands.ledger import ledger_source_options, resolve_ledger

if TYPE_CHECKING:
    from rich.console import Console

    from hbase_migrate.audit.status import MigrationStatus, StatusReport

EXIT_GAPS = 3


@click.command()
@ledger_source_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON (sorted keys) instead of tables.")
@click.option("--archive-ttl", metavar="DURATION",
              help="hbase.master.logcleaner.ttl for the retention warning "
                   "(default: the config's [replay] archive_ttl, else 10m).")
@click.pass_context
def status(ctx: click.Context, config: Path | None, url: str | None, as_json: bool,
           archive_ttl: str | None) -> None:
    """Show migration progress, lag and gaps.

    Per migration and source region server: the newest replayed write time and the lag behind
    now, WAL files pending (seen, replaying, failed), gaps (WAL files that vanished before
    they were replayed), archived WALs close to the cleaner TTL, and the last validation.

    \b
    Exit status: 0 no open gap; 3 an open gap (edits lost for the target); 2 an error.
    """
    from hbase_migrate.audit.ledger import Ledger, now_ms
    from hbase_migrate.audit.status import DEFAULT_ARCHIVE_TTL_MS, compute_status
    from hbase_migrate.timeutil import parse_duration

    ledger_url, spec = resolve_ledger(config, url)
    ttl = (parse_duration(archive_ttl, name="--archive-ttl") if archive_ttl
           else spec.replay.archive_ttl if spec else DEFAULT_ARCHIVE_TTL_MS)
    with Ledger.open(ledger_url, upgrade_schema=False) as opened:
        report = compute_status(opened, now=now_ms(), archive_ttl=ttl,
                                names=[spec.name] if spec else None,
                                configured=spec.limits if spec else None)
    if as_json:
        click.echo(json.dumps(report.to_json(), sort_keys=True, indent=2))
    else:
        render(report)
    if report.has_gaps:
        ctx.exit(EXIT_GAPS)


def render(report: StatusReport, console: Console | None = None) -> None:
    """The report as tables for a terminal."""
    from rich.console import Console
    from rich.markup import escape

    from hbase_migrate.timeutil import format_time, human_duration

    console = console or Console()
    console.print(f"ledger {report.ledger} (schema {report.schema_version}) at "
                  f"{format_time(report.now)}")
    if not report.migrations:
        console.print("no migration recorded in this ledger yet")
    for m in report.migrations:
        lag = "unknown" if m.lag is None else human_duration(m.lag)
        if m.lag == 0 and m.listed_at is not None:  # edits written since are not listed yet
            lag = (f"under {human_duration(max(0, report.now - m.listed_at))} (every edit "
                   f"of the last WAL listing, {format_time(m.listed_at)}, replayed)")
        console.print(f"\n[bold]{m.name}[/bold]: state {m.state}, replay lag {lag}, "
                      f"last validation {_validation(m)}", highlight=False)
        # (a file copy copies whole tables: its ranges are planned, for validations, not
        # copied one by one)
        if m.copy and m.copy["ranges_copied"] < m.copy["ranges"] and m.state in (
                "schema_ready", "copying", "failed"):
            console.print(f"snapshot copy: {_copy(m.copy)}", highlight=False)
        limits = _limits(m)
        if limits:
            console.print(f"limits: {limits}", highlight=False)
        if m.retention:
            verdict = {"pinned": "guaranteed (pinned)", "at-risk": "AT RISK"}.get(
                m.retention["kind"], "kept for the archive TTL only")
            console.print(f"archived WAL retention: {verdict}: {m.retention['detail']}",
                          highlight=False)
        for figures in m.streams.values():
            if figures.messages is not None:  # the CDC stream
                files = ", ".join(f"{n} {k}" for k, n in sorted(figures.wal_files.items()))
                offsets = "; ".join(f"{o['server']}: {o['file']} at {o['offset']}"
                                    for o in figures.offsets)
                lag = "unknown" if figures.lag is None else human_duration(figures.lag)
                console.print(f"[bold]{figures.stream}[/bold]: " + escape(
                    f"{figures.messages} messages acknowledged, lag {lag}, WAL files "
                    f"{files or 'none'}, "
                    f"{figures.open_gaps} open gap(s); offsets {offsets or 'none'}"),
                    highlight=False)
            if figures.waiting:
                w = figures.waiting
                console.print(f"[bold]{figures.stream}[/bold]: " + escape(
                    f"waiting for the {w['service']} {w['endpoint']} since "
                    f"{format_time(w['since'])} ({human_duration(report.now - w['since'])}): "
                    f"{w['error']}"), highlight=False)
        _render_tables(console, m, format_time, human_duration)


def _limits(m: MigrationStatus) -> str:
    """The throttles in force (with the config), else those set, else the newest steps'."""
    from hbase_migrate.config import RATE_KEYS
    from hbase_migrate.limits.registry import describe

    values = m.limits["in_force"] or m.limits["set"]
    if values:
        rates = {k: float(values[k]) or None for k in RATE_KEYS if k in values}
        adaptive = " (adaptive)" if values.get("adaptive") else ""
        return (describe(rates) + adaptive) if rates else adaptive.strip(" ()")
    merged: dict[str, float | None] = {}
    for kind in ("snapshot", "validate", "replay"):
        merged.update({k: v for k, v in m.limits["steps"].get(kind, {}).items()
                       if k in RATE_KEYS})
    return describe(merged)


def _copy(copy: dict[str, Any]) -> str:
    """The copy's progress: ranges, and the parts of its plan."""
    text = f"{copy['ranges_copied']} of {copy['ranges']} ranges copied"
    parts = copy["parts"]
    if parts:
        text += (f"; parts: {parts['succeeded']} of {parts['planned']} done, "
                 f"{parts['running']} running, {parts['failed']} failed")
    return text


def _validation(m: MigrationStatus) -> str:
    v = m.last_validation
    if v is None:
        return "none"
    return f"{v.verdict} ({v.mismatched} of {v.ranges} ranges differ)"


def _render_tables(console: Console, m: MigrationStatus, fmt_time: Callable[[int], str],
                   fmt_duration: Callable[[int], str]) -> None:
    from hbase_migrate.commands.tables import table

    def when(ms: int | None) -> str:
        return "-" if ms is None else fmt_time(ms)

    if not m.servers:
        console.print("no source WAL files recorded yet")
    else:
        servers = table("server", "newest replayed write", "lag", "seen", "replaying",
                        "failed", "replayed", "gaps", title="source servers")
        for s in m.servers:
            servers.add_row(s.server, when(s.newest_replayed_write_time),
                            "-" if s.lag is None else fmt_duration(s.lag),
                            *(str(s.pending[k]) for k in ("seen", "replaying", "failed")),
                            str(s.replayed), str(s.gaps))
        console.print(servers)
    if m.gaps:
        gaps = table("server", "WAL file", "edits from", "edits to", "detected",
                     title="[red]GAPS: edits lost (or not proven kept) for the target[/red]")
        from hbase_migrate.replay.coverage import UNPROVEN

        for g in m.gaps:
            unproven = (g.detail or "").startswith(UNPROVEN)
            what = g.path or (f"({g.detail})" if unproven else f"(missing: {g.detail})")
            gaps.add_row(g.server, what, when(g.first_time),
                         when(g.last_time),
                         when(g.detected_at))
        console.print(gaps)
        for remedy in sorted({g.remedy for g in m.gaps}):
            console.print(f"remedy: {remedy}", highlight=False)
    if m.steps:
        # where each step ran, once the steps ran on more than one host (Celery workers)
        hosts = len({st.host for st in m.steps}) > 1
        steps = table("step", "kind", "status", "started", "ended", "by (DAG / run / task)",
                      *(["host"] if hosts else []), title="recent steps")
        for st in m.steps:
            steps.add_row(str(st.id), st.kind, st.status, when(st.started_at),
                          when(st.ended_at), st.by, *([st.host or "-"] if hosts else []))
        console.print(steps)
    if m.retention_warnings:
        warn = table("server", "archived WAL file", "status", "first seen", "may be deleted at",
                     title="[yellow]archived WALs near the cleaner TTL[/yellow]")
        for w in m.retention_warnings:
            warn.add_row(w.server, w.path, w.status, when(w.first_seen), when(w.deadline))
        console.print(warn)
