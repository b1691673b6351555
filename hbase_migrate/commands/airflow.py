"""``hbase-migrate airflow up`` / ``down``: a local Airflow for this project on 127.0.0.1
(:mod:`hbase_migrate.airflow_stack`)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import click

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
@click.option("--spark-master", default="local[2]", show_default=True,
              help="The master URL of the spark_default connection.")
@click.option("--executor", type=click.Choice(["local", "celery"]), default="local",
              show_default=True, help="local: the LocalExecutor on SQLite; celery: PostgreSQL, "
              "redis-server and Celery workers, each in its own folder.")
@click.option("--workers", type=click.IntRange(1, 16), default=2, show_default=True,
              help="With celery: the number of Celery workers (they share the task slots).")
@click.option("--ledger", "ledger_db", is_flag=True,
              help="With celery: also create a ledger database on the stack's PostgreSQL and "
                   "print its URL (for the ledger Param or [migration] ledger).")
def up(folder: Path, port: int | None, parallelism: int, spark_master: str, executor: str,
       workers: int, ledger_db: bool) -> None:
    """Start api-server, scheduler, triggerer and dag-processor (and with celery the database,
    the broker and the workers); print the UI address; stop them all on Ctrl-C or SIGTERM."""
    from hbase_migrate.airflow_stack import start_airflow

    if ledger_db and executor != "celery":
        raise click.UsageError("--ledger needs --executor celery (the PostgreSQL server)")
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with start_airflow(folder, port=port, parallelism=parallelism, spark_master=spark_master,
                       executor=executor, workers=workers,
                       databases=["ledger"] if ledger_db else []) as stack:
        click.echo(f"Airflow UI: {stack.url}  (state in {stack.home}; Ctrl-C stops it)")
        for name in stack.workers:
            click.echo(f"celery {name}: {stack.services[name].cwd}")
        if ledger_db:
            click.echo(f"ledger: {stack.database_url('ledger')}")
        listed = stack.api("GET", "/connections")[1]["connections"]
        for conn_id, conn_type in sorted({(c["connection_id"], c["conn_type"]) for c in listed}):
            click.echo(f"connection {conn_id} ({conn_type})")
        while not stop.wait(1.0):
            stack.check_alive()
        click.echo("stopping Airflow ...")


@airflow.command()
@_DIR
def down(folder: Path) -> None:
    """Stop the Airflow that `airflow up --dir DIR` started."""
    from hbase_migrate.airflow_stack import stop_airflow

    stopped = stop_airflow(folder)
    click.echo(f"stopped {', '.join(stopped)}" if stopped else
               f"no Airflow running for {folder}")
