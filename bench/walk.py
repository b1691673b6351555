"""The WAL walk: the calls a replayed edit takes from ``commands/replay.py`` to the first byte
of a write on the wire.

Usage: ``python -m bench.walk [--client thrift2|native] [--show]`` from the project's folder.

Runs ``hbase-migrate replay`` in this process over two small WAL files (puts and deletes of
100 rows) into an embedded target cluster (its Thrift2 gateway, or HBase's own RPC found through
ZooKeeper), and captures the stack at the first socket send carrying a write call (a
``Multi``, a ``putMultiple`` or ``deleteMultiple``). A stack on a thread is joined to the
stack that started the thread (the replay's applier, a pool's worker), so the walk runs from
the command to the socket whatever thread sends. Prints:

* calls: the frames from the outermost one of ``commands/replay.py`` down to the send;
* modules: the distinct source files among them (and how many are the project's);
* climbs back up: frames entering a module the walk had already left (the walk going back
  up into a room it came through);
* calls on the way: every Python call the sending thread made since its last call into
  ``replay/file_replay.py`` (the batch handed to the target) up to the batch's first write
  on the wire, returned ones included (the flattening and regrouping of the batch shows
  here), in all and the project's, and their modules. Two WAL files are replayed, and this
  is counted for the second one's batch: its connections and region locations are warm,
  so what is counted is the batch's own way.

Asserts nothing.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import traceback
import uuid
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hbase_migrate.cli import cli
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import EmbeddedClusters
from tests.support.replay import (
    FAMILIES,
    RS1,
    RS2,
    START,
    HBaseRoot,
    T,
    source_endpoints,
    write_config,
)

ROWS = 100  # rows of each WAL file: 400 entries of one cell each, 100 of them deletes
WRITES = (b"Multi", b"putMultiple", b"deleteMultiple")  # a write call's name on the wire
COMMAND = "hbase_migrate/commands/replay.py"
ROOT = str(Path(__file__).resolve().parent.parent) + "/"

Frames = list[traceback.FrameSummary]
_parents: dict[int, Frames] = {}  # thread ident -> the stack that started it
found: list[Frames] = []
_since: dict[int, list[str]] = {}  # thread ident -> the calls' files since file_replay
way: list[list[str]] = []
HAND = "hbase_migrate/replay/file_replay.py"


def _stack() -> Frames:
    """This thread's stack joined to the one that started the thread."""
    here = [f for f in traceback.extract_stack()[:-2]  # without _stack and the patch
            if not f.filename.endswith("bench/walk.py")]
    return _parents.get(threading.get_ident(), []) + here


def _profile(frame: Any, event: str, _arg: Any) -> None:
    if event != "call":
        return
    path = frame.f_code.co_filename
    if path.endswith(HAND):
        _since[threading.get_ident()] = []
    elif (since := _since.get(threading.get_ident())) is not None:
        since.append(path)


def _patch() -> None:
    start, run = threading.Thread.start, threading.Thread.run

    def started(self: threading.Thread) -> None:
        self._walk_parent = _stack()  # type: ignore[attr-defined]
        start(self)

    def running(self: threading.Thread) -> None:
        _parents[threading.get_ident()] = getattr(self, "_walk_parent", [])
        run(self)

    threading.Thread.start = started  # type: ignore[method-assign]
    threading.Thread.run = running  # type: ignore[method-assign]
    for name in ("send", "sendall"):
        real = getattr(socket.socket, name)

        def sending(self: socket.socket, data: Any, *args: Any, _real: Any = real) -> Any:
            since = _since.get(threading.get_ident())
            if since is not None and any(w in bytes(data[:512]) for w in WRITES):
                if not found:
                    found.append(_stack())
                way.append(since)  # the batch's first write: the next ones not counted
                _since.pop(threading.get_ident())
            return _real(self, data, *args)

        setattr(socket.socket, name, sending)


