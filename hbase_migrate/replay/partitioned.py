"""Several gateway connections for one replay task: each batch is split by row among
``[replay] writers`` targets and written on all of them at once. A row always goes to the
same writer, in the batch's order, and :meth:`apply` returns only once every part was
acknowledged, so each row's edits keep their order across batches; rows are independent in
HBase, so that is all the order replay needs."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.replay.apply import AppliedCounts, ReplayTarget
from hbase_migrate.replay.mutations import RowMutation


class RowPartitionedTarget:
    """``targets`` (one connection each), the rows of every batch split among them."""

    def __init__(self, targets: Sequence[ReplayTarget]) -> None:
        if len(targets) < 2:
            raise ValueError("a row-partitioned target needs two writers or more")
        self.targets = list(targets)
        self._pool = ThreadPoolExecutor(len(targets) - 1, thread_name_prefix="replay writer")

    @property
    def name(self) -> str:
        return self.targets[0].name

    def describe(self, table: str) -> TableDescriptor:
        return self.targets[0].describe(table)

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        parts: list[list[RowMutation]] = [[] for _ in self.targets]
        n = len(parts)
        for mutation in mutations:
            parts[zlib.crc32(mutation.row) % n].append(mutation)
        work = [(t, p) for t, p in zip(self.targets, parts, strict=True) if p]
        futures = [self._pool.submit(t.apply, table, p) for t, p in work[1:]]
        counts = AppliedCounts()
        first: BaseException | None = None
        try:
            if work:
                counts.add(work[0][0].apply(table, work[0][1]))
        except BaseException as exc:  # the other parts are still waited for
            first = exc
        for future in futures:
            try:
                counts.add(future.result())
            except BaseException as exc:
                first = first or exc
        if first is not None:
            raise first
        return counts

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        for target in self.targets:
            target.close()
