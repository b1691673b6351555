"""The parts of a migration's spec (:mod:`hbase_migrate.config`): a cluster, a table, each
section's settings, and the defaults and allowed values the config reader checks against.
:mod:`hbase_migrate.config` composes them into a ``MigrationSpec``; the reader
(:mod:`hbase_migrate.config_reader`) builds them without importing the spec back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.admin import DEFAULT_HBASE_VERSION
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.errors import ConfigError

ENDPOINT_KEYS = ("name", "thrift", "thrift2", "transport", "protocol", "webhdfs", "namenode",
                 "zookeeper", "znode_parent", "hbase_root", "client", "uri")
IN_PROCESS = "in-process"  # the Spark master value meaning: run range tasks without Spark
AUTO = "auto"  # the Spark master value meaning: choose by the step's estimated work
LOCAL_SPARK_MASTER = "local[*]"
DEFAULT_SPARK_MASTER = AUTO
DEFAULT_AUTO_CELLS = 1_000_000  # for a cluster large_master only (docs/figures.md)
DEFAULT_MAX_CELLS = 200_000
DEFAULT_PARTS = 4
DEFAULT_RANGE_THREADS = 4  # [ranges] threads: the tasks mostly wait on the clusters' replies
REPLAY_DEFAULTS = {"roll_period": 3_600_000, "margin": 300_000, "archive_ttl": 600_000,
                   "outage_tolerance": 3_600_000}
CDC_DEFAULTS = {"delivery_timeout": 30_000}
# [replay] bulk: a run's edits bulk-loaded as HFiles ("auto": when its backlog reaches
# bulk_backlog and the target can take them; replay/bulkrun.py) or written through the
# target's write path. The default is "never": with the HFile writer's loop compiled, on real
# HBase 2.6.1 the bulk path still took longer than the write path (5.0 s against 2.6 s at
# 200,000 cells, 25.8 s against 20.3 s at 2,000,000; docs/figures.md). Its memory no longer
# grows with bulk_window (1,045 MB then): a window holds bulk_memory (64 MiB) of cells in
# memory and spills the rest as sorted runs to local files (replay/bulkspill.py). Unset,
# bulk_memory is its default or bulk_window when smaller; set, it is refused below
# BULK_MEMORY_MIN (runs of a few cells each) or above bulk_window (a budget no window reaches)
BULK_MODES = ("auto", "always", "never")
DEFAULT_BULK = "never"
BULK_DEFAULTS = {"bulk_backlog": 1 << 30, "bulk_window": 256 << 20, "bulk_memory": 64 << 20}
BULK_MEMORY_MIN = 4 << 20
# auto: hbase where both clusters allow it, else bulk (with auto_bulk) where the target
# takes a bulk load, else scan (snapshot/choose.py)
SNAPSHOT_METHODS = ("auto", "scan", "hbase", "bulk")
VALIDATE_FROM = ("live", "snapshot")  # how a validation reads: scans, or snapshots' files
SNAPSHOT_DEFAULTS = {"ttl": 86_400_000, "target_hfile_ttl": 300_000}
# What the CDC stream's guarantees rest on: not for a config to change.
FIXED_PRODUCER_KEYS = ("acks", "enable.idempotence", "bootstrap.servers",
                       "max.in.flight.requests.per.connection", "retries",
                       "delivery.report.only.error")
TABLE_PLACEHOLDER = "{table}"
SHIP_KEYTAB = ("auto", "always", "never")  # [spark] ship_keytab (ranges/credentials.py)
ENVELOPES = ("native", "debezium")  # the CDC message formats (hbase_migrate/sinks/schemas/)


def endpoints_identity(thrift: str | None, thrift2: str | None, zookeeper: str | None,
                       znode_parent: str | None, uri: str | None = None) -> str:
    """``thrift:<thrift1>,<thrift2>``: the gateways a cluster names; a cluster naming none
    (reached natively) ``zookeeper:<quorum><znode parent>``, or its ``hbase+rpc://`` URI."""
    if thrift or thrift2:
        return f"thrift:{','.join(g for g in (thrift, thrift2) if g)}"
    if not zookeeper and uri:
        return uri
    return f"zookeeper:{zookeeper or ''}{znode_parent or '/hbase'}"


