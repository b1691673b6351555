"""``hbase-migrate replay`` and ``hbase-migrate backfill``: replay source WAL edits into the
target, with a manifest of the files read, a progress bar (stderr) and a summary.

Exit codes: 0 everything replayed; 1 a file failed (corrupt WAL, write refused: the message
names file and byte offset); 3 a gap (a WAL file vanished before it was replayed: edits lost
for the target, as ``status`` reports); 2 usage, config or cluster errors.
"""

from __future__ import annotations

import faulthandler
import json
import signal
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
)

from hbase_migrate.commands.spark_conf import conf_option, master_help, with_conf
from hbase_migrate.config import IN_PROCESS
from hbase_migrate.replay.bulkrun import path_line
from hbase_migrate.replay.job import FileOutcome, FileTask
from hbase_migrate.replay.outage import RiddenOutage
from hbase_migrate.replay.summary import FollowSummary, Observer, RunSummary
from hbase_migrate.spark.yarn import yarn_line
from hbase_migrate.timeutil import TIME_HELP, format_time, human_duration

if TYPE_CHECKING:
    from hbase_migrate.replay.job import ReplayJob
    from hbase_migrate.wal.selection import Manifest

F = TypeVar("F", bound=Callable[..., Any])


def _seconds(_ctx: click.Context, _param: click.Parameter, value: str) -> float:
    """``--lock-timeout``: a finite number of seconds >= 0 (a ConfigError: one line)."""
    from hbase_migrate.timeutil import parse_seconds

    return parse_seconds(value, name="--lock-timeout")


def _common(func: F) -> F:
    """Options shared by ``replay`` and ``backfill``."""
    for option in reversed((
        click.option("--config", "config", required=True, metavar="M.toml",
                     type=click.Path(dir_okay=False, exists=True, path_type=Path),
                     help="The migration config."),
        click.option("--dry-run", is_flag=True,
                     help="List and select the files, print the manifest; replay nothing."),
        click.option("--json", "as_json", is_flag=True,
                     help="Print the manifest (dry run) or the summary as JSON."),
        click.option("--thrift1", "force_thrift1", is_flag=True,
                     help="Write through the target's Thrift1 gateway even if it has Thrift2."),
        click.option("--lock-timeout", default="30", show_default=True, metavar="SECONDS",
                     callback=_seconds,
                     help="How long to wait for another run of the migration to finish."),
    )):
        func = option(func)
    return func


def metrics_address(follow: bool, host: str, port: int | None) -> tuple[str, int] | None:
    """Where ``--metrics-port`` serves, checked: only a follow serves metrics."""
    if port is None:
        return None
    if not follow:
        raise click.UsageError("--metrics-port serves the metrics of a --follow")
    return host, port


def metrics_options(func: F) -> F:
    """``--metrics-port`` and ``--metrics-host`` of the follows (replay and CDC)."""
    func = click.option("--metrics-host", default="127.0.0.1", show_default=True,
                        metavar="HOST", help="Where --metrics-port listens.")(func)
    return click.option("--metrics-port", type=click.IntRange(0, 65535), metavar="PORT",
                        help="With --follow: serve live metrics for Prometheus at "
                             "http://HOST:PORT/metrics (0: a free port, printed).")(func)


@click.command()
@_common
@click.option("--table", "tables", multiple=True, metavar="T",
              help="Replay only this source table (repeatable; default: all configured).")
@click.option("--since-watermark", is_flag=True,
              help="Replay edits from the migration's watermark less the margin (default).")
@click.option("--start", metavar="TIME",
              help="Replay edits written at or after TIME." + TIME_HELP)
@click.option("--end", metavar="TIME",
              help="...and before TIME (a window replay)." + TIME_HELP)
@click.option("--follow", is_flag=True, help="Repeat catch-up runs until SIGINT/SIGTERM.")
@click.option("--interval", default="30s", show_default=True, metavar="DURATION",
              help="Pause between --follow runs (30s, 0.5s, 500ms; bare number = ms).")
@click.option("--force", is_flag=True,
              help="Follow even when --interval is at or above half the archive TTL and no "
                   "replication peer pins the source's WALs (files may vanish unread).")
@click.option("--parts", "list_parts", is_flag=True,
              help="Print the parts of the next catch-up (one JSON list of WAL chain ids a "
                   "line: one per chain, chains a region move ties together in one) and "
                   "exit; nothing is recorded.")
@click.option("--chain", "chains", multiple=True, metavar="ID",
              help="Replay only this WAL chain (a part printed by --parts; repeatable).")
@click.option("--master", metavar="URL",
              help=master_help("a one-shot run's files, one task per file"))
