"""``[snapshot] method = "auto"``: the file copy (``hbase``) when the two clusters allow it,
else the bulk copy (``bulk``) when ``[snapshot] auto_bulk`` is on and the target takes a bulk
load, else the scan copy, with one line saying which and why.

The checks run in order, each cheap and read-only, and the first that fails decides
``scan``: a Bigtable cluster; a copy in parts or a watermark given (both the scan copy's
alone); a table whose ``families`` are a subset (the file copy takes whole tables); each
side's HBase root over WebHDFS (a real HBase's: ``hbase.version``) and the target's writable
by this user; each side's admin calls (snapshot, clone) possible; a target whose major
version is not older than the source's (an older HBase is not promised the newer's files);
every family's compression a codec the target reads (NONE and GZ everywhere; another one
when the target table's family carries the same codec, which the target's master tested
when it created the table, HBASE-6370), and no encrypted family (its files need the
source's master key on the target). The probes are a :class:`Probes` (the clusters'
own: :mod:`hbase_migrate.snapshot.probes`), so that each reason can be shown without them.

Where the file copy cannot run, and ``auto_bulk`` is on, the bulk copy is chosen when the
target takes a bulk load (:func:`~hbase_migrate.replay.bulkrun.bulk_refusal`: a real HBase
over its RPC with its HDFS over WebHDFS, not Kerberos-secured; its ``TargetProbe`` reads the
target's root) and the HFile writer writes every family of each target table
(:func:`~hbase_migrate.snapshot.bulk_copy.family_refusal`); the reason then says why not the
file copy and why the bulk copy, or why neither. With ``auto_bulk`` off (the default until
the bulk copy is measured on real HBase) the choice is between the other two alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import ClusterSpec, MigrationSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.replay.bulkrun import TargetProbe, bulk_refusal
from hbase_migrate.snapshot.bulk_copy import family_refusal

AUTO_METHOD = "auto"
PORTABLE_CODECS = ("NONE", "GZ")  # built into every JVM HBase runs on
T = TypeVar("T")


@dataclass(frozen=True)
class MethodChoice:
    """The copy method ``auto`` resolved to, and why (one sentence)."""

    method: str
    reason: str
    kept_from: int | None = None  # the step that chose it, for a copy that goes on

    @property
    def summary(self) -> str:
        """``scan (auto: <reason>)``, and the step it was kept from."""
        kept = f"; chosen by step #{self.kept_from}" if self.kept_from is not None else ""
        return f"{self.method} (auto: {self.reason}{kept})"

    @property
    def line(self) -> str:
        """What the step says: ``copy method: scan (auto: <reason>)``."""
        return f"copy method: {self.summary}"

    def to_metrics(self) -> dict[str, Any]:
        kept = {} if self.kept_from is None else {"method_kept_from": self.kept_from}
        return {"method": self.method, "method_asked": AUTO_METHOD,
                "method_reason": self.reason, **kept}

    @classmethod
    def of(cls, metrics: Mapping[str, Any]) -> MethodChoice:
        """The choice a step's metrics recorded (:meth:`to_metrics`)."""
        kept = metrics.get("method_kept_from")
        return cls(str(metrics["method"]), str(metrics["method_reason"]),
                   None if kept is None else int(kept))


class Probes(Protocol):
    """What the choice asks of the clusters; each answer a problem (None: fine) or a value,
    an :class:`~hbase_migrate.errors.HBaseMigrateError` when the cluster could not say."""

    def file_root(self, cluster: ClusterSpec) -> str | None:
        """Why the cluster's HBase root cannot be read over WebHDFS."""

    def writable_root(self, cluster: ClusterSpec) -> str | None:
        """Why this user may not write the cluster's HBase root."""

    def admin(self, cluster: ClusterSpec, hbase_version: str) -> str | None:
        """Why the cluster's admin calls (snapshot, clone) cannot be made from here."""

    def release(self, cluster: ClusterSpec) -> str | None:
        """The HBase version the cluster runs (``2.6.1``), None when it does not say."""

    def descriptor(self, cluster: ClusterSpec, table: str) -> TableDescriptor | None:
        """The table's descriptor, None when the table does not exist."""


class _Scan(Exception):
    """The choice is ``scan``, for the reason given."""


def choose_method(spec: MigrationSpec, probes: Probes, *, watermark: int | None = None,
                  parts: bool = False, bulk_probe: TargetProbe | None = None
                  ) -> MethodChoice:
    """What ``auto`` copies ``spec`` with (see the module); ``parts``: a copy made in
    parts is asked; ``bulk_probe`` reads the target's root for the bulk copy (over WebHDFS
    unless told)."""
    try:
        return MethodChoice("hbase", _file_copy_reason(spec, probes, watermark, parts))
    except _Scan as scan:
        if not spec.snapshot.auto_bulk:
            return MethodChoice("scan", str(scan))
        refusal = _bulk_refusal(spec, probes, bulk_probe)
        if refusal is not None:
            return MethodChoice("scan", f"{scan}; no bulk copy either: {refusal}")
        return MethodChoice("bulk", f"{scan}; the target takes a bulk load (HBase over its "
                            "RPC with its HDFS over WebHDFS, families the HFile writer "
                            "writes)")


