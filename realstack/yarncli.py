"""``hbase-migrate realstack yarn start``: a real YARN (a ResourceManager with a staging HDFS,
NodeManagers) on loopback, in the foreground."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import click

from realstack.maven import RealStackError
from realstack.yarn import HADOOP_VERSION, RealYarn, RealYarnOptions


@click.group()
def yarn() -> None:
    """Run a real Apache Hadoop YARN (from Maven Central) on loopback, for Spark."""


@yarn.command()
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/yarn"), show_default=True,
              help="Data folder: HDFS, the NodeManagers' folders, conf/ and the logs.")
@click.option("--node-managers", type=click.IntRange(1, 8), default=2, show_default=True)
@click.option("--memory-mb", type=click.IntRange(512), default=4096, show_default=True,
              help="Each NodeManager's memory for containers.")
@click.option("--vcores", type=click.IntRange(1), default=4, show_default=True,
              help="Each NodeManager's cores for containers.")
@click.option("--queue", "queues", multiple=True, default=("default",), show_default=True,
              help="A leaf queue of the capacity scheduler (repeat for more).")
@click.option("--hadoop-version", default=HADOOP_VERSION, show_default=True)
@click.option("--timeout", type=float, default=300.0, show_default=True,
              help="Seconds to wait for every NodeManager to run.")
def start(data_dir: Path, node_managers: int, memory_mb: int, vcores: int,
          queues: tuple[str, ...], hadoop_version: str, timeout: float) -> None:
    """Start YARN and run until SIGTERM or SIGINT.

    Prints DIR/yarn.json as one JSON line once every NodeManager runs: "resourcemanager",
    "web" (its REST API is under /ws/v1/cluster), "hdfs", "hadoop_conf_dir" (export it as
    HADOOP_CONF_DIR), "queues", "node_managers", "hadoop_version", "started_in_ms".
    """
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    options = RealYarnOptions(node_managers=node_managers, memory_mb=memory_mb, vcores=vcores,
                              queues=queues, hadoop_version=hadoop_version)
    cluster = RealYarn(data_dir, options).start(timeout)
    try:
        click.echo(json.dumps(cluster.described))
        while not stop.wait(0.5):
            if not cluster.running:
                raise RealStackError(f"YARN exited unexpectedly; see {cluster.log_path}")
    finally:
        cluster.stop()