@conf_option
@metrics_options
@click.pass_context
def replay(ctx: click.Context, config: Path, tables: Sequence[str], since_watermark: bool,
           start: str | None, end: str | None, follow: bool, interval: str, force: bool,
           list_parts: bool, chains: Sequence[str], master: str | None,
           spark_conf: tuple[tuple[str, str], ...],
           metrics_port: int | None, metrics_host: str, dry_run: bool, as_json: bool,
           force_thrift1: bool, lock_timeout: float) -> None:
    """Replay source WAL edits into the target (catch-up, or --follow).

    Catch-up reads every source WAL file (live, splitting, archived) from the offset the
    ledger recorded, so each run continues where the last one stopped. A file that vanished
    before it was replayed is a gap.

    \b
    Exit status: 0 ok; 1 a file failed; 3 a gap; 2 an error.
    """
    if since_watermark and (start or end):
        raise click.UsageError("give either --since-watermark or --start/--end, not both")
    if end and not start:
        raise click.UsageError("--end needs --start")
    if follow and (end or dry_run):
        raise click.UsageError("--follow runs catch-up: no --end, no --dry-run")
    if master and (follow or dry_run or list_parts):
        raise click.UsageError("--master is for a one-shot run: no --follow, --dry-run or "
                               "--parts")
    metrics = metrics_address(follow, metrics_host, metrics_port)
    from hbase_migrate.timeutil import parse_duration

    pause = parse_duration(interval, name="--interval") / 1000
    job = _job(config, tables, start, end, dry_run=dry_run, force_thrift1=force_thrift1,
               lock_timeout=lock_timeout, step_kind="replay",
               chains=tuple(sorted(chains)) if chains else None, spark_conf=spark_conf)
    if list_parts:
        from hbase_migrate.lifecycle.replay import replay_parts

        for part in replay_parts(job.spec, tables=tables):
            click.echo(json.dumps(part))
        ctx.exit(0)
    if follow:
        ctx.exit(_follow(job, pause, as_json, force, metrics=metrics))
    ctx.exit(_run(job, as_json, master))


@click.command()
@_common
@click.option("--table", "tables", multiple=True, required=True, metavar="T",
              help="Source table to backfill (repeatable).")
@click.option("--start", required=True, metavar="TIME",
              help="Window start (inclusive)." + TIME_HELP)
@click.option("--end", required=True, metavar="TIME",
              help="Window end (exclusive)." + TIME_HELP)
@click.pass_context
def backfill(ctx: click.Context, config: Path, tables: Sequence[str], start: str, end: str,
             dry_run: bool, as_json: bool, force_thrift1: bool, lock_timeout: float) -> None:
    """Replay the WAL edits of the window [START, END) again, with a manifest.

    Files are selected by name time and then by contents, so a file created before the
    window that holds edits inside it is read too; --dry-run prints every file and why it is
    in or out.

    \b
    Exit status: 0 ok; 1 a file failed; 3 a gap; 2 an error.
    """
    job = _job(config, tables, start, end, dry_run=dry_run, force_thrift1=force_thrift1,
               lock_timeout=lock_timeout, step_kind="backfill")
    ctx.exit(_run(job, as_json))


def _job(config: Path, tables: Sequence[str], start: str | None, end: str | None,
         spark_conf: Sequence[tuple[str, str]] = (), **options: Any) -> ReplayJob:
    from hbase_migrate.config import load_config
    from hbase_migrate.replay.job import ReplayJob
    from hbase_migrate.timeutil import parse_time

    spec = with_conf(load_config(config), spark_conf)
    return ReplayJob.from_spec(
        spec, tables=tables, start=parse_time(start, name="--start") if start else None,
        end=parse_time(end, name="--end") if end else None, **options)


def _run(job: ReplayJob, as_json: bool, master: str | None = None) -> int:
    from hbase_migrate.lifecycle.replay import run

    master = job.spec.engine.spark_master if master is None else master
    if master == IN_PROCESS or job.dry_run:
        return run_once(job, as_json, run, render_summary)
    from hbase_migrate.replay.spark import SparkReplay

    with SparkReplay(job.spec, master) as spark:
        return run_once(job, as_json, partial(run, executor=spark), render_summary)


def run_once(job: ReplayJob, as_json: bool, run: Callable[..., RunSummary],
             render: Callable[[RunSummary], str]) -> int:
    """One run of ``run(job, observer=...)`` with a progress bar; its summary or, for a dry
    run, its manifest printed; its exit code returned (replay and the CDC stream alike)."""
    with ProgressView(enabled=not job.dry_run) as view:
        summary = run(job, observer=view)
    if job.dry_run:
        assert summary.manifest is not None
        click.echo(summary.manifest.to_json() if as_json else summary.manifest.render_text(),
                   nl=as_json)
        return 0
    _print(summary, as_json, render)
    return summary.exit_code


