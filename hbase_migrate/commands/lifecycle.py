"""``hbase-migrate prepare``, ``snapshot``, ``validate`` and ``cutover check``: thin callers
of the lifecycle steps (:mod:`hbase_migrate.lifecycle`), one ledger step each.

Exit codes: 0 done (or nothing to do); 1 the step's verdict is negative (a mismatch, a
no-go); 2 usage, config, ledger or cluster errors (one line).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from hbase_migrate.cluster.endpoints import CLIENTS
from hbase_migrate.commands.spark_conf import conf_option, master_help, with_conf
from hbase_migrate.config_parts import SnapshotSettings
from hbase_migrate.spark.yarn import yarn_line
from hbase_migrate.timeutil import TIME_HELP

if TYPE_CHECKING:
    from hbase_migrate.lifecycle.result import StepResult

F = TypeVar("F", bound=Callable[..., Any])


def _config(func: F) -> F:
    func = click.option("--json", "as_json", is_flag=True,
                        help="Print the step's result as JSON.")(func)
    return click.option("--config", "config", required=True, metavar="M.toml",
                        type=click.Path(dir_okay=False, exists=True, path_type=Path),
                        help="The migration config.")(func)


def _show(result: StepResult | dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        data = result if isinstance(result, dict) else result.to_json()
        click.echo(json.dumps(data, sort_keys=True, indent=2))
    else:
        for line in lines:
            click.echo(line)


def _skipped(result: StepResult) -> list[str]:
    return [f"skipped: {why}" for why in result.metrics.get("skipped", [])]


def _method_line(m: Mapping[str, Any]) -> list[str]:
    """What ``auto`` chose for the copy, and why (nothing for a method named)."""
    from hbase_migrate.snapshot.choose import MethodChoice

    return [MethodChoice.of(m).line] if "method_reason" in m else []


def _engine(result: StepResult) -> list[str]:
    """Which engine ran the step's ranges, and why (``[spark] master``, auto's estimate)."""
    m = result.metrics
    lines = [f"engine: {m['engine']} ({m['engine_reason']})"] if "engine_reason" in m else []
    lines += [f"executors: {m['executors']}"] if m.get("executors") else []
    return lines + ([yarn_line(m["yarn"])] if m.get("yarn") else [])


def _accepted(counts: dict[str, int] | None, what: str) -> list[str]:
    """One line naming a Bigtable target's accepted losses (``counts``: cells by name)."""
    from hbase_migrate.hbase.bigtable_target import losses_line

    line = losses_line(counts or {}, what)
    return [line] if line else []


def _written(result: StepResult) -> list[str]:
    """The accepted losses the step's writes to Bigtable left out."""
    return _accepted((result.metrics.get("bigtable") or {}).get("known_losses"),
                     "counted above, not written to Bigtable")


def _state(result: StepResult) -> str:
    return f"migration {result.migration}: {result.state}"


@click.command()
@_config
def prepare(config: Path, as_json: bool) -> None:
    """Create the target tables: the source's column families and region split points."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import prepare as step

    result = step(load_config(config))
    _show(result, as_json, [
        *(f"{t['target']}: {'created' if t['created'] else 'exists'} with families "
          f"{', '.join(t['families'])} and {t['split_points']} split point(s)"
          for t in result.metrics["tables"]),
        *_accepted({f["name"]: f["count"] for f in result.metrics.get("preflight", {}).get(
            "findings", []) if f["accepted"]}, "met in the sampled rows and the WAL cells"),
        *_skipped(result), _state(result)])


@contextlib.contextmanager
def _progress_bar(as_json: bool, unit: str = "key ranges") -> Iterator[Any]:
    """A bar on the terminal, erased when done; none with ``--json`` or off a terminal
    (where it showed nothing, yet was drawn ten times a second). Beside the key ranges it
    shows the cells moved, their rate and the time left, or what the step waits for
    (:mod:`hbase_migrate.runstate`); what the step announces is printed above it at once
    (on stderr without a bar)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from hbase_migrate import runstate
    from hbase_migrate.commands.meter_column import MeterColumn

    console = Console()
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn(unit), MeterColumn(), transient=True, console=console,
                   disable=as_json or not console.is_terminal)

    def say(text: str) -> None:
        if bar.disable:
            click.echo(text, err=True)
        else:
            bar.console.print(text, highlight=False, markup=False)
    with bar, runstate.announcing(say):
        yield bar


def _ranges(bar: Any, what: str, migration: str) -> Callable[[int, int], None]:
    """Progress of the key ranges, with the limits in force."""
    from hbase_migrate.limits.registry import in_force_text

    task = bar.add_task(what, total=None)

    def update(done: int, total: int) -> None:
        limits = in_force_text(migration)
        bar.update(task, completed=done, total=total,
                   description=f"{what} ({limits})" if limits else what)
    return update


