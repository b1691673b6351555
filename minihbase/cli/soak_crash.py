"""``hbase-migrate soak-crash``: the migration's own processes SIGKILLed at seeded random
points on the embedded stack, each step run again, the invariants checked; exit 0 only when
every one held and the target ends equal to the source."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import click

from hbase_migrate.soak.crash_plan import STEPS_WITH_CDC
from hbase_migrate.workdir import WorkFolderError
from minihbase.crash import run_crash
from minihbase.crash_clusters import STACKS
from minihbase.crash_dags import EXECUTORS, TABLE_HEAD
from minihbase.crash_result import CrashResult, CrashSpec


@click.command("soak-crash")
@click.option("--kills", type=click.IntRange(min=0), default=50, show_default=True,
              help="How many kills, spread over the steps in turn (prepare, snapshot, "
                   "replay, replay --follow, validate --live, a validation part, its judge, "
                   "validate --repair, cutover check; with --cdc the CDC stream, a catch-up "
                   "run and cdc --follow).")
@click.option("--seed", type=int, default=None,
              help="Seeds the kills' moments and the lists (default: a new one, printed).")
@click.option("--dir", "root", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/soak-crash"), show_default=True,
              help="Working folder: data, logs, ledger, summary.json. A new or empty folder, "
                   "or one an earlier soak-crash made (cleared first); any other is refused.")
@click.option("--rate", type=click.FloatRange(min=1), default=20, show_default=True,
              help="Linked-list writes per second on the source.")
@click.option("--cdc", is_flag=True,
              help="Kill the CDC stream too (hbase-migrate cdc and cdc --follow, last in "
                   "each round) on a real "
                   "Kafka broker (started from Maven Central, or --kafka), and check that the "
                   "topic holds every edit since T0 with its sequence id; without a broker "
                   "the step is left out, in one line saying why.")
@click.option("--kafka", metavar="HOST:PORT", default=None,
              help="With --cdc: a running broker's bootstrap address instead of starting one.")
@click.option("--steps", metavar="S,S,...", default=None,
              help="Kill only these steps, in turn (default: every step; a step may repeat).")
@click.option("--airflow", "airflow", metavar="EXECUTOR[,...]", multiple=True,
              help="After the commands' kills, run the migration through the DAGs on an "
                   "Airflow of its own with each executor named (local, celery; repeatable "
                   "or a comma list) and kill one task process in each DAG's run (the copy, "
                   "the start's judge, the replay, a validation part, the cutover gate); "
                   "Airflow's retry runs it again and the invariants are checked.")
@click.option("--stack", "stack_kind", type=click.Choice(STACKS), default="embedded",
              show_default=True,
              help="The clusters the commands run on: the embedded stack, or a real HBase "
                   "2.6.1 pair (two realstack JVMs; Java 17 and Maven needed; slower: run "
                   "fewer kills).")
def soak_crash(kills: int, seed: int | None, root: Path, rate: float, cdc: bool,
               kafka: str | None, steps: str | None, airflow: tuple[str, ...],
               stack_kind: str) -> None:
    """Kill the migration anywhere and check that it converges and loses nothing.

    Starts the embedded stack (ZooKeeper, a source with three region servers writing real
    WALs, a target) and a linked-list writer on the source; then, kill after kill, starts
    a step of the migration as its hbase-migrate command, SIGKILLs its process group after
    a seeded delay, runs the same command again to its end and checks the ledger: no
    source WAL file with edits after T0 missing from it, no step left running for a
    process that is gone, no duplicate rows, no go from the cutover gate while any of this
    fails; with --cdc, the CDC topic read back against the edits the source's WAL files
    hold since T0. At the end the writer stops, a last replay drains, the gate judges and
    the two clusters are compared cell by cell. With --airflow, each executor's Airflow
    then runs the DAGs on clusters of its own, one task process SIGKILLed per run. The
    summary (kills per step, work redone per kill from the ledger, seconds to converge,
    invariants; the Airflow kills' table) goes to stdout and to summary.json in the
    working folder; progress goes to stderr."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if seed is None:
        seed = int.from_bytes(os.urandom(3), "big")
    executors = _executors(airflow)
    spec = CrashSpec(root, kills, seed, rate, cdc=cdc, kafka=kafka, airflow=executors,
                     stack=stack_kind)
    if steps:
        spec = replace(spec, steps=_steps(steps))

    def say(line: str) -> None:
        click.echo(line, err=True)

    repeat = (f"seed {seed}; repeat: hbase-migrate soak-crash --kills {kills} --seed {seed}"
              + (" --cdc" if cdc else "") + (f" --steps {steps}" if steps else "")
              + (f" --airflow {','.join(executors)}" if executors else "")
              + (f" --stack {stack_kind}" if stack_kind != "embedded" else ""))
    try:
        result = run_crash(spec, say)
    except WorkFolderError:
        raise  # one line: the run did not start
    except BaseException:
        say(repeat)
        raise
    say(repeat)
    _report(result, root, say)
    if not result.ok:
        sys.exit(1)
    click.echo(f"OK: seed {seed}, {len(result.kills)} kills, every invariant held")


def _steps(steps: str) -> tuple[str, ...]:
    chosen = tuple(s.strip() for s in steps.split(",") if s.strip())
    unknown = [s for s in chosen if s not in STEPS_WITH_CDC]
    if unknown or not chosen:
        raise click.BadParameter(f"{', '.join(unknown) or steps!r}: not a step; the "
                                 f"steps are {', '.join(STEPS_WITH_CDC)}",
                                 param_hint="--steps")
    return chosen


def _executors(given: tuple[str, ...]) -> tuple[str, ...]:
    executors = tuple(dict.fromkeys(e.strip() for names in given for e in names.split(",")
                                    if e.strip()))
    if [e for e in executors if e not in EXECUTORS]:
        raise click.BadParameter(f"{', '.join(given)}: the executors are "
                                 f"{', '.join(EXECUTORS)}", param_hint="--airflow")
    return executors


def _report(result: CrashResult, root: Path, say: Callable[[str], None]) -> None:
    """The summary without its per-kill rows on stdout, the Airflow kills' table, and on
    failure what failed (to stderr)."""
    summary = result.summary()
    summary["airflow"] = [{k: v for k, v in run.items() if k != "per_kill"}
                          for run in summary.get("airflow", [])]
    click.echo(json.dumps({k: v for k, v in summary.items() if k != "per_kill"
                           and (k != "airflow" or v)}, indent=2))
    if result.airflow:
        click.echo(TABLE_HEAD)
        for run in result.airflow:
            for line in run.table():
                click.echo(line)
    click.echo(f"summary: {root / 'summary.json'}")
    if result.ok:
        return
    for name, found in result.invariants.items():
        for line in found[:10]:
            say(f"FAILED {name}: {line}")
    for problem in result.problems:
        say(f"FAILED: {problem}")
    for run in result.airflow:
        for line in [*run.problems, *(f"{k['dag']} {k['task']}: {v}" for k in run.kills
                                      for v in k["violations"])][:10]:
            say(f"FAILED airflow ({run.executor}): {line}")

if __name__ == "__main__":
    soak_crash()
