"""HFiles loaded into a live table over HBase's own RPC, no JVM: the second step of a bulk
replay (issue 78), after :mod:`hbase_migrate.replay.bulkfiles` wrote one file per region and
family; :mod:`hbase_migrate.replay.bulkrun` loads a replay run's windows with it.

The flow is HBase's ``LoadIncrementalHFiles``/``BulkLoadHFilesTool`` with its secure
staging (``SecureBulkLoadClient``, ``SecureBulkLoadManager``):

1. ``PrepareBulkLoad`` makes a staging folder on the cluster's filesystem (world-writable);
2. each file is uploaded over WebHDFS to ``<staging>/<family>/<name>``, each family's folder
   world-writable as HBase makes it (the region server, another user, moves the files out);
3. the table's regions are listed, the files grouped by the region holding their first row,
   and ``BulkLoadHFile`` is called per region with all its files (all families at once,
   all or none; ``assign_seq_num``: the region gives them a sequence id above all it holds,
   so their cells win over the same keys written before, as a replay's later edits must);
4. a region that answers ``loaded: false`` (a file no longer fits: it split since) or fails
   in a way a new listing may cure (moved, not served, busy, unreachable) has its files tried
   again after listing the regions again; a file whose rows now span a region boundary is
   split at the boundaries (read with the project's HFile reader, written again with its
   writer in the family's settings) and its parts uploaded. A file no longer staged after a
   call whose answer was lost was moved into its region: it counts as loaded;
5. ``CleanupBulkLoad`` deletes the staging folder, loaded or not.

Rounds are bounded (``attempts``, with a doubling pause between them); files still not
loaded then end the load in one :class:`BulkLoadError` naming the table, each file and the
region it was for. A failure retrying cannot cure (no such family, a file the server refuses)
ends it at once the same way.

Kerberos-secured clusters are refused for now (:func:`hbase_migrate.hbase.bulk.open_bulk_load`):
their region servers need a delegation token of the filesystem with each call
(``fs_token``).
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.descriptors import RegionDescriptor, TableDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.retry import Retry
from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot
from hbase_migrate.errors import HBaseMigrateError, Kind
from hbase_migrate.hbase.bulk import BulkLoadCalls
from hbase_migrate.hfile.metadata import bulk_load_metadata
from hbase_migrate.hfile.reader import HFileReader
from hbase_migrate.hfile.writer import HFileWriter
from hbase_migrate.replay.bulkfiles import family_settings

log = logging.getLogger(__name__)

CHUNK = 1 << 20  # bytes per upload chunk
ROUNDS = 10  # rounds of loading before the files left fail the load
WORLD = "777"  # a staging family folder, as SecureBulkLoadManager makes it
SHARED = "666"  # a staged file


class BulkLoadError(HBaseMigrateError):
    """HFiles that could not be bulk-loaded into a table: the line names the table, each
    file left and the region it was for, and the last failure; what was loaded stays."""


@dataclass
class _File:
    """One local file to load and what is known of it."""

    family: bytes
    local: Path
    first: bytes  # its first and last rows
    last: bytes
    staged: str = ""  # its name under the staging folder (FAMILY/NAME), once uploaded
    region: RegionDescriptor | None = None  # the region last tried
    failure: str = ""  # what the last try said

    def __str__(self) -> str:
        where = (f"region {self.region.region_name!r}" if self.region is not None
                 else "no region tried")
        return f"{self.local} (family {self.family.decode(errors='replace')}, {where}" + (
            f": {self.failure})" if self.failure else ")")


@dataclass
class BulkLoadReport:
    """What a load did: files loaded (after splitting), files split, rounds, calls."""

    loaded: list[str] = field(default_factory=list)  # local paths of the files loaded
    split: list[str] = field(default_factory=list)  # local files split at new boundaries
    rounds: int = 0
    calls: int = 0
    refused: int = 0  # calls answered ``loaded: false`` or failed and retried


def _row_of(key: bytes) -> bytes:
    """The row of a KeyValue key (row length, row, ...)."""
    return key[2:2 + int.from_bytes(key[:2], "big")]


def row_range(path: Path) -> tuple[bytes, bytes] | None:
    """The first and last rows of the HFile at ``path`` (None: it holds no cell), from its
    root index's first key and its file info's last key, as HBase's tool reads them."""
    with HFileReader(path) as reader:
        if not reader.trailer.entry_count or not reader.root_index:
            return None
        return _row_of(reader.root_index[0].key), _row_of(reader.file_info[b"hfile.LASTKEY"])


