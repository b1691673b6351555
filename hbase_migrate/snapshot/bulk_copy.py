"""The bulk copy (``[snapshot] method = "bulk"``, issue 78): the scan copy's key ranges, each
read as the scan copy reads it and written as HFiles that are bulk-loaded into the target
instead of pushed through its write path (no memstore, WAL or flush there).

What reaches the target is what the scan copy writes: every version the source's scan
returns of ``[0, T0)`` with its own timestamp (delete markers are not copied: the cells they
cover are not returned, as in the scan copy). The files are the bulk replay's
(:class:`~hbase_migrate.replay.bulkfiles.BulkWindow`): one per target region and family as
the target lists its regions when the range begins, in the target family's encoding,
compression, block size and Bloom filter, past ``SPILL_BYTES`` of cells spilled to sorted
runs under ``TMPDIR``. They are loaded by the bulk replay's load
(:class:`~hbase_migrate.replay.bulkload.BulkLoad`: staged over WebHDFS, ``BulkLoadHFile``
per region, a region split or moved since the files were written handled by listing the
regions again and splitting the files at the new boundaries). A range is recorded in the
ledger as copied only once its load is acknowledged; a range whose load failed is copied
again by a rerun (loading the same cells twice leaves the same cells: the keys and values
are equal).

The target must take a bulk load (:func:`~hbase_migrate.replay.bulkrun.bulk_refusal`): a
real HBase over its RPC with its HDFS over WebHDFS, not Kerberos-secured yet. Each task
checks it as it opens the load (:func:`open_loads`); the choice of ``auto`` asks the same
(:mod:`hbase_migrate.snapshot.choose`).
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import BulkLoadCalls, open_cluster
from hbase_migrate.hfile.writer import WRITABLE_CODECS
from hbase_migrate.limits import Throttle, metered_batches
from hbase_migrate.ranges.keyrange import KeyRange, RangeError
from hbase_migrate.ranges.lent import lent_client
from hbase_migrate.ranges.tasks import CopyJob, RangeCopy, record_copied, task_throttle
from hbase_migrate.replay.bulkfiles import BulkWindow
from hbase_migrate.replay.bulkload import BulkLoad, Staging, WebHdfsStaging
from hbase_migrate.replay.bulkrun import bulk_refusal
from hbase_migrate.replay.scratch import Scratch
from hbase_migrate.runstate import watched_batches

log = logging.getLogger(__name__)

Loads = tuple[BulkLoadCalls, Staging]  # the target's bulk-load calls and its staging


def family_refusal(table: TableDescriptor) -> str | None:
    """Why the HFile writer cannot write the files of a family of the target's ``table``
    (an encrypted family, a codec it does not write), or None."""
    for family in table.families:
        name = f"{table.name}:{family.name.decode('utf-8', 'replace')}"
        if family.encryption:
            return (
                f"the target's family {name} is encrypted ({family.encryption}), and the "
                "HFile writer writes no encrypted file"
            )
        codec = family.compression.upper()
        if codec not in WRITABLE_CODECS:
            return (
                f"the target's family {name} is compressed with {codec}, which the HFile "
                f"writer does not write (it writes {', '.join(WRITABLE_CODECS)})"
            )
    return None


@contextmanager
def open_loads(target: ClusterSpec) -> Iterator[Loads]:
    """The bulk-load calls of ``target`` and its staging over WebHDFS; a target that takes
    no bulk load raises :class:`~hbase_migrate.errors.ConfigError` saying why."""
    refusal = bulk_refusal(target)
    if refusal is not None:
        raise ConfigError(
            f"the bulk copy cannot load into the target: {refusal}; copy with "
            '[snapshot] method = "scan"'
        )
    cluster = open_cluster(target)
    endpoints = cluster.endpoints
    with cluster.bulk_load() as calls:
        yield (
            calls,
            WebHdfsStaging(
                endpoints.webhdfs or "", security=endpoints.security, cluster=endpoints.name
            ),
        )


def bulk_copy_range_task(job: CopyJob, key_range: KeyRange) -> RangeCopy:
    """Copy one range as HFiles bulk-loaded into the target, then record it in the ledger
    as copied (the module)."""
    began = time.monotonic()
    try:
        with (
            lent_client(job.source) as source,
            lent_client(job.target) as target,
            task_throttle(job.throttle) as throttle,
            open_loads(job.target) as loads,
        ):
            rows, cells = _load_range(source, target, loads, job, key_range, throttle)
    except RangeError:
        raise
    except Exception as exc:
        raise RangeError(f"bulk copy of range {key_range} failed: {exc}") from exc
    record_copied(job, key_range, rows, cells)
    return RangeCopy(key_range, rows, cells, time.monotonic() - began)


def _load_range(
    source: Client,
    target: Client,
    loads: Loads,
    job: CopyJob,
    key_range: KeyRange,
    throttle: Throttle | None,
) -> tuple[int, int]:
    """The range's cells gathered into a window over the target's regions, written and
    loaded; the rows and cells read."""
    calls, staging = loads
    table = job.target_table(key_range)
    descriptor = target.table_descriptor(table)
    refusal = family_refusal(descriptor)
    if refusal is not None:
        raise ConfigError(
            f"the bulk copy cannot write the target's files: {refusal}; copy "
            'with [snapshot] method = "scan"'
        )
    window = BulkWindow(descriptor, calls.regions(table))
    rows = cells = 0
    last: bytes | None = None
    try:
        batches = watched_batches(
            source.scan_batches(
                key_range.table, key_range.start, key_range.stop, time_range=job.time_range
            ),
            f"bulk copy of {key_range.table}",
        )
        for reply in metered_batches(batches, throttle):
            for piece in reply:
                if piece[0].row != last:  # a wide row comes in several pieces
                    rows += 1
                    last = piece[0].row
                cells += len(piece)
                window.add_cells(piece)
        if not window.count:
            return rows, cells
        task = f"hbase-migrate copy {key_range}"
        with Scratch("bulk", Path(tempfile.gettempdir())) as folder:
            written = window.write(folder, task)
            report = BulkLoad(calls, descriptor, staging, task=task).run(
                [(f.family, f.path) for f in written]
            )
    finally:
        window.discard()
    log.info(
        "range %s: %d cells bulk-loaded into %s as %d file(s) in %d round(s), %d split",
        key_range,
        cells,
        table,
        len(written),
        report.rounds,
        len(report.split),
    )
    return rows, cells