_master = click.option("--master", metavar="URL", help=master_help("the range tasks"))


@click.command()
@_config
@click.option("--watermark", metavar="TIME",
              help="T0 of the copy (default: now); ignored once a watermark is recorded."
                   + TIME_HELP)
@_master
@click.option("--method", type=click.Choice(["auto", "scan", "hbase", "bulk"]),
              help="auto: hbase when both clusters allow the file copy, else bulk when "
                   "[snapshot] auto_bulk is on and the target takes a bulk load, else scan "
                   "(the output says which and why); "
                   "scan: range tasks that scan the source and write the target, each "
                   f"over its cluster's client ({' or '.join(CLIENTS)}: HBase's own RPC or "
                   "the Thrift2 gateway); hbase: an HBase snapshot, its files exported and "
                   "cloned on the target; bulk: the scan copy's ranges written as HFiles "
                   "and bulk-loaded into the target (a real HBase over its RPC with "
                   "WebHDFS) (default: the config's [snapshot] method, else "
                   f"{SnapshotSettings().method}).")
@click.option("--keep-snapshot", is_flag=True, default=None,
              help="hbase method: keep the snapshots (else the target's is deleted after "
                   "the clone, the source's after a passing cutover check).")
@click.option("--plan", is_flag=True,
              help="Only fix T0 and the range plan of a copy made in parts, and list its "
                   "parts (none with the hbase method).")
@click.option("--parts", type=click.IntRange(min=1), metavar="N",
              help="With --plan: how many parts (default: the config's [ranges] parts).")
@click.option("--part", metavar="I/N",
              help="Only the I-th of N groups of the planned ranges, at the planned T0 "
                   "(the copy stays unfinished: --finish ends it).")
@click.option("--finish", is_flag=True,
              help="Finish a copy made in parts: copied once every planned range is "
                   "(refused, naming the missing parts, otherwise).")
