"""What an unlimited throttle costs the hot loops: the copy of one key range between two
embedded clusters in this process with no throttle and with an unlimited one, and the cost
of one metered piece against a bare loop.

Usage: ``python bench/throttle_overhead.py [--cells 60000] [--repeat 3]``. Prints figures
and ratios side by side (best of ``--repeat`` rounds, the runs taking turns); asserts
nothing. The two copies swap places each round (the target's store grows as it goes).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import LimitSettings
from hbase_migrate.limits import Throttle, ThrottlePlan, metered
from hbase_migrate.ranges.copy import copy_range
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase


def client(cluster: MiniHBase) -> Thrift2Client:
    assert cluster.endpoints.thrift2 is not None
    return Thrift2Client(cluster.endpoints.thrift2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=60_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    unlimited = ThrottlePlan("copy", "bench", None, LimitSettings())
    pieces = [[Cell(b"r", b"d", b"q", 1, CellType.PUT, b"v")]] * 200_000
    bare = metered_best = float("inf")
    for _ in range(args.repeat):
        began = time.perf_counter()
        for _piece in pieces:
            pass
        bare = min(bare, time.perf_counter() - began)
        began = time.perf_counter()
        for _piece in metered(pieces, Throttle(unlimited)):
            pass
        metered_best = min(metered_best, time.perf_counter() - began)
    extra = (metered_best - bare) / len(pieces) * 1e9
    print(f"metered piece, unlimited: {extra:.0f} ns more per piece (row) than a bare loop")

    with tempfile.TemporaryDirectory() as folder, \
            MiniHBase(Path(folder) / "src", "source") as src, \
            MiniHBase(Path(folder) / "dst", "target") as dst:
        desc = TableDescriptor("t", (FamilyDescriptor(b"d"),))
        with client(src) as source, client(dst) as target:
            source.create_table(desc)
            now = int(time.time() * 1000)
            source.put_cells("t", [Cell(f"row{i // 4:07d}".encode(), b"d", b"q%d" % (i % 4),
                                        now, CellType.PUT, b"x" * 100)
                                   for i in range(args.cells)])
            best: dict[str, float] = {"no throttle": float("inf"), "unlimited": float("inf")}
            for round_ in range(args.repeat):
                turns = list(best.items())
                for name, fastest in turns if round_ % 2 else reversed(turns):
                    table = f"t{round_}{name[0]}"
                    target.create_table(TableDescriptor(table, desc.families))
                    throttle = Throttle(unlimited) if name == "unlimited" else None
                    began = time.perf_counter()
                    copy_range(source, target, "t", table, throttle=throttle)
                    best[name] = min(fastest, time.perf_counter() - began)
    rates = {name: args.cells / seconds for name, seconds in best.items()}
    for name, rate in rates.items():
        print(f"copy, {name}: {rate:,.0f} cells/s")
    print(f"unlimited / no throttle: {rates['unlimited'] / rates['no throttle']:.3f}")


if __name__ == "__main__":
    main()
