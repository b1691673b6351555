"""A stand-in for HBase's bulk load into an embedded target, which keeps no HFiles.

HBase's bulk load is three calls to the region servers: ``PrepareBulkLoad`` (a staging folder
on the cluster's HDFS, its path the bulk token), ``BulkLoadHFile`` per region (the staged
files renamed into the region, all or none, refused when a file holds a row outside it) and
``CleanupBulkLoad`` (the folder deleted). :class:`BulkLoads` makes the same three calls, with
two differences:

* the staging is a folder on local disk (:class:`StagingFolder`), not the target's HDFS;
* a load reads each staged file with the project's HFile reader and stores its cells in the
  region servers of an embedded target running in this process, as their own bulk load does
  (no WAL entries, one ``BULK_LOAD`` marker a region). Without them (a target in another
  process) each load is acknowledged at once, the files deleted: nothing reaches the target.

:class:`BulkLoading` hands every task of a bulk copy its own :class:`BulkLoads` (its
:meth:`~BulkLoading.open_loads` stands in for :func:`hbase_migrate.snapshot.bulk_copy.open_loads`)
and records what they loaded; its :class:`LoadFaults` make loads fail as a real target's can.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.config import ClusterSpec
from hbase_migrate.hbase.connect import connect
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.replay.bulkload import Staging
from hbase_migrate.wal.model import Cell
from minihbase.regionserver import RegionServers


class StagingFolder(Staging, Protocol):
    """The target's filesystem as a local folder: a staging that says where a path is."""

    def at(self, path: str) -> Path:
        """Where ``path`` (``hdfs://nn/x/y`` or ``/x/y``) is on local disk."""
        ...


@dataclass
class LoadFaults:
    """Faults the loads meet (shared by every task's; they need the region servers):
    ``split`` splits the region of the next load called at the middle row of its files
    (written for the region whole), which then no longer fit (``loaded: false``), once;
    ``refuse`` (a row) fails every load holding it, as a call no retry cures."""

    split: bool = False
    refuse: bytes | None = None


class BulkLoads:
    """The bulk-load calls of one task over ``client`` (the target's regions) and
    ``staging``, loading into ``servers`` (None: acknowledged at once, the module)."""

    def __init__(self, client: Client, staging: StagingFolder,
                 servers: RegionServers | None = None, faults: LoadFaults | None = None) -> None:
        self.client, self.staging, self.servers = client, staging, servers
        self.faults = faults or LoadFaults()
        self.prepared = 0
        self.refused = 0  # files a region refused (a row outside it)
        self.loaded: list[Cell] = []

    def regions(self, table: str) -> list[RegionDescriptor]:
        return self.client.regions(table)

    def prepare(self, table: str) -> str:
        self.prepared += 1
        token = f"file:///stage/{id(self)}-{self.prepared}"  # tasks run side by side
        self.staging.world_folder(token)
        return token

    def load(self, table: str, region: RegionDescriptor,
             family_paths: Sequence[tuple[bytes, str]], bulk_token: str, *,
             assign_seq_num: bool = True, timeout: float | None = None) -> bool:
        if self.servers is not None and not self._store(table, region, family_paths):
            self.refused += len(family_paths)
            return False
        for _family, path in family_paths:  # moved into the region
            self.staging.at(path).unlink()
        return True

    def _store(self, table: str, region: RegionDescriptor,
               family_paths: Sequence[tuple[bytes, str]]) -> bool:
        """The staged files' cells stored in ``region``; False when they no longer fit it."""
        assert self.servers is not None
        cells: list[Cell] = []
        for _family, path in family_paths:
            with HFileReader(self.staging.at(path)) as reader:
                cells += [stored.cell for stored in reader.cells()]
        rows = sorted({c.row for c in cells})
        if len(rows) > 1 and self.faults.split:  # the region named is gone
            self.faults.split = False
            held = next(r for r in self.servers.store.table(table).regions
                        if r.contains(rows[0]))
            self.servers.split(held.encoded_name, rows[len(rows) // 2])
            return False
        if any(not region.contains(c.row) for c in cells):
            return False
        if self.faults.refuse is not None and any(c.row == self.faults.refuse for c in cells):
            raise ClusterError(f"region {region.region_name!r}: the files were refused")
        self.servers.bulk_load(table, cells)
        self.loaded += cells
        return True

    def cleanup(self, table: str, bulk_token: str) -> None:
        shutil.rmtree(self.staging.at(bulk_token), ignore_errors=True)


@dataclass
class BulkLoading:
    """How the bulk copy's tasks load into the target at ``endpoints``: each through a
    :class:`BulkLoads` of its own (``made``, in order) over one ``staging``, loading into
    ``servers`` (the target's, in this process) with ``faults``."""

    endpoints: ClusterEndpoints
    staging: StagingFolder
    servers: RegionServers | None = None
    faults: LoadFaults = field(default_factory=LoadFaults)
    made: list[BulkLoads] = field(default_factory=list)

    @contextmanager
    def open_loads(self, target: ClusterSpec) -> Iterator[tuple[BulkLoads, Staging]]:
        """A new task's bulk-load calls and the staging, its client closed after."""
        assert target.endpoints().name == self.endpoints.name
        with connect(self.endpoints) as client:
            self.made.append(BulkLoads(client, self.staging, self.servers, self.faults))
            yield self.made[-1], self.staging

    @property
    def loaded(self) -> list[Cell]:
        """Every cell loaded, task by task."""
        return [c for m in self.made for c in m.loaded]
