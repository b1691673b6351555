"""The migration spec: one frozen, typed value per migration, loaded from a TOML file.

::

    [migration]
    name = "orders"
    ledger = "sqlite:///state/orders/ledger.db"   # optional; default under the state dir
    # ledger_env = "ORDERS_LEDGER_URL"          # or: the URL from this environment variable
    [source]                   # a migration started elsewhere (the Airflow UI): its file
                               # is `hbase-migrate config show NAME`; any section naming the
                               # same gateways (thrift, thrift2) is the same cluster
    cluster_json = "state/source/cluster.json"    # or explicit endpoints:
    # thrift = "hbase-a:9090"  thrift2 = "hbase-a:9091"  webhdfs = "http://nn-a:9870"
    # hbase_root = "/hbase"  zookeeper = "zk-a:2181"  znode_parent = "/hbase"
    # namenode = "nn-a:8020"   (fs.defaultFS: store files read from the DataNodes)
    # uri = "hbase+rpc://hmaster-a:16000,rs-a:16020"   (HBase 2.5+: no ZooKeeper at all)
    #   or "hbase+zk://zk-a:2181/hbase"                (hbase_migrate.cluster.uri)
    # auth = "kerberos"  principal = "migrate@EXAMPLE.COM"  keytab = "migrate.keytab"
    # krb5_conf = "/etc/krb5.conf"  hbase_principal = "hbase/_HOST@EXAMPLE.COM"
    # http_principal = "HTTP/_HOST@EXAMPLE.COM"  zookeeper_principal = "zookeeper/_HOST@..."
    # qop = "auth-conf"  rpc_protection = "privacy"  tls_ca_file = "ca.pem"
    # rpc_tls = "on"  tls_cert_file = "migrate.pem"  tls_key_file = "migrate.key"
    #                       (hbase_migrate.cluster.auth.security; with
    #                       cluster_json they override its "security" object)
    [target]
    cluster_json = "state/target/cluster.json"
    # admin_shell = "hbase shell -n"   # runs hbase shell statements (stdin): repair's flush
                                       # and major_compact past delete markers
    [[tables]]
    source = "orders"
    target = "orders"          # optional, defaults to source; "ns:t" names allowed
    families = ["d"]           # optional filter
    [replay]
    roll_period = "1h"          # HBase hbase.regionserver.logroll.period
    margin = "5m"
    archive_ttl = "10m"         # hbase.master.logcleaner.ttl, for the retention warning
    allow_lossy_deletes = false
    batches_in_flight = 2       # per file: batches sent and not yet acknowledged (0: none)
    writers = 1                 # gateway connections per replay task, the rows of each batch
                                # split among them (each row's edits keep their order)
    outage_tolerance = "1h"     # how long a run waits for an unreachable gateway, WebHDFS,
                                # ZooKeeper, ledger or Kafka before it gives up ("0s": at once)
    bulk = "never"              # "never" (the default): the target's write path; "auto": a
                                # run whose backlog (WAL bytes planned) reaches bulk_backlog
                                # writes its edits as HFiles per target region and bulk-loads
                                # them, when the target takes bulk loads (HBase over its RPC,
                                # HDFS over WebHDFS, no Kerberos yet), else the write path,
                                # saying why; "always": whenever the target takes them
                                # (docs/guides/wal.md)
    bulk_backlog = "1GiB"       # "auto": the backlog from which a run bulk-loads
    bulk_window = "256MiB"      # cells a load gathers before it is loaded, at a WAL file's end
                                # (one file in one load); past bulk_memory, as sorted runs on
                                # local disk (TMPDIR: a run it has no room for stops the run)
    bulk_memory = "64MiB"       # of a window's cells, those held in memory before they are
                                # spilled as one sorted run: from 4MiB up to bulk_window (a
                                # smaller bulk_window is its default)
    [spark]
    master = "auto"             # in-process for small work, large_master for large work;
                                # or always one: "in-process", local[*], spark://host:7077,
                                # yarn, k8s://...
    large_master = "local[*]"   # where "auto" sends large work, if a cluster (spark://...,
                                # yarn, k8s://...); a local Spark is never chosen by "auto"
    auto_cells = 1000000        # "auto": work of this many cells or more goes to a cluster
                                # large_master (docs/figures.md, "Spark or in-process")
    ship_keytab = "auto"        # Kerberos: send the keytab and krb5_conf with each Spark job
                                # ("auto": to cluster masters, not local[*]; "always";
                                # "never": they are deployed at the same paths on every worker)
    # python = "/opt/hbm/bin/python"  # cluster masters: the executors' Python, with
                                # hbase-migrate[executor] installed (an image's); unset: the
                                # project is shipped as an archive (docs/guides/spark-cluster.md)
    conf = { "spark.executor.memory" = "2g" }   # any Spark setting (CLI: --conf k=v)
    [ranges]
    max_cells = 200000          # the most cells a key range of the copy and the checksums holds
    parts = 4                   # Airflow: the mapped tasks (groups of ranges) a copy or a
                                # validation is split into; never more than the ranges
    threads = 4                 # in-process: the key ranges a copy or a validation runs at
                                # once, on threads (each with its own clients; they share
                                # the step's limits), and the regions the copy's planning
                                # pass copies at once
    # plan_copy_cells = 1000000  # the cells the pass planning a table copies on its way;
                                # unset: all of them when the copy runs in-process (named,
                                # or auto with a large_master on this machine), else
                                # [spark] auto_cells (the rest may go to the cluster)
    [gateway]                   # calls to both HBase clusters, over HBase's RPC or their
                                # Thrift gateways (copy, checksums, repair, replay's writes)
    max_result_bytes = "4MiB"   # per scan call, as hbase.client.scanner.max.result.size
    max_put_bytes = "4MiB"      # per putMultiple call (a larger cell goes alone)
    call_timeout = "30s"        # per call; a call that times out is retried smaller
    timeout_retries = 4         # such retries in a row, then the step fails saying where
    region_wait = "60s"         # a table's regions in transition (a split, merge or move
                                # under way) are read again for up to this long
    multis_per_server = 2       # HBase's own RPC: Multi calls in flight to one region server
                                # (as hbase.client.max.perserver.tasks)
    [snapshot]                  # how the copy at T0 is made
    method = "auto"             # "auto": "hbase" where both clusters allow the file copy
                                # (both HBase, roots over WebHDFS, the target's writable,
                                # admin calls possible, a target major version not older,
                                # codecs the target took, no encryption, whole tables, no
                                # watermark given, no parts), else "bulk" where auto_bulk
                                # is on and the target takes a bulk load, else "scan",
                                # saying why;
                                # "scan": range tasks over each cluster's client (HBase's
                                # RPC, Thrift2 or Bigtable's own: any cluster, the embedded
                                # one too); "hbase": an HBase snapshot, its files exported
                                # over WebHDFS, cloned on the target (real clusters);
                                # "bulk": the scan copy's ranges written as HFiles in the
                                # target's settings and bulk-loaded (a real HBase target
                                # over its RPC with WebHDFS; not Kerberos yet)
    auto_bulk = false           # "auto" may choose "bulk" where the file copy cannot run
    ttl = "24h"                 # "hbase": the snapshots expire after this (forgotten ones too)
    keep = false                # "hbase": keep the snapshots (else deleted once used)
    hbase_version = "2.6.1"     # "hbase": the HBase client of the Java admin helper
    target_hfile_ttl = "5m"     # the target's hbase.master.hfilecleaner.ttl (HBASE-23202)
    [validate]
    from = "live"               # "snapshot": each side read from an HBase snapshot's files
                                # (no scan; a real HBase root over WebHDFS), "live": scans
    [cdc]                       # optional: the CDC stream of WAL edits to Kafka
    bootstrap = "kafka-1:9092,kafka-2:9092"
    topic = "hbase-cdc.{table}" # one topic, or one per source table with {table}
    row_image = false           # apply each edit to the target and attach the row read back
    envelope = "native"         # the message format: "native", or "debezium" (before/after/
                                # op/source/ts_ms, what Kafka Connect and Flink CDC read)
    delivery_timeout = "30s"    # per delivery attempt (librdkafka message.timeout.ms)
    retries = 3                 # more attempts for a failed delivery, with backoff
    producer = { "compression.type" = "lz4" }   # more producer settings (not acks/idempotence),
                                # security too: SASL_SSL + SCRAM, or "sasl.mechanisms" = "GSSAPI"
                                # (Kerberos: kafka-python, see sinks/gssapi.py)
    [limits]                    # throttles; unset or 0 = unlimited; each step's tasks share them
    copy_cells_per_second = 20000       # the snapshot copy (cells read and written)
    copy_bytes_per_second = "50MiB"     # bytes the copy moves (scan copy, file copies)
    validate_cells_per_second = 50000   # cells the validation scans read, both clusters together
    replay_cells_per_second = 20000     # cells replay writes to the target
    adaptive = false            # AIMD: halve on slow (> latency_target_ms) or failed calls
    latency_target_ms = 500
    refresh = "5s"              # how often running tasks re-read `limits set` (at most 10s)

Relative paths (``cluster_json``, a SQLite ledger file, a local ``hbase_root`` when there is no
``webhdfs``) resolve against the config file's folder. The default ledger is
``$HBASE_MIGRATE_LEDGER`` when set (a stack's shared ledger), else
``<state dir>/<name>/ledger.db``, the state dir being ``$HBASE_MIGRATE_STATE_DIR`` or
``./state``. Durations are ``90s``, ``10m``, ``1h`` (see :mod:`hbase_migrate.timeutil`) or an
integer of milliseconds; sizes are ``512KiB``, ``4MiB``, ``4MB`` (KB, MB: powers of 1000) or
an integer of bytes. Unknown keys are errors, so that typos surface. A cluster's
``cluster.json`` is read when its endpoints are first needed, once per process (again once
the file is replaced, or on a reconnect: :meth:`ClusterSpec.endpoints`), and the steps ask
for them through the front door's handle (:func:`hbase_migrate.hbase.open_cluster`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config_parts import (
    AUTO,
    CDC_DEFAULTS,
    DEFAULT_AUTO_CELLS,
    DEFAULT_MAX_CELLS,
    DEFAULT_PARTS,
    DEFAULT_RANGE_THREADS,
    DEFAULT_SPARK_MASTER,
    ENDPOINT_KEYS,
    ENVELOPES,
    FIXED_PRODUCER_KEYS,
    IN_PROCESS,
    LIMIT_KEYS,
    LOCAL_SPARK_MASTER,
    MAX_LIMITS_REFRESH,
    RATE_KEYS,
    REPLAY_DEFAULTS,
    SHIP_KEYTAB,
    SNAPSHOT_DEFAULTS,
    SNAPSHOT_METHODS,
    TABLE_PLACEHOLDER,
    CdcSettings,
    ClusterSpec,
    EngineSettings,
    LimitSettings,
    ReplaySettings,
    SnapshotSettings,
    TableSpec,
    ValidateSettings,
    endpoints_identity,
)
from hbase_migrate.errors import ConfigError

__all__ = [
    "AUTO",
    "CDC_DEFAULTS",
    "DEFAULT_AUTO_CELLS",
    "DEFAULT_MAX_CELLS",
    "DEFAULT_PARTS",
    "DEFAULT_RANGE_THREADS",
    "DEFAULT_SPARK_MASTER",
    "ENDPOINT_KEYS",
    "ENVELOPES",
    "FIXED_PRODUCER_KEYS",
    "IN_PROCESS",
    "LEDGER_ENV",
    "LIMIT_KEYS",
    "LOCAL_SPARK_MASTER",
    "MAX_LIMITS_REFRESH",
    "RATE_KEYS",
    "REPLAY_DEFAULTS",
    "SHIP_KEYTAB",
    "SNAPSHOT_DEFAULTS",
    "SNAPSHOT_METHODS",
    "STATE_DIR_ENV",
    "TABLE_PLACEHOLDER",
    "CdcSettings",
    "ClusterSpec",
    "EngineSettings",
    "LimitSettings",
    "MigrationSpec",
    "ReplaySettings",
    "SnapshotSettings",
    "TableSpec",
    "ValidateSettings",
    "default_ledger_url",
    "endpoints_identity",
    "load_config",
    "parse_config",
    "state_dir",
]
STATE_DIR_ENV = "HBASE_MIGRATE_STATE_DIR"
LEDGER_ENV = "HBASE_MIGRATE_LEDGER"  # the ledger of migrations that name none (a stack's own)
_SECTIONS = ("migration", "source", "target", "tables", "replay", "spark", "ranges", "cdc",
             "gateway", "limits", "snapshot", "validate")


@dataclass(frozen=True)
class MigrationSpec:
    """Everything one migration is configured with."""

    name: str
    ledger_url: str
    source: ClusterSpec
    target: ClusterSpec
    tables: tuple[TableSpec, ...]
    replay: ReplaySettings = field(default_factory=ReplaySettings)
    path: Path | None = None  # the config file it came from
    engine: EngineSettings = field(default_factory=EngineSettings)
    cdc: CdcSettings | None = None
    gateway: ClientSettings = field(default_factory=ClientSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    snapshot: SnapshotSettings = field(default_factory=SnapshotSettings)
    validate: ValidateSettings = field(default_factory=ValidateSettings)

    @property
    def artifact_dir(self) -> Path:
        """Where the migration's artifacts (validation results, Data Docs) are kept."""
        return artifacts_beside(self.ledger_url, self.name)

    def table_mapping(self) -> dict[str, str]:
        """Source table -> target table."""
        return {t.source: t.target for t in self.tables}

    def select_tables(self, names: Sequence[str]) -> tuple[TableSpec, ...]:
        """The tables named in ``names`` (source or target names, each once, in the order
        named); every table when ``names`` is empty. An unknown name is a ConfigError."""
        if not names:
            return self.tables
        chosen = {n: t for n in dict.fromkeys(names) for t in self.tables
                  if n in (t.source, t.target)}
        unknown = [n for n in dict.fromkeys(names) if n not in chosen]
        if unknown:
            raise ConfigError(f"migration {self.name!r} has no table {', '.join(unknown)}; "
                              f"its tables: {', '.join(t.source for t in self.tables)}")
        return tuple(dict.fromkeys(chosen.values()))

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, base_dir: Path | None = None) -> MigrationSpec:
        """A spec from the same tree a config file holds (``to_dict``'s shape), without a
        file: endpoints can come from elsewhere (an Airflow connection), the ledger URL from
        ``ledger_env``. Relative paths are taken from ``base_dir`` (default: the working
        folder); errors name the spec as ``<dict>``."""
        spec = parse_config(data, (base_dir or Path.cwd()) / "<dict>")
        return replace(spec, path=None)

    def to_dict(self) -> dict[str, Any]:
        """The config as the TOML tree :func:`parse_config` reads (paths absolute, durations
        in ms): how a spec travels to another process (JSON) and comes back equal."""
        return {
            "migration": {"name": self.name, "ledger": self.ledger_url},
            "source": self.source.to_dict(),
            "target": self.target.to_dict(),
            "tables": [{"source": t.source, "target": t.target, "families": list(t.families)}
                       for t in self.tables],
            "replay": asdict(self.replay),
            "spark": {"master": self.engine.spark_master,
                      "large_master": self.engine.large_master,
                      "auto_cells": self.engine.auto_cells,
                      "ship_keytab": self.engine.ship_keytab,
                      **({"python": self.engine.python} if self.engine.python else {}),
                      "conf": dict(self.engine.conf)},
            "ranges": {"max_cells": self.engine.max_cells, "parts": self.engine.parts,
                       "threads": self.engine.threads,
                       **({"plan_copy_cells": self.engine.plan_copy_cells}
                          if self.engine.plan_copy_cells is not None else {})},
            "gateway": self.gateway.to_dict(),
            "limits": self.limits.to_dict(),
            "snapshot": asdict(self.snapshot),
            "validate": self.validate.to_dict(),
            **({"cdc": self.cdc.to_dict()} if self.cdc else {}),
        }