def _bulk_refusal(spec: MigrationSpec, probes: Probes, probe: TargetProbe | None
                  ) -> str | None:
    """Why the target cannot take the bulk copy's files, or None."""
    refusal = bulk_refusal(spec.target, probe)
    for table in spec.tables:
        if refusal is not None:
            return refusal
        try:
            target = probes.descriptor(spec.target, table.target)
        except HBaseMigrateError as exc:
            return f"the target's table {table.target} could not be read: {exc}"
        if target is None:
            return f"the target has no table {table.target} to load into"
        refusal = family_refusal(target)
    return refusal


def _file_copy_reason(spec: MigrationSpec, probes: Probes, watermark: int | None,
                      parts: bool) -> str:
    """Why the file copy can be made; raises :class:`_Scan` at the first reason it cannot."""
    for cluster in (spec.source, spec.target):
        if cluster.bigtable is not None:
            raise _Scan(f"the {cluster.role} is Cloud Bigtable, copied by the scan copy only")
    if parts:
        raise _Scan("a copy made in parts is a scan copy (its parts are key ranges)")
    if watermark is not None:
        raise _Scan("a watermark was given, and the file copy takes T0 from its snapshots")
    subset = next((t for t in spec.tables if t.families), None)
    if subset is not None:
        raise _Scan(f"table {subset.source} takes some of its families, and the file copy "
                    "takes whole tables")
    for cluster in (spec.source, spec.target):
        _fail_on(_ask(probes.file_root, cluster, "HBase root over WebHDFS"))
    _fail_on(_ask(probes.writable_root, spec.target, "write access to the HBase root"))
    for cluster in (spec.source, spec.target):
        _fail_on(_ask(lambda c: probes.admin(c, spec.snapshot.hbase_version), cluster,
                      "admin calls"))
    source, target = (_release(probes, c) for c in (spec.source, spec.target))
    if _major(target) < _major(source):
        raise _Scan(f"the target runs HBase {target}, an older major version than the "
                    f"source's {source}, which is not promised to read its files")
    codecs = _codecs(spec, probes)
    return (f"both clusters are HBase ({source} to {target}) with their roots over "
            f"WebHDFS, the target's writable, admin calls possible, codecs "
            f"{', '.join(codecs)} readable on the target, no encrypted family")


def _ask(probe: Callable[[ClusterSpec], T], cluster: ClusterSpec, what: str) -> T:
    """``probe(cluster)``; a cluster that could not answer is a reason for ``scan``."""
    try:
        return probe(cluster)
    except HBaseMigrateError as exc:
        raise _Scan(f"the {cluster.role}'s {what} could not be checked: {exc}") from None


def _fail_on(problem: str | None) -> None:
    if problem:
        raise _Scan(problem)


def _release(probes: Probes, cluster: ClusterSpec) -> str:
    version = _ask(probes.release, cluster, "HBase version")
    if not version or not version.split(".", 1)[0].isdigit():
        raise _Scan(f"the {cluster.role} did not say which HBase it runs (got "
                    f"{version!r}), so the target's reading of its files is not known")
    return version


def _major(version: str) -> int:
    return int(version.split(".", 1)[0])


def _codecs(spec: MigrationSpec, probes: Probes) -> list[str]:
    """The families' codecs, each readable on the target; :class:`_Scan` names one that is
    not, or an encrypted family."""
    found = set()
    for table in spec.tables:
        source = _ask(partial(probes.descriptor, table=table.source), spec.source,
                      f"table {table.source}")
        if source is None:
            raise _Scan(f"the source has no table {table.source}")
        target = _ask(partial(probes.descriptor, table=table.target), spec.target,
                      f"table {table.target}")
        for family in source.families:
            name = family.name.decode("utf-8", "replace")
            if family.encryption:
                raise _Scan(f"family {table.source}:{name} is encrypted "
                            f"({family.encryption}): its files need the source's master "
                            "key on the target")
            codec = family.compression.upper()
            theirs = target.family(family.name) if target is not None else None
            if codec not in PORTABLE_CODECS and (
                    theirs is None or theirs.compression.upper() != codec):
                raise _Scan(f"family {table.source}:{name} is compressed with {codec}, which "
                            f"the target's table {table.target} does not carry in that "
                            "family, so the target has not shown it reads it")
            found.add(codec)
    return sorted(found)
