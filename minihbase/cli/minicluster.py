"""``hbase-migrate minicluster start``: the embedded cluster, in the foreground."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import click

from minihbase.server import MiniHBase


@click.group()
def minicluster() -> None:
    """Run the embedded HBase-compatible cluster (embedded stack)."""


@minicluster.command()
@click.option("--name", default="minihbase", show_default=True, help="Cluster name.")
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/minicluster"), show_default=True,
              help="Data folder (created when missing); a restart on it finds all data again.")
@click.option("--thrift-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Thrift1 gateway port on 127.0.0.1; 0 picks a free one.")
@click.option("--thrift2-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Thrift2 gateway port on 127.0.0.1; 0 picks a free one.")
@click.option("--transport", type=click.Choice(["buffered", "framed"]), default="buffered",
              show_default=True, help="Thrift transport of both gateways (HBase's -f).")
@click.option("--protocol", type=click.Choice(["binary", "compact"]), default="binary",
              show_default=True, help="Thrift protocol of both gateways (HBase's -c).")
@click.option("--zookeeper", metavar="HOST:PORT", default=None,
              help="ZooKeeper quorum to register with (recorded in cluster.json).")
def start(name: str, data_dir: Path, thrift_port: int, thrift2_port: int, transport: str,
          protocol: str, zookeeper: str | None) -> None:
    """Start the cluster and run until SIGTERM or SIGINT.

    When ready, prints one JSON line and writes the same to DIR/cluster.json:
    {"name", "thrift", "thrift2", "transport", "protocol", "pid", "dir"}
    """
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with MiniHBase(data_dir, name, thrift_port, thrift2_port, transport, protocol,
                   zookeeper) as cluster:
        cluster.write_cluster_json()
        click.echo(json.dumps(cluster.describe()))
        while not stop.wait(0.5):
            pass
