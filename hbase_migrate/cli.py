"""The ``hbase-migrate`` command line.

Command groups are imported only when used, so ``hbase-migrate --help`` and small commands
start fast. Groups of the core live in ``hbase_migrate.commands``; other packages (the
embedded cluster) contribute theirs through the ``hbase_migrate.commands`` entry-point group,
which keeps the core free of imports from them.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import importlib
import io
import logging
import os
import signal
import sys
import tempfile
import time
import traceback
from importlib.metadata import entry_points
from pathlib import Path

import click

from hbase_migrate.cli_examples import add_examples, epilog
from hbase_migrate.errors import HBaseMigrateError, StepInterrupted

# name -> ("module:attribute", one-line help shown without importing the module)
CORE_COMMANDS: dict[str, tuple[str, str]] = {
    "wal": ("hbase_migrate.commands.wal:wal", "Read WAL files: dump entries, count statistics."),
    "hfile": ("hbase_migrate.commands.hfile:hfile",
              "Read HFiles (store files): dump cells, show file info."),
    "ledger": ("hbase_migrate.commands.ledger:ledger", "Manage the audit ledger database."),
    "status": ("hbase_migrate.commands.status:status", "Show migration progress, lag and gaps."),
    "replay": ("hbase_migrate.commands.replay:replay",
               "Replay source WAL edits into the target (catch-up or --follow)."),
    "backfill": ("hbase_migrate.commands.replay:backfill",
                 "Replay the WAL edits of a time window again, with a manifest."),
    "cdc": ("hbase_migrate.commands.cdc:cdc",
            "Stream the source's WAL edits to Kafka (the CDC stream)."),
    "config": ("hbase_migrate.commands.config:config",
               "Print a migration's config as its ledger recorded it."),
    "cluster": ("hbase_migrate.commands.cluster:cluster",
                "Inspect a cluster: servers, master, replication, WAL files."),
    "prepare": ("hbase_migrate.commands.lifecycle:prepare",
                "Create the target tables (families, split points)."),
    "snapshot": ("hbase_migrate.commands.lifecycle:snapshot",
                 "Fix the watermark T0 and copy every cell version before it."),
    "validate": ("hbase_migrate.commands.lifecycle:validate",
                 "Compare the target with the source."),
    "cutover": ("hbase_migrate.commands.lifecycle:cutover",
                "The cutover gate: go / no-go with reasons."),
    "airflow": ("hbase_migrate.commands.airflow:airflow",
                "Run a local Airflow with the project's DAGs (up / down)."),
    "limits": ("hbase_migrate.commands.limits:limits",
               "Show or change a migration's throttles while its steps run."),
    "report": ("hbase_migrate.commands.report:report",
               "Write the audit report (one HTML file, from the ledger alone)."),
    "bigtable": ("hbase_migrate.commands.bigtable:bigtable",
                 "The Bigtable emulator, for a migration to Bigtable."),
}

ENTRY_POINT_GROUP = "hbase_migrate.commands"
_PLUGIN_HELP = {
    "zookeeper": "Run a real ZooKeeper server on loopback (embedded stack).",
    "minicluster": "Run the embedded HBase-compatible cluster (embedded stack).",
    "workload": "Write a seeded application workload to a cluster.",
    "demo": "Run the main job end to end on the embedded stack.",
    "soak": "A chaos soak: linked lists, a live migration, seeded faults, a verify.",
    "soak-crash": "The migration's processes killed at seeded points, rerun, checked.",
    "realstack": "Run real Apache HBase and HDFS from Maven Central (Java 17, Maven).",
}


def _plugin_commands() -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found[ep.name] = (ep.value, _PLUGIN_HELP.get(ep.name, ""))
    return found


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def _registry(self) -> dict[str, tuple[str, str]]:
        return {**_plugin_commands(), **CORE_COMMANDS}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self._registry())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self._registry().get(cmd_name)
        if target is None:
            return None
        module_name, _, attr = target[0].partition(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target[0]} is not a click command")
        add_examples(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List commands with their registered help, without importing them."""
        rows = [(name, help_text) for name, (_, help_text) in sorted(self._registry().items())]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog=epilog(""))
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=lambda ctx, _, value: _version(ctx, value),
              help="Show the version and which hot paths run compiled, and exit.")
def cli(verbose: int) -> None:
    """Move live HBase tables between clusters with no downtime, and prove the copy."""
    _run["verbose"] = verbose
    level = {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # The WebHDFS library logs every request at info: that is -vv's detail, not -v's.
    logging.getLogger("hdfs").setLevel(logging.DEBUG if verbose > 1 else logging.WARNING)
    # kazoo warns of every dropped connection; the command's own line says what failed
    logging.getLogger("kazoo").setLevel(level if verbose else logging.ERROR)


_run = {"verbose": 0}  # this process's -v count, for the error handler of main()


def _version(ctx: click.Context, value: bool) -> None:
    """``--version``: the package's version, then which hot paths run compiled."""
    if not value or ctx.resilient_parsing:
        return
    from importlib.metadata import version

    from hbase_migrate.compiled import summary

    click.echo(f"hbase-migrate, version {version('hbase-migrate')}")
    click.echo(summary())
    ctx.exit()


def _crash_report(exc: BaseException) -> str:
    """Where the traceback of an unexpected error went: the screen with ``-v``, else a file
    (``$HBASE_MIGRATE_LOG_DIR``, default the temp folder) named in the one-line message."""
    text = "".join(traceback.format_exception(exc))
    logging.getLogger("hbase_migrate").debug("unexpected error\n%s", text)
    if _run["verbose"]:
        sys.stderr.write(text)
        return "traceback above"
    folder = Path(os.environ.get("HBASE_MIGRATE_LOG_DIR") or tempfile.gettempdir())
    path = folder / f"hbase-migrate-error-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.txt"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError:
        return "run again with -v for the traceback"
    return f"traceback in {path}; -v shows it"


def _stacks_on_usr1() -> None:
    """``kill -USR1 <pid>`` prints every thread's stack to stderr: where a stuck run waits
    (not when stderr is no file, as under a caller capturing it)."""
    with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
        faulthandler.register(signal.SIGUSR1, all_threads=True)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: every error becomes one clear line and an exit code: 2
    for the project's own errors, 1 for anything unexpected (its traceback goes to a file,
    or to the screen with ``-v``). No traceback reaches a user unasked."""
    _run["verbose"] = 0
    _stacks_on_usr1()
    try:
        _main(argv)
    finally:
        # the interpreter's last collections skip what is alive now: leaving after the
        # imports of a big step costs a tenth of what it did (0.1 s instead of 0.9 s)
        gc.freeze()


def _main(argv: list[str] | None) -> None:
    try:
        code = cli.main(args=argv, prog_name="hbase-migrate", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as exc:  # one line, like every other error
        where = exc.ctx.command_path if exc.ctx else "hbase-migrate"
        click.echo(f"hbase-migrate: error: {exc.format_message()} (see '{where} --help')",
                   err=True)
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except StepInterrupted as exc:  # Ctrl-C: what was done and kept
        click.echo(f"hbase-migrate: stopped: {exc}", err=True)
        sys.exit(130)
    except HBaseMigrateError as exc:
        click.echo(f"hbase-migrate: error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        where = _crash_report(exc)
        message = " ".join(str(exc).split()) or "(no message)"
        click.echo(f"hbase-migrate: error: unexpected {type(exc).__name__}: {message} "
                   f"({where})", err=True)
        sys.exit(1)
    # Without standalone mode, click returns the code of ctx.exit(n) instead of exiting.
    sys.exit(code if isinstance(code, int) else 0)
