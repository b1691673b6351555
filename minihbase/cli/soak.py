"""``hbase-migrate soak``: linked lists, a live migration and a seeded chaos monkey on the
embedded stack; exit 0 only when nothing was lost."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import click

from hbase_migrate.workdir import WorkFolderError
from minihbase.soak import Drive, SoakResult, SoakSpec, run_soak


@click.command()
@click.option("--minutes", type=click.FloatRange(min=0.5), default=15, show_default=True,
              help="How long the workload writes and the monkey acts, before the drain "
                   "(its last 20 s without a new fault).")
@click.option("--stack", type=click.Choice(["embedded", "real"]), default="embedded",
              show_default=True, help="The clusters both sides run on: the embedded cluster, "
                   "or real Apache HBase from realstack (Java 17, Maven; no WebHDFS delay).")
@click.option("--seed", type=int, default=None,
              help="Seeds the lists and the chaos schedule (default: a new one, printed).")
@click.option("--airflow/--cli", default=True, show_default=True,
              help="Migrate through a local Airflow's DAGs, or through the command line "
                   "(prepare, snapshot, replay --follow in a child process).")
@click.option("--dir", "root", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/soak"), show_default=True,
              help="Working folder: data, logs, ledger, report. A new or empty folder, or one an "
                   "earlier soak made (cleared first); any other is refused.")
@click.option("--rate", type=click.FloatRange(min=1), default=40, show_default=True,
              help="Linked-list writes per second.")
@click.option("--client", type=click.Choice(["native", "thrift"]), default="native",
              show_default=True,
              help="How the writer, the checkers and the migration reach both clusters: "
                   "HBase's own RPC, or the Thrift2 gateways.")
@click.option("--mean-gap", type=click.FloatRange(min=1), default=15, show_default=True,
              help="Seconds between chaos actions, on average.")
def soak(minutes: float, stack: str, seed: int | None, airflow: bool, root: Path,
         rate: float, client: str, mean_gap: float) -> None:
    """Run a chaos soak and verify it as HBase's IntegrationTestBigLinkedList does.

    A writer keeps linked lists on the source (nodes over every region, each naming its
    predecessor; whole lists deleted and written again), the migration runs (through the
    Airflow DAGs, or the CLI's replay --follow), and a chaos monkey kills and restarts
    region servers, moves regions, rolls WALs, kills the replay, stops the target's front door
    (its RPC ports over --client native, its Thrift2 gateway over thrift),
    restarts Airflow's scheduler and slows WebHDFS, on a seeded schedule. At the end the
    writer stops, replay drains, the cutover gate judges and the verify step counts the
    lists on both sides: exit 0 only when the gate says go, the target's REFERENCED equals
    the source's and UNREFERENCED and UNDEFINED are 0. Progress goes to stderr; a failed
    soak prints its seed and schedule (run it again with --seed)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    if seed is None:
        seed = int.from_bytes(os.urandom(3), "big")
    spec = SoakSpec(root, minutes, seed, airflow, rate, mean_gap, stack, client)

    def say(line: str) -> None:
        click.echo(line, err=True)

    try:
        result = run_soak(spec, say, _airflow_driver() if airflow else None)
    except WorkFolderError:
        raise  # one line: the soak did not start
    except BaseException:
        _replay_hint(spec, None, say)
        raise
    if result.report:
        click.echo(f"report: {result.report}")
    if result.ok:
        click.echo(f"OK: seed {seed}, {len(result.actions)} chaos actions, "
                   f"{result.written.nodes_written if result.written else 0} nodes written, "
                   "nothing lost")
        return
    for problem in result.problems:
        say(f"FAILED: {problem}")
    _replay_hint(spec, result, say)
    sys.exit(1)


def _replay_hint(spec: SoakSpec, result: SoakResult | None, say: Callable[[str], None]) -> None:
    """The seed and the schedule, so that the same soak can be run again."""
    events = result.events if result else spec.events()
    say(f"seed {spec.seed}; the chaos schedule ({len(events)} actions):")
    done = {a["index"]: a for a in result.actions} if result else {}
    for event in events:
        outcome = done.get(event.index, {})
        say(f"  {event.line()}" + (f"  [{outcome['error']}]" if "error" in outcome else ""))
    mode = "--airflow" if spec.airflow else "--cli"
    say(f"repeat: hbase-migrate soak --minutes {spec.minutes:g} --seed {spec.seed} {mode} "
        f"--stack {spec.stack} --client {spec.client}")


if __name__ == "__main__":
    soak()


def _airflow_driver() -> Drive:
    from minihbase.soak_airflow import drive_airflow  # Airflow's side, only when asked

    return drive_airflow