@conf_option
@click.pass_context
def snapshot(ctx: click.Context, config: Path, as_json: bool, watermark: str | None,
             master: str | None, method: str | None, keep_snapshot: bool | None, plan: bool,
             parts: int | None, part: str | None, finish: bool,
             spark_conf: tuple[tuple[str, str], ...]) -> None:
    """Fix the watermark T0 and copy every cell version written before it, one task per key
    range (or, with the hbase method, per snapshot file); a rerun copies only what is not
    yet copied. A copy in parts: `--plan`, then `--part 1/4` ... `--part 4/4` (any order,
    anywhere, each retried alone), then `--finish`."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import finish_snapshot
    from hbase_migrate.lifecycle import snapshot as step
    from hbase_migrate.lifecycle.snapshot import snapshot_parts
    from hbase_migrate.ranges.groups import parse_part
    from hbase_migrate.timeutil import format_time, parse_time

    if sum((plan, part is not None, finish)) > 1 or (parts and not plan) or (
            finish and watermark):
        raise click.UsageError("give one of --plan [--parts N] [--watermark T], "
                               "--part I/N, --finish")
    spec = with_conf(load_config(config), spark_conf)
    t0 = parse_time(watermark, name="--watermark") if watermark else None
    if plan:
        result = snapshot_parts(spec, parts=parts, watermark=t0, method=method)
        m = result.metrics
        _show(result, as_json, [
            *_method_line(m),
            *([f"watermark T0 = {format_time(m['watermark'])}"] if "watermark" in m else []),
            *m.get("notes", []), *(f"part {i}/{n}" for i, n in m["parts"]),
            *_skipped(result), _state(result)])
        ctx.exit(0)
    files = (method or spec.snapshot.method) == "hbase"
    announced: list[str] = []

    def announce(line: str) -> None:  # the watermark, as soon as it is fixed
        announced.append(line)
        if not as_json:
            bar.console.print(line, markup=False, highlight=False, soft_wrap=True)

    with _progress_bar(as_json, "files" if files else "key ranges") as bar:
        progress = _ranges(bar, "export" if files else "copy", spec.name)
        if finish:
            result = finish_snapshot(spec, method=method, master=master, progress=progress,
                                     keep_snapshot=keep_snapshot)
        else:
            result = step(spec, watermark=t0, master=master, method=method,
                          keep_snapshot=keep_snapshot, progress=progress,
                          part=parse_part(part) if part else None, announce=announce)
    m = result.metrics
    _show(result, as_json, [
        *_method_line(m),
        *([f"watermark T0 = {format_time(m['watermark'])}"]
          if "watermark" in m and not announced else []),
        *_engine(result),
        *([f"snapshots {', '.join(m['snapshots'])}: {m['files']} files, "
           f"{m['files_copied']} copied ({m['bytes_copied']} bytes in "
           f"{m['export_seconds']}s, {m['bytes_per_second']} bytes/s), {m['files_kept']} "
           "equal on the target already"] if "files" in m else []),
        *m.get("notes", []), *m.get("cloned", []),
        *(f"{c['table']} {c['bounds']}: {c['rows']} rows, {c['cells']} cells copied"
          for c in m.get("copied", [])),
        *(f"{t['source']} -> {t['target']}: {t['ranges']} key ranges, {t['rows']} rows, "
          f"{t['cells']} cells" for t in m.get("tables", [])),
        *([f"{m['ranges_skipped']} key range(s) copied before: skipped"]
          if m.get("ranges_skipped") else []),
        *_written(result), *_skipped(result), _state(result)])


@click.command()
@_config
@click.option("--table", "tables", multiple=True, metavar="T",
              help="Validate this table only (source or target name; repeat).")
@click.option("--repair", is_flag=True,
              help="Rewrite the ranges that still differ from the source (and the regions "
                   "bulk loads went to), then compare them again.")
@click.option("--compact/--no-compact", default=True, show_default=True,
              help="With --repair: when a newer delete marker on the target hides a "
                   "repaired cell, ask the target to major-compact its regions and put the "
                   "cell again (--no-compact: refuse, naming the cells and the shell command).")
@click.option("--compact-wait", default="2m", show_default=True, metavar="DURATION",
              help="How long a repair waits for the compaction to drop the markers.")
@click.option("--explain", metavar="RANGE",
              help="Only list the first differing cells of one key range "
                   "(TABLE:STARTHEX-STOPHEX as the listing prints it).")
@click.option("--recompare-wait", default="1m", show_default=True, metavar="DURATION",
              help="How long a recompare waits for replay to catch up.")
@click.option("--live", is_flag=True,
              help="The source is still written: record the verdicts, no recompare, and "
                   "exit 0 even when ranges differ (they are listed).")
@click.option("--whole", is_flag=True,
              help="With --live: read every key range, not only the rows the replay runs "
                   "since the last validation wrote (the round).")
@click.option("--part", metavar="I/N",
              help="Only the I-th of N groups of the planned ranges, their digests "
                   "recorded under the validation run --run (exit 0 whatever it finds: "
                   "--judge decides).")
@click.option("--run", "run_key", metavar="KEY",
              help="The validation run the parts share (with --part or --judge).")
@click.option("--judge", is_flag=True,
              help="Judge the validation run --run from its parts' rows with Great "
                   "Expectations, once (refused unless every part's newest try succeeded "
                   "and they cover every planned range).")
@click.option("--from", "read_from", type=click.Choice(["live", "snapshot"]), default=None,
              help="How the sides are read: live scans of the region servers, or the files "
                   "of HBase snapshots taken now, over WebHDFS (the source's; the target's "
                   "too where its files can be read: no scan of either; no recompare, no "
                   "repair). Default: the config's [validate] from, else live.")
@click.option("--restart", is_flag=True,
              help="Read every range again, even when a validation with the same plan "
                   "stopped part way (by default it continues: its recorded ranges are not "
                   "read again).")
@_master
@conf_option
@click.pass_context
def validate(ctx: click.Context, config: Path, as_json: bool, tables: tuple[str, ...],
             repair: bool, compact: bool, compact_wait: str, explain: str | None,
             recompare_wait: str, live: bool, whole: bool, part: str | None,
             run_key: str | None,
             judge: bool, read_from: str, restart: bool, master: str | None,
             spark_conf: tuple[tuple[str, str], ...]) -> None:
    """Compare source and target range by range (rows, cells, digests; judged by Great
    Expectations), recompare what differs after replay caught up; exit 0 when every range
    matches (or with --live), 1 when some still differ (listed), 2 on errors. A run in
    parts: `--part 1/4 --run K` ... `--part 4/4 --run K` (any order, anywhere), then
    `--judge --run K`."""
    from hbase_migrate.validate.gx_process import GxProcess

    # GX loads in a process of its own from now on, while this one imports what it needs
    # (a part starts none: its run's judge validates every part's ranges with GX once)
    judging = None if explain or part else ctx.with_resource(GxProcess.reused())
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import judge_validation
    from hbase_migrate.lifecycle import validate as step
    from hbase_migrate.lifecycle.validate import explain as explain_range
    from hbase_migrate.ranges.groups import parse_part
    from hbase_migrate.timeutil import parse_duration

    spec = with_conf(load_config(config), spark_conf)
    if explain:
        found = explain_range(spec, explain)
        _show(found, as_json, [f"{found['table']} {found['bounds']}: "
                               f"{'equal' if found['equal'] else 'differs'}",
                               *(f"  {e}" for e in found["examples"])])
        ctx.exit(0 if found["equal"] else 1)
    wait = parse_duration(recompare_wait, name="--recompare-wait") / 1000
    if judge:
        result = judge_validation(spec, run_key, tables=tables, live=live, gx=judging)
    else:
        with _progress_bar(as_json) as bar:
            result = step(spec, tables=tables, repair=repair, master=master,
                          recompare_wait=wait, live=live, compact=compact,
                          compact_wait=parse_duration(compact_wait,
                                                      name="--compact-wait") / 1000,
                          progress=_ranges(bar, "checksums", spec.name),
                          part=parse_part(part) if part else None, run=run_key,
                          gx=judging, from_snapshot=None if read_from is None
                          else read_from == "snapshot",
                          restart=restart, whole=whole)
    m = result.metrics
    lines = [*_engine(result), *([f"source read: {m['source_read']}; "
                                  f"{m.get('source_requests', 0)} requests sent to the "
                                  "source's region servers"]
                                 if "source_read" in m else []),
             *([f"target read: {m['target_read']}; {m.get('target_requests', 0)} requests "
                "sent to the target's region servers"] if "target_snapshots" in m else []),
             *([f"validation {m['resumed']['note']}"] if m.get("resumed", {}).get("note")
               else []),
             *(f"bulk load re-copied: {b['table']} {b['bounds']}: "
                                 f"{b['puts']} puts" for b in m.get("bulk_loads_recopied", []))]
    lines += _round(m.get("round", {}))
    for t in m.get("tables", ()):
        lost = sum(t.get("accepted_losses", {}).values())
        said = (f"{t['verdict']} with accepted losses" if lost and t["verdict"] == "match"
                else t["verdict"])
        left_out = f", {lost} accepted loss(es) left out of the source's" if lost else ""
        lines.append(f"{t['source']} -> {t['target']}: {said} "
                     f"({t['ranges_matching']}/{t['ranges']} key ranges match; "
                     f"{t['source_cells']} source cells{left_out}, {t['target_cells']} "
                     "target cells)")
        for r in t["repaired"]:
            lines.append(f"  repaired {r['table']} {r['bounds']}: {r['puts']} puts, "
                         f"{r['deletes']} deletes")
            lines += [f"    {a}" for a in r["actions"]]
        for d in t["mismatched"]:
            lines.append(f"  differs: {d['table']} {d['bounds']}  (--explain {d['table']}:"
                         f"{d['start']}-{d['stop']})")
            lines += [f"    {e}" for e in d["differences"]]
    lines += _accepted(m.get("accepted_losses"), "left out of the source's side")
    lines += _written(result)  # a repair's writes
    gx = m.get("gx", {})
    _show(result, as_json, [*lines, *([f"data docs: {gx['data_docs']}"]
                                      if gx.get("data_docs") else []),
                            f"verdict: {result.verdict}", _state(result)])
    ctx.exit(0 if result.passed or live or part else 1)


def _round(found: dict[str, Any]) -> list[str]:
    """What a live validation said of the replay's round, or why it read every range."""
    if "whole" in found:
        return [f"every key range read: {found['whole']}"]
    if "tables" not in found:
        return []
    lines = [f"round of replay steps {', '.join(map(str, found['replays'])) or '(none)'}: "
             f"{found['rows']} rows written, compared on both sides"]
    for t in found["tables"]:
        lines.append(f"{t['source']} -> {t['target']}: {t['matching']}/{t['rows']} rows "
                     f"match, {t['pending']} pending (a newer source edit not yet "
                     f"replayed), {t['differing']} differ")
        lines += [f"    {e}" for e in t["examples"]]
    return lines


@click.group()
def cutover() -> None:
    """The cutover gate."""


@cutover.command()
@_config
@click.option("--max-lag", default="1m", show_default=True, metavar="DURATION",
              help="The largest replay lag that still lets the target take over.")
@click.pass_context
def check(ctx: click.Context, config: Path, as_json: bool, max_lag: str) -> None:
    """Go / no-go: nothing left to replay, no gap, small lag, a matching validation after
    the last catch-up. Exit 0 on go, 1 on no-go."""
    from hbase_migrate.config import load_config
    from hbase_migrate.lifecycle import cutover_check
    from hbase_migrate.timeutil import parse_duration

    result = cutover_check(load_config(config),
                           max_lag=parse_duration(max_lag, name="--max-lag"))
    _show(result, as_json, [*(f"against: {why}" for why in result.metrics["reasons"]),
                            *_accepted(result.metrics.get("accepted_losses"),
                                       "on the source, left out of the last validation"),
                            f"verdict: {str(result.verdict).upper()}"])
    ctx.exit(0 if result.passed else 1)