def module(frame: traceback.FrameSummary) -> str:
    path = frame.filename
    return path[len(ROOT):] if path.startswith(ROOT) else Path(path).name


def walk(frames: Frames) -> Frames:
    """From the outermost frame of the command's module down to the send."""
    first = next(i for i, f in enumerate(frames) if module(f) == COMMAND)
    return frames[first:]


def counts(frames: Frames) -> tuple[int, int, int, int]:
    """(calls, modules, the project's modules, climbs back up)."""
    names = [module(f) for f in frames]
    climbs = sum(1 for i in range(1, len(names))
                 if names[i] != names[i - 1] and names[i] in names[:i - 1])
    mods = set(names)
    return len(names), len(mods), sum(m.startswith("hbase_migrate/") for m in mods), climbs


def wal_calls(table: str) -> list[list[Cell]]:
    """A few entries: puts, then a delete of one column and a put after it, per row."""
    calls = []
    for i in range(ROWS):
        row = b"r%04d" % i
        calls.append([Cell(row, b"d", b"a", T + i, CellType.PUT, b"v1"),
                      Cell(row, b"d", b"b", T + i, CellType.PUT, b"v2")])
        calls.append([Cell(row, b"d", b"a", T + i + 1, CellType.DELETE_COLUMN)])
        calls.append([Cell(row, b"d", b"a", T + i + 2, CellType.PUT, b"v3")])
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", choices=("thrift2", "native"), default="thrift2")
    parser.add_argument("--show", action="store_true", help="print the walk frame by frame")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        zk = ZooKeeperServer(folder / "zk").start() if args.client == "native" else None
        try:
            with EmbeddedClusters(folder, lambda: zk) as make:  # type: ignore[arg-type,return-value]
                src = make("source")
                dst = make("target", over=args.client)
                table = f"walk_{uuid.uuid4().hex[:8]}"
                for cluster in (src, dst):
                    assert cluster.endpoints.thrift2
                    with Thrift2Client(cluster.endpoints.thrift2) as client:
                        client.create_table(TableDescriptor(table, FAMILIES))
                root = HBaseRoot(folder / "hbase")
                root.write(RS1, T, table, wal_calls(table))
                root.write(RS2, T + 1000, table, wal_calls(table))
                ep = dst.endpoints
                target = ep if args.client == "thrift2" else ClusterEndpoints(
                    name="target", zookeeper=ep.zookeeper, znode_parent=ep.znode_parent)
                config = write_config(folder, source=source_endpoints(
                    "localhost:9090", root=root.root), target=target, tables=[table])
                _patch()
                threading.setprofile(_profile)
                sys.setprofile(_profile)
                result = CliRunner().invoke(cli, ["replay", "--config", str(config),
                                                  "--start", str(START)],
                                            catch_exceptions=False)
                sys.setprofile(None)
                threading.setprofile(None)
                if result.exit_code != 0 or not found:
                    sys.exit(f"the replay failed or sent no write:\n{result.output}")
        finally:
            if zk is not None:
                zk.stop()
    frames = walk(found[0])
    calls, mods, ours, climbs = counts(frames)
    if args.show:
        for f in frames:
            print(f"  {module(f)}:{f.lineno} {f.name}")
    on_way = [p[len(ROOT):] if p.startswith(ROOT) else Path(p).name for p in way[-1]]
    ours_on_way = [m for m in on_way if m.startswith("hbase_migrate/")]
    print(f"WAL walk over {args.client}: {calls} calls, {mods} modules ({ours} of the "
          f"project's), {climbs} climbs back up; on the way from the hand-over to the "
          f"wire: {len(on_way)} calls through {len(set(on_way))} modules, the project's "
          f"{len(ours_on_way)} through {len(set(ours_on_way))}")
    if args.show:
        print("  the project's calls on the way:", ", ".join(
            f"{m}" for m in dict.fromkeys(ours_on_way)))


if __name__ == "__main__":
    main()