@dataclass(frozen=True)
class ClusterSpec:
    """A cluster: either a ``cluster_json`` file or explicit ``endpoints``, never both;
    ``gateway`` is how its clients (Thrift2 or native) size and time their calls (the
    migration's ``[gateway]`` section)."""

    role: str  # "source" or "target"
    cluster_json: Path | None = None
    explicit: ClusterEndpoints | None = None
    gateway: ClientSettings = field(default_factory=ClientSettings)
    # A command that runs hbase shell statements read on stdin against this cluster
    # ("hbase shell -n"): what a repair past delete markers uses to flush and major-compact.
    admin_shell: str | None = None
    # Security keys of the section (auth, principal, keytab...), over cluster.json's own.
    security: tuple[tuple[str, str], ...] = ()
    # The section's client ("native" or "thrift") over a cluster.json's own.
    client: str | None = None
    # A Google Cloud Bigtable instance instead of an HBase cluster ([target] kind).
    bigtable: BigtableSettings | None = None

    def endpoints(self) -> ClusterEndpoints:
        """The cluster's endpoints; a ``cluster_json`` file is read once per process (on the
        first call) and again only once it was replaced (a cluster restarted on new ports)
        or by :meth:`reread_endpoints`. A Bigtable target has none
        (:class:`~hbase_migrate.errors.ConfigError`)."""
        return self._endpoints(reread=False)

    def reread_endpoints(self) -> ClusterEndpoints:
        """The cluster's endpoints with its ``cluster_json`` read again: what a client
        reconnecting after a failed call asks (a gateway moved to new ports)."""
        return self._endpoints(reread=True)

    def _endpoints(self, *, reread: bool) -> ClusterEndpoints:
        if self.bigtable is not None:
            raise ConfigError(f"[{self.role}] is {self.bigtable.where}: it has no HBase "
                              "endpoints (gateways, WAL folder): this needs an HBase cluster")
        found = self.explicit or load_cluster_json(self.cluster_json or "", reread=reread)
        if self.client is not None and self.client != found.client:
            try:
                found = replace(found, client=self.client)
            except ConfigError as exc:
                hint = ("; that cluster registers in no ZooKeeper: start it with --zookeeper "
                        "HOST:PORT, or leave client out to use its Thrift gateways"
                        if self.client == "native" and not found.zookeeper else "")
                raise ConfigError(f"[{self.role}] with {self.cluster_json}: {exc}{hint}"
                                  ) from None
        if not self.security:
            return found
        base = found.security or ClusterSecurity()
        try:
            return replace(found, security=base.merged(dict(self.security)))
        except ConfigError as exc:
            raise ConfigError(f"[{self.role}] with {self.cluster_json or 'its endpoints'}: "
                              f"{exc}") from None

    def to_dict(self) -> dict[str, Any]:
        """The TOML section this spec reads back from (paths absolute)."""
        if self.bigtable is not None:
            return self.bigtable.to_dict()
        shell = {"admin_shell": self.admin_shell} if self.admin_shell else {}
        if self.cluster_json is not None:
            client = {"client": self.client} if self.client else {}
            return {"cluster_json": str(self.cluster_json), **client, **shell,
                    **dict(self.security)}
        assert self.explicit is not None
        found = {k: v for k, v in self.explicit.to_json().items()
                 if v is not None and k != "security"}
        return {**found, **shell, **dict(self.security)}

    @property
    def identity(self) -> str:
        """A stable text naming the cluster without I/O: the ``cluster.json`` path, a
        Bigtable instance, or the explicit endpoints (:func:`endpoints_identity`: the Thrift
        gateways, else the ZooKeeper quorum or the ``hbase+rpc://`` URI). The ledger
        recognises a migration by the gateways a cluster resolves to
        (:mod:`hbase_migrate.audit.definitions`); this path form is what it holds of
        migrations recorded before schema 8."""
        if self.bigtable is not None:
            return self.bigtable.identity
        if self.cluster_json is not None:
            return f"cluster_json:{self.cluster_json}"
        assert self.explicit is not None
        return endpoints_identity(self.explicit.thrift, self.explicit.thrift2,
                                  self.explicit.zookeeper, self.explicit.znode_parent,
                                  self.explicit.uri)


@dataclass(frozen=True)
class TableSpec:
    """A table to migrate; ``target`` defaults to ``source``; empty ``families`` = all."""

    source: str
    target: str
    families: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplaySettings:
    """Replay settings; durations in milliseconds."""

    roll_period: int = REPLAY_DEFAULTS["roll_period"]
    margin: int = REPLAY_DEFAULTS["margin"]
    archive_ttl: int = REPLAY_DEFAULTS["archive_ttl"]
    allow_lossy_deletes: bool = False
    batches_in_flight: int = 2
    writers: int = 1
    outage_tolerance: int = REPLAY_DEFAULTS["outage_tolerance"]
    bulk: str = DEFAULT_BULK
    bulk_backlog: int = BULK_DEFAULTS["bulk_backlog"]  # WAL bytes planned: auto bulk-loads
    bulk_window: int = BULK_DEFAULTS["bulk_window"]  # cell bytes a load gathers
    bulk_memory: int = BULK_DEFAULTS["bulk_memory"]  # of them held in memory, the rest spilled


