"""Before a replay run writes to a Bigtable target, the delete markers of what earlier runs
replayed are met again.

Bigtable keeps no tombstones, so the writes drop a put an earlier HBase delete marker masks
(``bigtable.masking``); the markers met are kept by the process, in the target's handle
(``Cluster.marker_memory``). A run starts at the offsets the ledger kept, in a new process
as often as not (an Airflow task), so it reads the part of each WAL file still present that
earlier runs replayed (a file replayed whole, or the bytes before the offset this run starts
at) and notes its markers only, writing nothing, in file order as the replay goes.
"""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.cluster.storage.walstore import WalFileStatus
from hbase_migrate.hbase import open_cluster
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.replay.job import FileTask, ReplayJob
from hbase_migrate.tablename import table_name
from hbase_migrate.wal.model import METAFAMILY, CellType
from hbase_migrate.wal.reader import WalReader


def recall_markers(job: ReplayJob, listed: Sequence[WalFileStatus],
                   tasks: Sequence[FileTask]) -> int:
    """Note the delete markers of the listed WAL files that lie before where this run's
    ``tasks`` start (a listed file no task reads: all of it); how many were noted. Nothing
    without a Bigtable target."""
    memory = open_cluster(job.target).marker_memory()
    if memory is None:
        return 0
    flt = ReplayFilter.build([f"{t.source}={t.target}" for t in job.tables])
    starts = {t.path: t.start_offset for t in tasks}
    noted = 0
    for found in sorted(listed, key=lambda f: (f.timestamp or 0, f.name)):
        end = starts.get(found.path)
        if end == 0:
            continue  # this run reads it from its start: the replay notes them
        try:
            with WalReader(found.path) as reader:
                for entry in reader:
                    if end is not None and entry.offset >= end:
                        break
                    target = flt.target_of(table_name(entry.key.table_name))
                    if target is None:
                        continue
                    for cell in entry.cells:
                        if cell.type != CellType.PUT and cell.family != METAFAMILY:
                            memory.note(target, cell)
                            noted += 1
        except FileNotFoundError:  # moved since the listing: its new place is listed too
            continue
    return noted