def _print(summary: RunSummary, as_json: bool, render: Callable[[RunSummary], str]) -> None:
    if as_json:
        click.echo(json.dumps(summary.to_json(), sort_keys=True, indent=2))
    else:
        click.echo(render(summary), nl=False)


def _follow(job: ReplayJob, interval: float, as_json: bool, force: bool, *,
            metrics: tuple[str, int] | None = None) -> int:
    from hbase_migrate.lifecycle.replay import follow

    return follow_until_stopped(job, interval, as_json, force, follow, render_summary,
                                metrics)


STOP_REPORT_S = 60.0  # a follow ending slower than this after SIGTERM shows where it waits


def follow_until_stopped(job: ReplayJob, interval: float, as_json: bool, force: bool,
                         follow: Callable[..., FollowSummary],
                         render: Callable[[RunSummary], str],
                         metrics: tuple[str, int] | None = None) -> int:
    """``follow(job, interval, stop, ...)`` until SIGINT or SIGTERM, each run's summary
    printed as it ends, and the whole follow's when it stops (also on an error); with
    ``metrics`` (host, port), its live metrics served for Prometheus meanwhile.

    The first signal ends the follow after the file being read; a second one interrupts
    it at once. A follow still running :data:`STOP_REPORT_S` after the first prints where
    each of its threads waits."""
    stop, ended = threading.Event(), threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    def report_slow_stop() -> None:
        stop.wait()
        if not ended.wait(STOP_REPORT_S):
            click.echo(f"the follow of {job.name} is still ending {STOP_REPORT_S:g} s after "
                       "the stop signal (a second signal interrupts it); its threads:",
                       err=True)
            faulthandler.dump_traceback(all_threads=True)

    threading.Thread(target=report_slow_stop, name="stop watch", daemon=True).start()
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    view = ProgressView(enabled=True)
    served = None
    try:
        if metrics is not None:
            from hbase_migrate.metrics import FollowCollector, serve_metrics

            served = serve_metrics(FollowCollector(job.ledger_url, job.name, job.stream,
                                                   lambda: view.follow), metrics[1], metrics[0])
            click.echo(f"metrics at {served.url}", err=True)
        with view:
            return follow(job, interval, stop, observer=view,
                          on_run=lambda s: _print(s, as_json, render), force=force).exit_code
    finally:
        ended.set()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if served is not None:
            served.close()
        if view.follow is not None:
            click.echo(json.dumps({"follow": view.follow.to_json()}, sort_keys=True, indent=2)
                       if as_json else render_follow(view.follow), nl=as_json)


