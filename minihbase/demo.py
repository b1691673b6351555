"""The main job on the embedded stack, end to end.

Starts a real ZooKeeper and two miniclusters (source and target), writes a seeded workload
to the source through both gateways, copies the table's schema (families, split points) and
data (every version, original timestamps) to the target, and compares the two cell for cell.
The comparison decides the result. Everything started is stopped at the end, also on Ctrl-C.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.thrift2 import Thrift2Client
from hbase_migrate.snapshot.copy import copy_table
from hbase_migrate.snapshot.schema import copy_schema
from hbase_migrate.validate.compare import Comparison, compare_tables
from minihbase.stack import EmbeddedStack
from minihbase.workload import Workload, WorkloadSpec


@dataclass(frozen=True)
class DemoSpec:
    root: Path
    table: str = "orders"
    ops: int = 3000
    seed: int = 7


@dataclass
class DemoResult:
    steps: list[dict[str, Any]] = field(default_factory=list)
    comparison: Comparison | None = None

    @property
    def ok(self) -> bool:
        return self.comparison is not None and self.comparison.equal


Report = Callable[[str, dict[str, Any]], None]


@contextmanager
def _step(result: DemoResult, name: str, report: Report) -> Iterator[dict[str, Any]]:
    facts: dict[str, Any] = {}
    started = time.monotonic()
    yield facts
    facts["seconds"] = round(time.monotonic() - started, 2)
    result.steps.append({"step": name, **facts})
    report(name, facts)


def run_demo(spec: DemoSpec, report: Report) -> DemoResult:
    """Run the flow; ``report(step, facts)`` is called as each step ends."""
    if spec.root.exists():
        shutil.rmtree(spec.root)
    spec.root.mkdir(parents=True)
    result = DemoResult()
    with EmbeddedStack(spec.root) as stack:
        with _step(result, "start ZooKeeper", report) as facts:
            facts["zookeeper"] = stack.start_zookeeper()
        with _step(result, "start source and target miniclusters", report) as facts:
            source = stack.start_cluster("source")
            target = stack.start_cluster("target")
            facts["source_thrift2"], facts["target_thrift2"] = source.thrift2, target.thrift2
        assert source.thrift2 and target.thrift2
        with _step(result, "workload on the source", report) as facts:
            workload = Workload(source, WorkloadSpec(table=spec.table, seed=spec.seed,
                                                     ops=spec.ops))
            try:
                workload.ensure_table()
                facts.update(workload.run().to_json())
            finally:
                workload.close()
        with Thrift2Client(source.thrift2) as src, Thrift2Client(target.thrift2) as dst:
            with _step(result, "copy schema (families, split points)", report) as facts:
                desc = copy_schema(src, dst, spec.table)
                facts["families"] = [f.name.decode() for f in desc.families]
                facts["regions"] = len(dst.regions(spec.table))
            with _step(result, "copy every version, region by region", report) as facts:
                stats = copy_table(src, dst, spec.table, spec.table)
                facts.update(rows=stats.rows, cells=stats.cells)
            with _step(result, "compare source and target cell for cell", report) as facts:
                result.comparison = compare_tables(src, dst, spec.table)
                facts.update(result.comparison.to_json())
    return result
