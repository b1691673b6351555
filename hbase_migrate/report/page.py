"""The report page: one self-contained HTML document (inline CSS and SVG, no script, nothing
fetched), the headline figures on top, then the sections."""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.report import (
    html,
    loss_sections,
    sections,
    validation_sections,
    wal_sections,
)
from hbase_migrate.report.model import ReportData
from hbase_migrate.report.svg import esc

CSS = """
:root { --ink:#1f2933; --muted:#5f6b7a; --line:#e3e7ee; --bg:#f4f6f9; --card:#fff;
  --good:#2e9e5b; --bad:#d62828; --blue:#3b7dd8; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
header { background:#16202c; color:#fff; padding:28px 40px 60px; }
header .inner { max-width:1024px; margin:0 auto; }
header h1 { margin:0 0 4px; font-size:26px; font-weight:650; letter-spacing:-0.01em; }
header .sub { color:#b9c3cf; }
header code { color:#fff; background:rgba(255,255,255,.08); }
nav { display:flex; gap:18px; margin-top:14px; flex-wrap:wrap; }
nav a { color:#b9c3cf; text-decoration:none; font-size:13px; }
nav a:hover { color:#fff; }
main { max-width:1080px; margin:0 auto; padding:24px 28px 60px; }
.cards { display:grid; grid-template-columns:repeat(6, 1fr); gap:12px; margin:-44px 0 20px; }
.card { background:var(--card); border-radius:10px; padding:12px 14px;
  box-shadow:0 1px 3px rgba(16,24,40,.12); border-top:4px solid #c6ceda; }
.card.good { border-top-color:var(--good); } .card.bad { border-top-color:var(--bad); }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase;
  letter-spacing:.04em; }
.card .value { font-size:22px; font-weight:650; white-space:nowrap; }
section { background:var(--card); border-radius:12px; padding:20px 24px; margin:18px 0;
  box-shadow:0 1px 3px rgba(16,24,40,.08); }
h2 { margin:0 0 6px; font-size:19px; }
.steps td:nth-child(4), .steps td:nth-child(5) { white-space:nowrap; }
h3 { margin:20px 0 8px; font-size:15px; }
h3.alarm { color:var(--bad); }
.lead { color:var(--muted); margin:0 0 12px; }
.note { color:var(--muted); font-size:13px; }
.ok { color:var(--good); }
.muted { color:var(--muted); font-size:12px; }
svg.plot { width:100%; height:auto; display:block; margin:6px 0 4px; }
table { width:100%; border-collapse:collapse; font-size:13px; margin:6px 0; }
th { text-align:left; color:var(--muted); font-weight:600; border-bottom:2px solid var(--line);
  padding:6px 8px; }
td { border-bottom:1px solid var(--line); padding:6px 8px; vertical-align:top; }
code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background:#f1f3f6;
  padding:1px 4px; border-radius:4px; word-break:break-all; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px;
  font-weight:600; background:#e8ecf1; color:var(--ink); white-space:nowrap; }
.badge.succeeded { background:#dff3e7; color:#1d6e3f; }
.badge.failed, .badge.gap { background:#fde2e2; color:#a61b1b; }
.badge.running { background:#e1ecfb; color:#1f5fb5; }
.badge.recompared { background:#d9f1ee; color:#1f7a6d; }
.badge.cli { background:#eceff3; color:#3d4756; }
.badge.dag { background:#ece3fa; color:#5b2fa6; }
.verdict { border-radius:10px; padding:16px 20px; border:1px solid; }
.verdict.go { background:#eef9f2; border-color:#9bd3b1; }
.verdict.nogo { background:#fdf0f0; border-color:#f0a9a9; }
.verdict.none { background:#f4f6f9; border-color:var(--line); color:var(--muted); }
.verdict-title { font-size:22px; font-weight:700; }
.verdict.go .verdict-title { color:#1d6e3f; } .verdict.nogo .verdict-title { color:#a61b1b; }
.verdict h3 { margin:10px 0 2px; }
.reasons { margin:4px 0 12px; padding-left:20px; }
.facts { display:flex; flex-wrap:wrap; gap:8px 28px; margin:0; }
.facts dt { color:var(--muted); font-size:12px; } .facts dd { margin:0; font-weight:600; }
.links li { margin:3px 0; }
footer { color:var(--muted); font-size:12px; text-align:center; padding:0 0 30px; }
"""

NAV = (("gate", "Cutover gate"), ("timeline", "Steps"), ("replay", "Replay"),
       ("wal", "WAL files"), ("validation", "Validation"), ("carried", "Bulk loads & repairs"),
       ("cdc", "CDC stream"), (loss_sections.ANCHOR, "Accepted losses"))


def _cluster(identity: str) -> str:
    """A cluster's identity, short: a ``cluster.json`` path by its last two parts (the whole
    identity in the tooltip)."""
    kind, _, path = identity.partition(":")
    short = "/".join(Path(path).parts[-2:]) if kind == "cluster_json" and path else identity
    return f'<span title="{esc(identity)}">{esc(short)}</span>'


def render(data: ReportData, report_dir: Path | None = None) -> str:
    """The whole page; ``report_dir`` (where it will be written) makes artifact links
    relative."""
    m = data.migration
    source, target = data.sides or (m.source, m.target)
    cards = "".join(f'<div class="card {tone}"><div class="label">{esc(label)}</div>'
                    f'<div class="value">{esc(value)}</div></div>'
                    for label, value, tone in sections.facts_of(data))
    tables = ", ".join(f"{t.source} → {t.target}" for t in m.tables)
    nav = "".join(f'<a href="#{a}">{esc(label)}</a>' for a, label in NAV
                  if (a != "cdc" or data.cdc is not None)
                  and (a != loss_sections.ANCHOR or loss_sections.has_losses(data)))
    body = "".join((sections.gate(data), sections.timeline(data), sections.replay(data),
                    wal_sections.wal_files(data),
                    validation_sections.validation(data, report_dir),
                    wal_sections.not_replayed(data), wal_sections.cdc_stream(data),
                    loss_sections.accepted_losses(data)))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Migration {esc(m.name)}: audit report</title><style>{CSS}</style></head>"
        f'<body><header><div class="inner"><h1>Migration <b>{esc(m.name)}</b></h1>'
        f'<div class="sub">{_cluster(source)} → {_cluster(target)} · tables {esc(tables)} · '
        f"watermark T0 {esc(html.when(m.watermark))}</div><nav>{nav}</nav></div></header>"
        f'<main><div class="cards">{cards}</div>{body}</main>'
        f"<footer>Generated {esc(html.when(data.now))} from the audit ledger "
        f"{esc(data.ledger_url)} (schema {data.schema_version}) alone.</footer>"
        "</body></html>\n")
