"""``hbase-migrate zookeeper start``: a real ZooKeeper on loopback, in the foreground."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import click

from minihbase.zookeeper import ZooKeeperServer
from stackprocs.process import EmbeddedStackError


@click.group()
def zookeeper() -> None:
    """Run a real ZooKeeper server on loopback (embedded stack)."""


@zookeeper.command()
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/zookeeper"), show_default=True,
              help="Data and log folder (created when missing).")
@click.option("--port", type=click.IntRange(0, 65535), default=2181, show_default=True,
              help="Client port on 127.0.0.1; 0 picks a free one.")
@click.option("--timeout", type=float, default=30.0, show_default=True,
              help="Seconds to wait for the server to answer.")
def start(data_dir: Path, port: int, timeout: float) -> None:
    """Start ZooKeeper and run until SIGTERM or SIGINT.

    Prints one JSON line when the server answers:
    {"zookeeper": "127.0.0.1:PORT", "pid": PID, "java_pid": PID, "dir": DIR}
    """
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with ZooKeeperServer(data_dir, port).start(timeout) as server:
        ready = {"zookeeper": server.address, "pid": os.getpid(), "java_pid": server.pid,
                 "dir": str(server.data_dir)}
        click.echo(json.dumps(ready), nl=True)
        while not stop.wait(0.5):
            if not server.is_running:
                raise EmbeddedStackError(f"ZooKeeper on {server.address} exited unexpectedly; "
                                         f"see {server.log_path}")