def split_hfile(path: Path, boundaries: Sequence[bytes], table: TableDescriptor,
                family: bytes, task: str) -> list[Path]:
    """The cells of the HFile at ``path`` written again as one file per range between
    ``boundaries`` (sorted row keys, each the start of a region) that holds any, beside it
    (``NAME_partN``), in the family's settings, streaming; the parts' paths."""
    descriptor = table.family(family)
    if descriptor is None:
        raise BulkLoadError(f"table {table.name}: {path}: no family "
                            f"{short_binary(family)!r} to write the file's parts in")
    settings = family_settings(descriptor)
    parts: list[Path] = []
    writer: HFileWriter | None = None
    part = -1
    try:
        with HFileReader(path) as reader:
            for stored in reader.cells():
                at = bisect.bisect_right(boundaries, stored.cell.row)
                if at != part:
                    if writer is not None:
                        writer.close(bulk_load_metadata(task))
                    part = at
                    parts.append(path.with_name(f"{path.name}_part{at}"))
                    writer = HFileWriter(parts[-1], settings)
                assert writer is not None
                writer.append(stored.cell, stored.mvcc)
        if writer is not None:
            writer.close(bulk_load_metadata(task))
    except BaseException as exc:  # the part being written is left unfinished, its file closed
        if writer is not None:
            writer.__exit__(type(exc), exc, exc.__traceback__)
        raise
    return parts


class Staging(Protocol):
    """Where the files are put for the region servers to take (absolute paths on the
    cluster's filesystem)."""

    def world_folder(self, path: str) -> None:
        """Make folder ``path`` writable by all."""
        ...

    def put(self, path: str, chunks: Iterator[bytes]) -> None:
        """Write file ``path`` from ``chunks``, readable and writable by all."""
        ...

    def status(self, path: str) -> dict[str, Any] | None:
        """The file's status, None when it is not there."""
        ...


class WebHdfsStaging(HdfsRoot):
    """The cluster's filesystem over WebHDFS at ``url`` (with its ``security``)."""

    def __init__(self, url: str, *, security: ClusterSecurity | None = None,
                 cluster: str = "") -> None:
        super().__init__(url, "/", "target", security=security, cluster=cluster)

    def world_folder(self, path: str) -> None:
        """Make folder ``path`` writable by all (the region server moves files out)."""
        self._call("makedirs", path, permission=WORLD)

    def put(self, path: str, chunks: Iterator[bytes]) -> None:
        """Write file ``path``, readable and writable by all: the region server checks
        that the caller it acts for may read and write it, whichever user uploaded it."""
        self._call("write", path, data=chunks, overwrite=True, permission=SHARED)


def _chunks(path: Path) -> Iterator[bytes]:
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            yield chunk


