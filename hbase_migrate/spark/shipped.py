"""The migration as Spark tasks get it: each cluster's endpoints resolved on the driver
(its ``cluster.json`` read here: an executor is another host), no ledger (tasks return what
they did and the driver records it) and the limits in force now (``limits set`` included:
tasks do not re-read them from the ledger)."""

from __future__ import annotations

import logging
from dataclasses import replace

from hbase_migrate.config import ClusterSpec, LimitSettings, MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.limits.watch import overlay, read_overrides

log = logging.getLogger(__name__)


def resolved(cluster: ClusterSpec) -> ClusterSpec:
    """``cluster`` with explicit endpoints (security and client merged in:
    :meth:`~hbase_migrate.hbase.Cluster.shipped`)."""
    return open_cluster(cluster).shipped()


def limits_now(spec: MigrationSpec) -> LimitSettings:
    """``spec``'s limits with those ``limits set`` keeps in the ledger (the configured ones,
    with a warning, when the ledger cannot be read: as running tasks keep theirs)."""
    try:
        return overlay(spec.limits, read_overrides(spec.ledger_url, spec.name))
    except Exception as exc:  # the step goes on with the configured limits
        log.warning("limits of migration %s: the ledger could not be read (%s); Spark tasks "
                    "get the configured limits", spec.name, exc)
        return spec.limits


def executor_spec(spec: MigrationSpec) -> MigrationSpec:
    """What a Spark task of ``spec`` may see: no ledger URL, no file of the driver's."""
    if not spec.ledger_url:
        return spec  # already shipped
    return replace(spec, source=resolved(spec.source), target=resolved(spec.target),
                   ledger_url="", path=None, limits=limits_now(spec))
