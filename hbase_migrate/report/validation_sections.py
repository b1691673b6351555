"""The report's validation section: verdicts per key range, recompares, differences."""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.audit.records import (
    StepRecord,
    ValidationRecord,
    Verdict,
)
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.report import model
from hbase_migrate.report.html import (
    MATCH,
    MAX_ROWS,
    MISMATCH,
    RECOMPARED,
    badge,
    clock,
    section,
    table,
    who_html,
)
from hbase_migrate.report.model import ReportData
from hbase_migrate.report.svg import (
    empty_plot,
    esc,
    tiles,
)


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


def _source_read(step: StepRecord | None) -> str:
    """How a validation read the source: its snapshots' files, or a live scan; the ranges
    it carried over from a stopped validation (read then, not again); the requests it sent
    to the source's region servers; from both snapshots, the target's and its requests."""
    snapshots = step.metrics.get("source_snapshots") if step else None
    how = "live scan"
    if isinstance(snapshots, dict) and snapshots:
        how = "snapshot files: " + ", ".join(str(n) for n in snapshots.values())
    resumed = step.metrics.get("resumed") if step else None
    if isinstance(resumed, dict) and resumed.get("ranges"):
        how += (f"; {resumed['ranges']} ranges resumed from step #{resumed['from_step']} "
                f"(read from {clock(int(resumed['since']))})")
    sent = step.metrics.get("source_requests") if step else None
    if isinstance(sent, int):
        how += f"; {sent} requests sent to its region servers"
    target = step.metrics.get("target_snapshots") if step else None
    if isinstance(target, dict) and target and step is not None:  # both from snapshots
        how += ("; the target from snapshot files: " + ", ".join(map(str, target.values()))
                + f"; {step.metrics.get('target_requests', 0)} requests sent to its region "
                "servers")
    return how


def validation(data: ReportData, report_dir: Path | None) -> str:
    steps = {s.id: s for s in data.steps}
    history = []
    for rows in data.validation_runs:
        step_ids = sorted({r.step_id for r in rows if r.step_id is not None})
        step = steps.get(step_ids[-1]) if step_ids else None
        differing = sum(r.final_verdict is Verdict.MISMATCH for r in rows)
        history.append([esc(", ".join(f"#{i}" for i in step_ids) or "-"),
                        esc(clock(max(r.validated_at for r in rows))),
                        who_html(step) if step else "", esc(str(len({r.table_name
                                                                      for r in rows}))),
                        esc(str(len(rows))), esc(str(sum(r.recompare_verdict is not None
                                                         for r in rows))),
                        esc(str(differing)), esc(_source_read(step)),
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
    latest = model.latest_validation(data)
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
                   table(["steps", "when (UTC)", "who", "tables", "ranges", "recompared",
                          "mismatched", "source read", "verdict"], history[-MAX_ROWS:],
                         total=len(history)),
                   artifacts_html)


# -- what replay could not carry -----------------------------------------------------------------