def state_dir() -> Path:
    """``$HBASE_MIGRATE_STATE_DIR``, else ``./state``, as an absolute path."""
    return Path(os.environ.get(STATE_DIR_ENV) or "state").absolute()


def artifacts_beside(ledger_url: str, name: str) -> Path:
    """The ``artifacts`` folder of migration ``name``: beside a SQLite ledger file, else in
    ``<state dir>/<name>``."""
    prefix = "sqlite:///"
    database = ledger_url[len(prefix):] if ledger_url.startswith(prefix) else ""
    if database.startswith("/"):
        return Path(database).parent / "artifacts"
    return state_dir() / name / "artifacts"


def default_ledger_url(name: str) -> str:
    """The ledger of a migration that names none: ``$HBASE_MIGRATE_LEDGER`` (the shared
    ledger a stack sets for the tasks it runs), else ``<state dir>/<name>/ledger.db``."""
    return os.environ.get(LEDGER_ENV) or f"sqlite:///{state_dir() / name / 'ledger.db'}"


def load_config(path: str | Path) -> MigrationSpec:
    """Read and check a migration config file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the migration config: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at "
                          f"offset {exc.start} (TOML files are UTF-8)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse_config(data, path)


def parse_config(data: dict[str, Any], path: Path) -> MigrationSpec:
    """Build the spec from parsed TOML; ``path`` names the file and anchors relative paths."""
    from hbase_migrate.config_reader import Reader

    reader = Reader(path)
    reader.keys(data, "", _SECTIONS)
    migration = reader.section(data, "migration", required=True)
    reader.keys(migration, "migration", ("name", "ledger", "ledger_env"))
    name = reader.string(migration, "migration", "name", required=True) or ""
    if not name or "/" in name or name != name.strip():
        reader.fail("migration", "name", "a non-empty name without '/' or surrounding spaces",
                    name)
    ledger = reader.string(migration, "migration", "ledger")
    variable = reader.string(migration, "migration", "ledger_env")
    if ledger and variable:
        reader.fail("migration", "ledger_env", "either ledger or ledger_env, not both", variable)
    if variable:  # the URL (and its password) stays out of the file
        ledger = os.environ.get(variable)
        if not ledger:
            raise ConfigError(f"{path}: [migration] ledger_env: the environment variable "
                              f"{variable} holding the ledger URL is not set")
    ledger_url = (_resolve_sqlite(ledger, path.parent) if ledger
                  else default_ledger_url(name))
    gateway = reader.gateway(data)
    spec = MigrationSpec(
        name=name,
        ledger_url=ledger_url,
        source=replace(reader.cluster(data, "source"), gateway=gateway),
        target=replace(reader.cluster(data, "target"), gateway=gateway),
        tables=reader.tables(data),
        replay=reader.replay(data),
        path=path.absolute(),
        engine=reader.engine(data),
        cdc=reader.cdc(data),
        gateway=gateway,
        limits=reader.limits(reader.section(data, "limits")),
        snapshot=reader.snapshot(data),
        validate=reader.validate(data),
    )
    if spec.target.bigtable is not None:
        _check_bigtable(spec, path)
        spec = replace(spec, engine=replace(spec.engine, in_process_only=BIGTABLE_IN_PROCESS))
    return spec


BIGTABLE_IN_PROCESS = "a Bigtable target is written in-process, not on Spark"


def _check_bigtable(spec: MigrationSpec, path: Path) -> None:
    """Refuse what a migration to Bigtable does not support yet, naming the key."""
    subset = next((t for t in spec.tables if t.families), None)
    if subset is not None:
        raise ConfigError(f"{path}: [[tables]] {subset.source}: families: a migration to "
                          "Bigtable takes every family of a table (a subset is not "
                          "supported yet): leave families out")
    if spec.snapshot.method in ("hbase", "bulk"):
        raise ConfigError(f"{path}: [snapshot] method: a Bigtable target is copied by the scan "
                          f"copy only, got {spec.snapshot.method!r}: set method = \"scan\" "
                          "(or \"auto\", which chooses it)")
    if spec.cdc is not None:
        raise ConfigError(f"{path}: [cdc]: the CDC stream reads an HBase target back; with a "
                          "Bigtable target leave [cdc] out")
    engine = spec.engine
    spark = next((m for m in (engine.spark_master, engine.large_master)
                  if m not in (AUTO, IN_PROCESS, LOCAL_SPARK_MASTER)), None)
    if spark is not None or engine.spark_master == LOCAL_SPARK_MASTER:
        raise ConfigError(f"{path}: [spark]: {BIGTABLE_IN_PROCESS} "
                          f"(got {spark or engine.spark_master!r}): leave [spark] master "
                          "and large_master out")


def _resolve_sqlite(url: str, folder: Path) -> str:
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return url
    database = url[len(prefix):]
    if not database or database.startswith(("/", ":memory:", "file:")):
        return url
    return prefix + str((folder / database).absolute())