@dataclass(frozen=True)
class EngineSettings:
    """Where range tasks (copy, checksums) run, and how big a range may grow. With
    ``spark_master`` AUTO a step whose estimated cells reach ``auto_cells`` runs on
    ``large_master``, a smaller one in-process (:mod:`hbase_migrate.ranges.choice`)."""

    spark_master: str = DEFAULT_SPARK_MASTER  # AUTO, IN_PROCESS or a Spark master URL
    max_cells: int = DEFAULT_MAX_CELLS
    large_master: str = LOCAL_SPARK_MASTER
    auto_cells: int = DEFAULT_AUTO_CELLS
    parts: int = DEFAULT_PARTS  # groups of ranges a copy or validation is split into (Airflow)
    threads: int = DEFAULT_RANGE_THREADS  # range tasks at once in-process
    plan_copy_cells: int | None = None  # [ranges]: cells the pass planning a table copies
    #                                     (None: lifecycle.snapshot.planning_copy_cells)
    ship_keytab: str = SHIP_KEYTAB[0]  # Kerberos files sent with Spark jobs: SHIP_KEYTAB
    python: str | None = None  # the executors' Python on a cluster master (None: shipped)
    conf: tuple[tuple[str, str], ...] = ()  # more Spark settings ([spark] conf, --conf)
    in_process_only: str = ""  # why no Spark master may run this migration's tasks ("": any)

    def with_conf(self, settings: Sequence[tuple[str, str]]) -> EngineSettings:
        """These settings with ``settings`` (Spark key, value) over ``[spark] conf``."""
        return replace(self, conf=tuple(sorted({**dict(self.conf), **dict(settings)}.items())))


@dataclass(frozen=True)
class CdcSettings:
    """The CDC stream (``[cdc]``): where messages go and how deliveries are retried.

    ``topic`` is one topic, or a template with ``{table}`` (the source table's name, a
    namespace's ``:`` written ``.``) for one topic per table."""

    bootstrap: str
    topic: str = f"hbase-cdc.{TABLE_PLACEHOLDER}"
    row_image: bool = False
    delivery_timeout: int = CDC_DEFAULTS["delivery_timeout"]  # ms
    retries: int = 3
    producer: tuple[tuple[str, str], ...] = ()  # more librdkafka settings
    envelope: str = ENVELOPES[0]

    def topic_of(self, table: str) -> str:
        """The topic of a source table's messages."""
        return self.topic.replace(TABLE_PLACEHOLDER, table.replace(":", "."))

    def to_dict(self) -> dict[str, Any]:
        return {"bootstrap": self.bootstrap, "topic": self.topic, "row_image": self.row_image,
                "delivery_timeout": self.delivery_timeout, "retries": self.retries,
                "producer": dict(self.producer), "envelope": self.envelope}


@dataclass(frozen=True)
class SnapshotSettings:
    """How the copy at T0 is made (``[snapshot]``): ``method`` ``scan`` (range tasks over
    each cluster's client: HBase's RPC, Thrift2 or Bigtable's own), ``hbase`` (an HBase
    snapshot exported file by file and cloned), ``bulk`` (the scan copy's ranges written as
    HFiles and bulk-loaded into the target) or ``auto`` (``hbase`` where both clusters allow
    it, else ``bulk`` when ``auto_bulk`` and the target takes a bulk load, else ``scan``:
    :mod:`hbase_migrate.snapshot.choose`); durations in ms."""

    method: str = "auto"
    auto_bulk: bool = False  # whether auto may choose the bulk copy
    ttl: int = SNAPSHOT_DEFAULTS["ttl"]
    keep: bool = False
    hbase_version: str = DEFAULT_HBASE_VERSION
    target_hfile_ttl: int = SNAPSHOT_DEFAULTS["target_hfile_ttl"]


@dataclass(frozen=True)
class ValidateSettings:
    """How a validation reads (``[validate]``): ``read_from`` ``live`` (both sides scanned)
    or ``snapshot`` (each side from an HBase snapshot's files where its cluster's can be
    read: ``docs/guides/validation.md``); ``validate --from`` overrides it."""

    read_from: str = "live"

    def to_dict(self) -> dict[str, str]:
        return {"from": self.read_from}


RATE_KEYS = ("copy_cells_per_second", "copy_bytes_per_second", "validate_cells_per_second",
             "replay_cells_per_second")
LIMIT_KEYS = (*RATE_KEYS, "adaptive", "latency_target_ms", "refresh")
MAX_LIMITS_REFRESH = 10_000  # ms: a limit set while a step runs applies within this


@dataclass(frozen=True)
class LimitSettings:
    """The throttles (``[limits]``): rates per second for the whole step, 0 = unlimited;
    ``adaptive`` lowers them (AIMD) while the gateways answer slower than
    ``latency_target_ms`` or fail; ``refresh`` (ms) is how often running tasks re-read the
    limits ``hbase-migrate limits set`` keeps in the ledger."""

    copy_cells_per_second: int = 0
    copy_bytes_per_second: int = 0
    validate_cells_per_second: int = 0
    replay_cells_per_second: int = 0
    adaptive: bool = False
    latency_target_ms: int = 500
    refresh: int = 5000

    def replace(self, values: dict[str, Any]) -> LimitSettings:
        """These settings with ``values`` (checked values of :data:`LIMIT_KEYS`) in place."""
        return replace(self, **values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
