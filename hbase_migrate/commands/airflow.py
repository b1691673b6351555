"""``hbase-migrate airflow up`` / ``down``: a local Airflow for this project on 127.0.0.1
(:mod:`hbase_migrate.airflow_stack`)."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from hbase_migrate.airflow_stack import AirflowStack

_DIR = click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
                    default=Path("state/demo"), show_default=True,
                    help="The embedded stack's folder: hbase connections come from its "
                         "*/cluster.json; Airflow's state goes to DIR/airflow.")


@click.group()
def airflow() -> None:
    """A local Airflow with this project's DAGs, plugins and connections."""


@airflow.command()
@_DIR
@click.option("--port", type=click.IntRange(1, 65535), help="API server / UI port "
              "(default: a free one).")
@click.option("--parallelism", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Task slots of the scheduler (each a process).")
@click.option("--spark-master", default=None,
              help="The master URL of the spark_default connection (local[N], spark://..., "
                   "yarn, k8s://...). Default: auto (in the task, Spark only for large "
                   "work), and a spark_default you set before is kept.")
@click.option("--executor", type=click.Choice(["local", "celery"]), default="local",
              show_default=True, help="local: the LocalExecutor; celery: redis-server and "
              "Celery workers, each in its own folder.")
@click.option("--database", type=click.Choice(["postgres", "sqlite"]), default="postgres",
              show_default=True, help="Airflow's metadata database: a PostgreSQL server of "
              "the stack's own (gone when it stops), or <dir>/airflow/airflow.db, kept across "
              "restarts (LocalExecutor only; every writer locks the whole file).")
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True,
              help="With celery: the number of Celery workers (they share the task slots).")
@click.option("--ledger/--no-ledger", "ledger_db", default=None,
              help="With celery (where it is the default): a ledger database on the stack's "
                   "PostgreSQL, the default ledger of every task (HBASE_MIGRATE_LEDGER); "
                   "--no-ledger if you keep one of your own (set HBASE_MIGRATE_LEDGER "
                   "before).")
def up(folder: Path, port: int | None, parallelism: int, spark_master: str | None,
       executor: str, database: str, workers: int, ledger_db: bool | None) -> None:
    """Start the database, api-server, scheduler, triggerer and dag-processor (and with
    celery the broker and the workers); print the UI address; stop them all on Ctrl-C or
    SIGTERM."""
    from hbase_migrate.airflow_stack import start_airflow

    if executor == "celery" and database != "postgres":
        raise click.UsageError("--executor celery needs --database postgres")
    if ledger_db and executor != "celery":
        raise click.UsageError("--ledger needs --executor celery (the PostgreSQL server)")
    shared = executor == "celery" and ledger_db is not False
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with start_airflow(folder, port=port, parallelism=parallelism, spark_master=spark_master,
                       executor=executor, workers=workers, shared_ledger=shared,
                       database=database) as stack:
        click.echo(f"Airflow UI: {stack.url}  (state in {stack.home}; Ctrl-C stops it)")
        for name in stack.workers:
            click.echo(f"celery {name}: {stack.services[name].cwd}")
        _echo_ledger(stack)
        _echo_shell(stack, folder)
        listed = stack.api("GET", "/connections")[1]["connections"]
        for conn in sorted(listed, key=lambda c: str(c["connection_id"])):
            click.echo(f"connection {conn['connection_id']} ({_kind(conn)})")
        while not stop.wait(1.0):
            stack.check_alive()
        click.echo("stopping Airflow ...")


def _kind(conn: dict[str, Any]) -> str:
    """``hbase, client native``: a connection's type, and an ``hbase`` one's transport."""
    try:
        client = json.loads(conn.get("extra") or "{}").get("client")
    except (ValueError, AttributeError):
        client = None
    return f"{conn['conn_type']}, client {client}" if client else str(conn["conn_type"])


def _echo_ledger(stack: AirflowStack) -> None:
    """Where the tasks' default ledger is and how the command line reaches it (the password
    never printed)."""
    from hbase_migrate.airflow_stack import LEDGER_FILE
    from hbase_migrate.audit.engine import redact
    from hbase_migrate.config import LEDGER_ENV

    url = stack.ledger_url
    if url is None:
        click.echo("ledger: each migration's SQLite file under its task's state folder "
                   "(give a ledger URL where tasks run on several hosts)")
        return
    click.echo(f"ledger: {redact(url)}, every task's default ({LEDGER_ENV})")
    if (stack.home / LEDGER_FILE).exists():
        click.echo(f"  on the command line: export {LEDGER_ENV}=\"$(cat "
                   f"{stack.home / LEDGER_FILE})\"  (or [migration] ledger_env = "
                   f"\"{LEDGER_ENV}\" in a config file)")


def _echo_shell(stack: AirflowStack, folder: Path) -> None:
    """What a shell needs for Airflow's own command line on this stack."""
    import shlex

    from hbase_migrate.airflow_shell import SHELL_FILE, exports

    click.echo("Airflow's own CLI (airflow dags list, airflow backfill create ...) on this "
               "stack, in another shell:")
    click.echo(f"  eval \"$(hbase-migrate airflow env --dir {shlex.quote(str(folder))})\"")
    if stack.postgres is None:  # no password in any of them
        click.echo("  which sets:")
        for line in exports(stack.home / SHELL_FILE):
            click.echo(f"    {line}")


@airflow.command()
@_DIR
def env(folder: Path) -> None:
    """Print the environment Airflow's own command line needs on the stack `airflow up
    --dir DIR` runs, as export lines: eval "$(hbase-migrate airflow env --dir DIR)", then
    airflow dags list, airflow backfill create ... act on that stack."""
    from hbase_migrate.airflow_shell import SHELL_FILE, exports
    from hbase_migrate.airflow_stack import STACK_FILE, AirflowStackError

    home = folder.absolute() / "airflow"
    if not (home / STACK_FILE).exists() or not (home / SHELL_FILE).exists():
        raise AirflowStackError(f"airflow env: no Airflow runs for {folder} (start one: "
                                f"hbase-migrate airflow up --dir {folder})")
    for line in exports(home / SHELL_FILE):
        click.echo(line)


@airflow.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def dags(folder: Path) -> None:
    """Write this project's DAG files into FOLDER, an Airflow's DAG folder: one short file
    per DAG, importing it from the installed package (hbase_migrate_airflow.dags). A file of
    the same name is replaced; the folder's other files are left alone."""
    from hbase_migrate.airflow_dags import write_dag_files

    for path in write_dag_files(folder):
        click.echo(f"wrote {path}")


@airflow.command()
@_DIR
def down(folder: Path) -> None:
    """Stop the Airflow that `airflow up --dir DIR` started."""
    from hbase_migrate.airflow_stack import stop_airflow

    stopped = stop_airflow(folder)
    click.echo(f"stopped {', '.join(stopped)}" if stopped else
               f"no Airflow running for {folder}")
