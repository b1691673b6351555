"""The CDC stream: the source's WAL edits as Kafka messages (DESIGN 6b), acknowledged before
they count.

A CDC run is a replay run whose sink is Kafka (:class:`~hbase_migrate.sinks.kafka.KafkaSink`)
instead of the target cluster: the same listing, moves, ``-splitting`` folders, gaps and
coverage, file selection, ordering and per-file offsets, but kept in the ledger under the
stream ``cdc`` (its own files, offsets, gaps and lock) and recorded as the step ``cdc``
(``cdc-backfill`` for a window), so CDC and replay progress never mix and either can run
without the other. Offsets are recorded only once the broker acknowledged every message up
to them; a rerun after a crash sends the unacknowledged tail again (at least once). The
migration's state is left alone.

With ``[cdc] row_image = true`` each edit is also applied to the target cluster (exactly as
replay applies it: idempotent, original timestamps) and the row read back right after it
rides along in the message, read over the target's client (native, or its Thrift2 gateway).
``[cdc] envelope`` is the message format: ``native`` (:mod:`hbase_migrate.sinks.messages`)
or ``debezium`` (:mod:`hbase_migrate.sinks.debezium`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hbase_migrate.audit.records import Provenance
from hbase_migrate.config import CdcSettings, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.replay.job import DEFAULT_LOCK_TIMEOUT, ReplayJob

if TYPE_CHECKING:  # the replay engine is imported when the stream runs, not with the package
    from hbase_migrate.replay.summary import FollowSummary, Observer, RunSummary
    from hbase_migrate.sinks.kafka import KafkaSink

CDC_STREAM = "cdc"


def cdc_settings(spec: MigrationSpec) -> CdcSettings:
    """The spec's ``[cdc]`` section (ConfigError when it has none)."""
    if spec.cdc is None:
        where = f"{spec.path}: " if spec.path else ""
        raise ConfigError(f"{where}migration {spec.name!r} has no [cdc] section; add one with "
                          "bootstrap = \"host:9092\" (and topic = \"...\")")
    return spec.cdc


def cdc_job(spec: MigrationSpec, *, tables: Sequence[str] = (), start: int | None = None,
            end: int | None = None, dry_run: bool = False,
            lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
            provenance: Provenance | None = None) -> ReplayJob:
    """The CDC job of ``spec``: catch-up without ``end`` (from the watermark less the margin,
    or ``start``), else the window ``[start, end)`` streamed again."""
    cdc_settings(spec)
    return ReplayJob.from_spec(spec, tables=tables, start=start, end=end, dry_run=dry_run,
                               lock_timeout=lock_timeout,
                               step_kind="cdc" if end is None else "cdc-backfill",
                               provenance=provenance or Provenance(), stream=CDC_STREAM)


def open_sink(job: ReplayJob) -> KafkaSink:
    """The Kafka sink of ``job`` (with the target cluster when row images are asked)."""
    from hbase_migrate.sinks.kafka import KafkaSink  # the Kafka client, only when streaming

    settings = cdc_settings(job.spec)
    sources = {t.target: t.source for t in job.tables}
    handle = open_cluster(job.source)
    source = handle.endpoints
    cluster = handle.cluster_id() if settings.envelope == "debezium" else ""
    # A GSSAPI broker's realm: the secured source's (one process holds one identity).
    krb5_conf = source.security.krb5_conf if source.security is not None else None
    if not settings.row_image:
        return KafkaSink(settings, sources, cluster=cluster, krb5_conf=krb5_conf)
    try:
        reader = open_cluster(job.target).client()
    except ConfigError as exc:
        raise ConfigError(f"[cdc] row_image: rows are read back from the target: {exc}"
                          ) from None
    try:
        from hbase_migrate.replay.job_target import open_job_target

        target = open_job_target(job)
    except BaseException:
        reader.close()
        raise
    return KafkaSink(settings, sources, target, reader, cluster=cluster, krb5_conf=krb5_conf)


def run(job: ReplayJob, *, observer: Observer | None = None) -> RunSummary:
    """One CDC run of ``job``."""
    from hbase_migrate.replay.run import run_replay

    return run_replay(job, observer, sink=open_sink)


def follow(job: ReplayJob, interval: float, stop: threading.Event, *,
           observer: Observer | None = None,
           on_run: Callable[[RunSummary], None] | None = None, force: bool = False
           ) -> FollowSummary:
    """CDC runs every ``interval`` seconds until ``stop`` is set; what they did."""
    from hbase_migrate.replay.run import follow_replay

    return follow_replay(job, interval, stop, observer, on_run, force=force, sink=open_sink)


def cdc(spec: MigrationSpec, *, tables: Sequence[str] = (), start: int | None = None,
        end: int | None = None, provenance: Provenance | None = None,
        observer: Observer | None = None, **options: Any) -> RunSummary:
    """Stream once and return the run's summary (``exit_code``: 0 ok, 1 a file failed, 3 a
    gap)."""
    job = cdc_job(spec, tables=tables, start=start, end=end, provenance=provenance, **options)
    return run(job, observer=observer)