class BulkLoad:
    """One load of files into ``table`` through ``calls``, staged on the cluster's
    filesystem through ``staging`` (:class:`WebHdfsStaging`)."""

    def __init__(self, calls: BulkLoadCalls, table: TableDescriptor, staging: Staging, *,
                 rounds: int = ROUNDS, max_pause: float = 5.0,
                 call_timeout: float | None = None, task: str = "hbase-migrate") -> None:
        self.calls, self.table, self.staging = calls, table, staging
        self.rounds, self.max_pause = rounds, max_pause
        self.call_timeout, self.task = call_timeout, task
        self.report = BulkLoadReport()
        self._folders: set[str] = set()
        self.token = ""  # the staging folder as the server names it (hdfs://...)

    def run(self, files: Sequence[tuple[bytes, Path]]) -> BulkLoadReport:
        """Load ``files`` (``(family, local path)``) as the module says; the report."""
        pending = []
        for family, path in files:
            rows = row_range(path)
            if rows is not None:
                pending.append(_File(family, path, *rows))
        if not pending:
            return self.report
        token = self.token = self.calls.prepare(self.table.name)
        try:
            self._rounds(pending)
        except BaseException:
            try:
                self.calls.cleanup(self.table.name, token)
            except ClusterError as exc:  # the load's own failure says more
                log.warning("table %s: staging folder %s not cleaned up: %s", self.table.name,
                            token, exc)
            raise
        self.calls.cleanup(self.table.name, token)
        return self.report

    def _give_up(self, pending: list[_File]) -> BulkLoadError:
        left = "; ".join(str(f) for f in pending)
        return BulkLoadError(f"table {self.table.name}: {len(pending)} file(s) not loaded "
                             f"after {self.report.rounds} round(s): {left}")

    def _rounds(self, pending: list[_File]) -> None:
        loop = Retry(f"table {self.table.name}, bulk load", lambda exc, *_: exc,
                     attempts=self.rounds, max_backoff=self.max_pause)
        while True:
            self.report.rounds += 1
            regions = self.calls.regions(self.table.name)
            groups = self._grouped(pending, regions)
            for f in pending:
                self._upload(f)
            kinds = [self._load(region, group) for region, group in groups]
            pending[:] = [f for (_, group), kind in zip(groups, kinds, strict=True)
                          if kind is not None for f in group]
            if not pending:
                return
            worst = Kind.NEVER if Kind.NEVER in kinds else Kind.RELOCATE
            loop.failed(self._give_up(pending), worst)

    def _grouped(self, pending: list[_File], regions: list[RegionDescriptor]
                 ) -> list[tuple[RegionDescriptor, list[_File]]]:
        """The files by the region holding their first row (``pending`` in place: a file
        spanning a boundary replaced by its parts, which each fit one region)."""
        starts = [r.start_key for r in regions]
        if not regions or starts[0] != b"":
            raise BulkLoadError(f"table {self.table.name}: hbase:meta lists no region "
                                "holding the first row")
        fitted: list[_File] = []
        for f in pending:
            at = bisect.bisect_right(starts, f.first) - 1
            end = regions[at].end_key
            if not end or f.last < end:
                fitted.append(f)
                continue
            bounds = [s for s in starts[at + 1:] if s <= f.last]
            log.info("table %s: %s spans region boundaries %s: split", self.table.name,
                     f.local, [short_binary(b) for b in bounds])
            self.report.split.append(str(f.local))
            for part in split_hfile(f.local, bounds, self.table, f.family, self.task):
                rows = row_range(part)
                assert rows is not None  # a part holds a cell
                fitted.append(_File(f.family, part, *rows))
        pending[:] = fitted
        groups: dict[int, list[_File]] = {}
        for f in fitted:
            groups.setdefault(bisect.bisect_right(starts, f.first) - 1, []).append(f)
        return [(regions[i], groups[i]) for i in sorted(groups)]

    def _on_fs(self, staged: str) -> str:
        """The WebHDFS path of ``staged`` (a name under the staging folder)."""
        return f"{urlsplit(self.token).path}/{staged}"

    def _upload(self, f: _File) -> None:
        if f.staged:
            return
        family = f.family.decode()
        if family not in self._folders:
            self.staging.world_folder(self._on_fs(family))
            self._folders.add(family)
        f.staged = f"{family}/{f.local.name}"
        self.staging.put(self._on_fs(f.staged), _chunks(f.local))

    def _load(self, region: RegionDescriptor, group: list[_File]) -> Kind | None:
        """One call for the ``group`` of files of ``region``: None once they are loaded,
        else the kind of what stopped them (``RELOCATE``: try again after listing)."""
        for f in group:
            f.region = region
        self.report.calls += 1
        try:
            # the paths under the token exactly as the server named it: a file already
            # where the server stages it is neither copied nor renamed
            loaded = self.calls.load(self.table.name, region,
                                     [(f.family, f"{self.token}/{f.staged}") for f in group],
                                     self.token, timeout=self.call_timeout)
        except ClusterError as exc:
            kind = getattr(exc, "kind", Kind.NEVER)
            if kind is not Kind.NEVER and all(self.staging.status(self._on_fs(f.staged))
                                              is None for f in group):
                loaded = True  # moved into the region: the answer was lost on the way
            else:
                for f in group:
                    f.failure = str(exc)
                if kind is Kind.NEVER:
                    raise self._give_up(group) from exc
                self.report.refused += 1
                return Kind.RELOCATE
        if not loaded:
            self.report.refused += 1
            for f in group:
                f.failure = "the region server did not load them (a file no longer fits " \
                            "the region, or the server logged why)"
            return Kind.RELOCATE
        self.report.loaded += [str(f.local) for f in group]
        return None