class ProgressView(Observer):
    """Bytes of the selected files (overall) and of the file being read, on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        console = Console(stderr=True)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
            TimeRemainingColumn(), console=console, transient=True,
            disable=not (enabled and console.is_terminal))
        self.total: TaskID | None = None
        self.current: TaskID | None = None
        self.base = 0
        self.follow: FollowSummary | None = None  # the live summary of a --follow
        self.label = ""

    def __enter__(self) -> Self:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.progress.stop()

    def planned(self, manifest: Manifest, tasks: Sequence[FileTask]) -> None:
        size = sum(max(0, (t.size or 0) - t.start_offset) for t in tasks)
        self.label = f"{len(tasks)} WAL files"
        self.total = self.progress.add_task(self.label, total=size or None)

    def file_started(self, task: FileTask) -> None:
        name = task.path.rsplit("/", 1)[-1]
        self.base = task.start_offset
        self.current = self.progress.add_task(name, total=task.size or None,
                                              completed=task.start_offset)

    def file_advanced(self, task: FileTask, offset: int) -> None:
        from hbase_migrate.limits.registry import in_force_text

        if self.current is not None:
            self.progress.update(self.current, completed=offset)
        if self.total is not None:
            self.progress.advance(self.total, offset - self.base)
            limits = in_force_text()
            if limits:
                self.progress.update(self.total, description=f"{self.label} ({limits})")
        self.base = offset

    def file_finished(self, task: FileTask, outcome: FileOutcome) -> None:
        if self.current is not None:
            self.progress.remove_task(self.current)
            self.current = None

    def waiting(self, outage: RiddenOutage, retry_in: float, lag: int | None) -> None:
        lagging = f"; replay lag {human_duration(lag)}" if lag is not None else ""
        self.progress.console.print(
            f"waiting for {outage.outage.describe()} since {format_time(outage.began)} "
            f"({human_duration(outage.seconds * 1000)} so far, next try in "
            f"{human_duration(retry_in * 1000)}{lagging}): "
            f"{outage.outage.error}", markup=False, highlight=False, soft_wrap=True)

    def resumed(self, outage: RiddenOutage) -> None:
        self.progress.console.print(
            f"{outage.outage.describe()} answers again after "
            f"{human_duration(outage.seconds * 1000)}; resuming",
            markup=False, highlight=False, soft_wrap=True)

    def follow_started(self, summary: FollowSummary) -> None:
        self.follow = summary

    def follow_ended(self, summary: FollowSummary) -> None:
        self.follow = summary


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def _accepted(data: dict[str, Any]) -> list[str]:
    """A Bigtable target's accepted losses the run's writes left out (one line), if any."""
    from hbase_migrate.hbase.bigtable_target import losses_line

    line = losses_line((data.get("bigtable") or {}).get("known_losses", {}),
                       "counted above, not written to Bigtable")
    return [line] if line else []


_VERDICTS = {0: "ok", 1: "FAILED", 3: "GAPS"}  # by exit code


def render_follow(f: FollowSummary) -> str:
    """The summary of a whole ``--follow``, printed when it stops."""
    took = human_duration((f.ended or f.started) - f.started)
    lines = [f"follow of migration {f.migration} ({f.stream}) ended after {took}: {f.runs} "
             f"runs, {f.files_read} WAL files read ({f.files_completed} finished), "
             f"{f.bytes} bytes, {f.entries} entries",
             f"cells written: {_counts(dict(f.cells))}"]
    if f.lag is not None:
        lines.append(f"replay lag as it ended: {human_duration(f.lag)}")
    lines.append(f"outages ridden out: {len(f.outages)}" if f.outages else "outages: none")
    lines += [f"  {o.outage.describe()} from {format_time(o.began)} for "
              f"{human_duration(o.seconds * 1000)} "
              f"({o.probes} probes)"
              for o in f.outages]
    if f.error:
        lines.append(f"stopped by: {f.error}")
    lines.append(f"result: {'error' if f.error else _VERDICTS[f.exit_code]}")
    return "\n".join(lines) + "\n"


def render_summary(s: RunSummary) -> str:
    """The summary for a terminal; problems last, each on its own line."""
    data = s.to_json()
    window = (f"[{format_time(s.start)}, {format_time(s.end)})" if s.end is not None
              else f"from {format_time(s.start)}")
    lines = [
        f"{s.mode} replay of migration {s.migration} {window}: {data['files_listed']} WAL "
        f"files listed, {data['files_selected']} selected, {data['files_read']} read "
        f"({data['files_completed']} finished), {data['bytes']} bytes, "
        f"{data['entries']} entries",
        f"cells written: {_counts(data['cells'])}",
        *_accepted(data),
        f"approximated deletes: {data['approximated_deletes']}; markers: "
        f"{_counts(data['markers'])}",
    ]
    if s.engine is not None:
        lines.append(f"engine: {s.engine['engine']} ({s.engine['engine_reason']})")
        if s.engine.get("executors"):
            lines.append(f"executors: {s.engine['executors']}")
        if s.engine.get("yarn"):
            lines.append(yarn_line(s.engine["yarn"]))
    if s.replay_path is not None:
        lines.append(path_line(s.replay_path))
    lines += [f"moved to the archive: {a} -> {b}" for a, b in s.moves]
    lines += [f"waited {human_duration(o['seconds'] * 1000)} for the {o['service']} "
              f"{o['endpoint']}: {o['error']}" for o in s.outages]
    if s.retention is not None and not s.retention.guaranteed:
        lines.append(f"archived WAL retention {s.retention.kind}: {s.retention.detail}")
    for b in data["bulk_loads"]:
        lines.append(f"bulk load (data the WAL does not carry; re-copy this region's key "
                     f"range from the source): table {b['table']} region {b['region']} "
                     f"(start key {b['start_key'] or '-inf'}, hex) families "
                     f"{','.join(b['families'])} ({b['file']} at byte offset {b['offset']})")
    lines += [g.describe() for g in s.gaps]
    if s.open_gaps > len(s.gaps):
        lines.append(f"{s.open_gaps} open gap(s) in the ledger: see `hbase-migrate status`")
    lines += [f"FAILED {o.path}: {o.error}" for o in s.failures]
    if s.lag is not None:  # a catch-up's: what a follow watches fall, run after run
        lines.append(f"replay lag: {human_duration(s.lag)}" + (
            " (every edit of this run's WAL listing replayed)" if s.lag == 0 else ""))
    lines.append(f"result: {_VERDICTS[s.exit_code]}")
    return "\n".join(lines) + "\n"
