"""The migration spec: one frozen, typed value per migration, loaded from a TOML file.

::

    [migration]
    name = "orders"
    ledger = "sqlite:///state/orders/ledger.db"   # optional; default under the state dir
    # ledger_env = "ORDERS_LEDGER_URL"          # or: the URL from this environment variable
    [source]
    cluster_json = "state/source/cluster.json"    # or explicit endpoints:
    # thrift = "hbase-a:9090"  thrift2 = "hbase-a:9091"  webhdfs = "http://nn-a:9870"
    # hbase_root = "/hbase"  zookeeper = "zk-a:2181"  znode_parent = "/hbase"
    [target]
    cluster_json = "state/target/cluster.json"
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
    [spark]
    master = "local[*]"         # or spark://host:7077, yarn, k8s://...; "in-process": no Spark
    [ranges]
    max_cells = 200000          # the most cells a key range of the copy and the checksums holds
    [gateway]                   # calls to both clusters' Thrift2 gateways (copy, checksums,
                                # repair, replay's writes)
    max_result_bytes = "4MiB"   # per scan call, as hbase.client.scanner.max.result.size
    max_put_bytes = "4MiB"      # per putMultiple call (a larger cell goes alone)
    call_timeout = "30s"        # per call; a call that times out is retried smaller
    timeout_retries = 4         # such retries in a row, then the step fails saying where
    [cdc]                       # optional: the CDC stream of WAL edits to Kafka
    bootstrap = "kafka-1:9092,kafka-2:9092"
    topic = "hbase-cdc.{table}" # one topic, or one per source table with {table}
    row_image = false           # apply each edit to the target and attach the row read back
    delivery_timeout = "30s"    # per delivery attempt (librdkafka message.timeout.ms)
    retries = 3                 # more attempts for a failed delivery, with backoff
    producer = { "compression.type" = "lz4" }   # more producer settings (not acks/idempotence)

Relative paths (``cluster_json``, a SQLite ledger file, a local ``hbase_root`` when there is no
``webhdfs``) resolve against the config file's folder. The default ledger is
``<state dir>/<name>/ledger.db``, the state dir being ``$HBASE_MIGRATE_STATE_DIR`` or
``./state``. Durations are ``90s``, ``10m``, ``1h`` (see :mod:`hbase_migrate.timeutil`) or an
integer of milliseconds; sizes are ``512KiB``, ``4MiB``, ``4MB`` (KB, MB: powers of 1000) or
an integer of bytes. Unknown keys are errors, so that typos surface. A cluster's
``cluster.json`` is read only when its endpoints are first needed (:meth:`ClusterSpec.endpoints`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, NoReturn

from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.cluster.sizing import GatewaySettings
from hbase_migrate.errors import ConfigError
from hbase_migrate.tablename import InvalidTableNameError, normalize_table_name
from hbase_migrate.timeutil import parse_duration

STATE_DIR_ENV = "HBASE_MIGRATE_STATE_DIR"
ENDPOINT_KEYS = ("name", "thrift", "thrift2", "transport", "protocol", "webhdfs", "zookeeper",
                 "znode_parent", "hbase_root")
_SECTIONS = ("migration", "source", "target", "tables", "replay", "spark", "ranges", "cdc",
             "gateway")
_GATEWAY_KEYS = ("max_result_bytes", "max_put_bytes", "call_timeout", "timeout_retries")
_SIZE_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024,
               "mib": 1024**2, "gib": 1024**3}
IN_PROCESS = "in-process"  # the Spark master value meaning: run range tasks without Spark
DEFAULT_SPARK_MASTER = "local[*]"
DEFAULT_MAX_CELLS = 200_000
_REPLAY_DEFAULTS = {"roll_period": 3_600_000, "margin": 300_000, "archive_ttl": 600_000}
_CDC_DEFAULTS = {"delivery_timeout": 30_000}
_GATEWAY_DEFAULTS = {"call_timeout": round(GatewaySettings.call_timeout * 1000)}
_CDC_KEYS = ("bootstrap", "topic", "row_image", "delivery_timeout", "retries", "producer")
# What the CDC stream's guarantees rest on: not for a config to change.
FIXED_PRODUCER_KEYS = ("acks", "enable.idempotence", "bootstrap.servers",
                       "max.in.flight.requests.per.connection", "retries",
                       "delivery.report.only.error")
TABLE_PLACEHOLDER = "{table}"


@dataclass(frozen=True)
class ClusterSpec:
    """A cluster: either a ``cluster_json`` file or explicit ``endpoints``, never both;
    ``gateway`` is how its Thrift2 clients size and time their calls (the migration's
    ``[gateway]`` section)."""

    role: str  # "source" or "target"
    cluster_json: Path | None = None
    explicit: ClusterEndpoints | None = None
    gateway: GatewaySettings = field(default_factory=GatewaySettings)

    def endpoints(self) -> ClusterEndpoints:
        """The cluster's endpoints; a ``cluster_json`` file is read now, on each call."""
        if self.explicit is not None:
            return self.explicit
        assert self.cluster_json is not None
        return load_cluster_json(self.cluster_json)

    def to_dict(self) -> dict[str, Any]:
        """The TOML section this spec reads back from (paths absolute)."""
        if self.cluster_json is not None:
            return {"cluster_json": str(self.cluster_json)}
        assert self.explicit is not None
        return {k: v for k, v in self.explicit.to_json().items() if v is not None}

    @property
    def identity(self) -> str:
        """A stable text naming the cluster, kept in the ledger to recognise the migration:
        the ``cluster.json`` path, or the explicit Thrift endpoints. No I/O."""
        if self.cluster_json is not None:
            return f"cluster_json:{self.cluster_json}"
        assert self.explicit is not None
        gateways = [self.explicit.thrift, self.explicit.thrift2 or ""]
        return f"thrift:{','.join(g for g in gateways if g)}"


@dataclass(frozen=True)
class TableSpec:
    """A table to migrate; ``target`` defaults to ``source``; empty ``families`` = all."""

    source: str
    target: str
    families: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReplaySettings:
    """Replay settings; durations in milliseconds."""

    roll_period: int = _REPLAY_DEFAULTS["roll_period"]
    margin: int = _REPLAY_DEFAULTS["margin"]
    archive_ttl: int = _REPLAY_DEFAULTS["archive_ttl"]
    allow_lossy_deletes: bool = False
    batches_in_flight: int = 2


@dataclass(frozen=True)
class EngineSettings:
    """Where range tasks (copy, checksums) run, and how big a range may grow."""

    spark_master: str = DEFAULT_SPARK_MASTER  # or IN_PROCESS
    max_cells: int = DEFAULT_MAX_CELLS


@dataclass(frozen=True)
class CdcSettings:
    """The CDC stream (``[cdc]``): where messages go and how deliveries are retried.

    ``topic`` is one topic, or a template with ``{table}`` (the source table's name, a
    namespace's ``:`` written ``.``) for one topic per table."""

    bootstrap: str
    topic: str = f"hbase-cdc.{TABLE_PLACEHOLDER}"
    row_image: bool = False
    delivery_timeout: int = _CDC_DEFAULTS["delivery_timeout"]  # ms
    retries: int = 3
    producer: tuple[tuple[str, str], ...] = ()  # more librdkafka settings

    def topic_of(self, table: str) -> str:
        """The topic of a source table's messages."""
        return self.topic.replace(TABLE_PLACEHOLDER, table.replace(":", "."))

    def to_dict(self) -> dict[str, Any]:
        return {"bootstrap": self.bootstrap, "topic": self.topic, "row_image": self.row_image,
                "delivery_timeout": self.delivery_timeout, "retries": self.retries,
                "producer": dict(self.producer)}


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
    gateway: GatewaySettings = field(default_factory=GatewaySettings)

    @property
    def artifact_dir(self) -> Path:
        """Where the migration's artifacts (validation results, Data Docs) are kept: beside
        a SQLite ledger file, else ``<state dir>/<name>``; an ``artifacts`` folder."""
        prefix = "sqlite:///"
        database = self.ledger_url[len(prefix):] if self.ledger_url.startswith(prefix) else ""
        if database.startswith("/"):
            return Path(database).parent / "artifacts"
        return state_dir() / self.name / "artifacts"

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
            "spark": {"master": self.engine.spark_master},
            "ranges": {"max_cells": self.engine.max_cells},
            "gateway": self.gateway.to_dict(),
            **({"cdc": self.cdc.to_dict()} if self.cdc else {}),
        }


def state_dir() -> Path:
    """``$HBASE_MIGRATE_STATE_DIR``, else ``./state``, as an absolute path."""
    return Path(os.environ.get(STATE_DIR_ENV) or "state").absolute()


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
    reader = _Reader(path)
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
                  else f"sqlite:///{state_dir() / name / 'ledger.db'}")
    gateway = reader.gateway(data)
    return MigrationSpec(
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
    )


def _resolve_sqlite(url: str, folder: Path) -> str:
    prefix = "sqlite:///"
    if not url.startswith(prefix):
        return url
    database = url[len(prefix):]
    if not database or database.startswith(("/", ":memory:", "file:")):
        return url
    return prefix + str((folder / database).absolute())


class _Reader:
    """Typed access to the TOML tree; every error names the file, the key and what was
    expected."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.folder = path.absolute().parent

    def fail(self, section: str, key: str, expected: str, got: object) -> NoReturn:
        where = f"[{section}] {key}" if section else key
        raise ConfigError(f"{self.path}: {where}: expected {expected}, got {got!r}")

    def keys(self, table: dict[str, Any], section: str, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                where = f"[{section}] " if section else ""
                raise ConfigError(f"{self.path}: {where}unknown key {key!r}; expected one of "
                                  f"{', '.join(allowed)}")

    def section(self, data: dict[str, Any], name: str, required: bool = False) -> dict[str, Any]:
        value = data.get(name)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            what = "missing" if value is None else f"a {type(value).__name__}"
            raise ConfigError(f"{self.path}: [{name}]: expected a table (section), got {what}")
        return value

    def string(self, table: dict[str, Any], section: str, key: str,
               required: bool = False) -> str | None:
        value = table.get(key)
        if value is None:
            if required:
                raise ConfigError(f"{self.path}: [{section}] {key}: missing; expected a string")
            return None
        if not isinstance(value, str):
            self.fail(section, key, "a string", value)
        return str(value)

    def duration(self, table: dict[str, Any], key: str, section: str = "replay") -> int:
        defaults = {"replay": _REPLAY_DEFAULTS, "cdc": _CDC_DEFAULTS,
                    "gateway": _GATEWAY_DEFAULTS}[section]
        value = table.get(key, defaults[key])
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            self.fail(section, key, "a duration such as \"90s\", \"10m\", \"1h\" or integer ms",
                      value)
        if isinstance(value, int):
            if value < 0:
                self.fail(section, key, "a non-negative number of milliseconds", value)
            return value
        return parse_duration(value, name=f"{self.path}: [{section}] {key}")

    def cluster(self, data: dict[str, Any], role: str) -> ClusterSpec:
        table = self.section(data, role, required=True)
        self.keys(table, role, ("cluster_json", *ENDPOINT_KEYS))
        cluster_json = self.string(table, role, "cluster_json")
        given = {k: self.string(table, role, k) for k in ENDPOINT_KEYS if k in table}
        if cluster_json is not None:
            if given:
                raise ConfigError(
                    f"{self.path}: [{role}]: give either cluster_json or explicit endpoints, "
                    f"not both (found cluster_json and {', '.join(sorted(given))})")
            return ClusterSpec(role, cluster_json=self.folder / cluster_json)
        if not given.get("thrift"):
            raise ConfigError(f"{self.path}: [{role}]: expected cluster_json or at least "
                              "thrift = \"host:port\"")
        given.setdefault("name", role)
        root = given.get("hbase_root")
        if root and not given.get("webhdfs") and not Path(root).is_absolute():
            given["hbase_root"] = str(self.folder / root)  # a local HBase root folder
        try:
            endpoints = ClusterEndpoints(**{k: v for k, v in given.items() if v is not None})
        except ConfigError as exc:
            raise ConfigError(f"{self.path}: [{role}]: {exc}") from None
        return ClusterSpec(role, explicit=endpoints)

    def tables(self, data: dict[str, Any]) -> tuple[TableSpec, ...]:
        items = data.get("tables")
        if not isinstance(items, list) or not items:
            raise ConfigError(f"{self.path}: [[tables]]: expected at least one [[tables]] entry "
                              "with source = \"table\"")
        specs: list[TableSpec] = []
        for index, item in enumerate(items):
            section = f"tables #{index + 1}"
            if not isinstance(item, dict):
                self.fail("tables", f"entry #{index + 1}", "a table", item)
            self.keys(item, section, ("source", "target", "families"))
            source = self._table_name(item, section, "source", None)
            specs.append(TableSpec(source, self._table_name(item, section, "target", source),
                                   self._families(item, section)))
        for attr in ("source", "target"):
            names = [getattr(s, attr) for s in specs]
            duplicates = sorted({n for n in names if names.count(n) > 1})
            if duplicates:
                raise ConfigError(f"{self.path}: [[tables]]: duplicate {attr} table "
                                  f"{', '.join(duplicates)}; each may appear once")
        return tuple(specs)

    def _table_name(self, item: dict[str, Any], section: str, key: str,
                    default: str | None) -> str:
        value = self.string(item, section, key, required=default is None)
        if value is None:
            value = default
        assert value is not None
        if not value.strip():
            self.fail(section, key, "a table name (leave the key out to mean the source's)",
                      value)
        try:
            name = normalize_table_name(value)
        except InvalidTableNameError as exc:
            raise ConfigError(f"{self.path}: [{section}] {key}: {exc}") from None
        if name.startswith("hbase:"):
            self.fail(section, key, "a user table (system tables are not migrated)", value)
        return name

    def _families(self, item: dict[str, Any], section: str) -> tuple[str, ...]:
        families = item.get("families", [])
        if (not isinstance(families, list)
                or not all(isinstance(f, str) and f for f in families)
                or len(set(families)) != len(families)):
            self.fail(section, "families", "a list of distinct non-empty family names",
                      families)
        return tuple(families)

    def engine(self, data: dict[str, Any]) -> EngineSettings:
        spark, ranges = self.section(data, "spark"), self.section(data, "ranges")
        self.keys(spark, "spark", ("master",))
        self.keys(ranges, "ranges", ("max_cells",))
        master = self.string(spark, "spark", "master") or DEFAULT_SPARK_MASTER
        if not master.strip():
            self.fail("spark", "master", f"a Spark master URL or {IN_PROCESS!r}", master)
        cells = ranges.get("max_cells", DEFAULT_MAX_CELLS)
        if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
            self.fail("ranges", "max_cells", "a positive number of cells", cells)
        return EngineSettings(spark_master=master, max_cells=cells)

    def size(self, table: dict[str, Any], section: str, key: str, default: int) -> int:
        """Bytes: an integer, or ``512KiB``, ``4MiB``, ``4MB`` (at least 1 KiB)."""
        value = table.get(key, default)
        expected = "a size such as \"4MiB\", \"512KiB\", \"8MB\" or an integer of bytes >= 1024"
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            self.fail(section, key, expected, value)
        if isinstance(value, str):
            text = value.strip().lower().replace(" ", "")
            number = text.rstrip("kmgib")
            unit = text[len(number):]
            if not number.isdigit() or unit not in _SIZE_UNITS:
                self.fail(section, key, expected, value)
            value = int(number) * _SIZE_UNITS[unit]
        if value < 1024:
            self.fail(section, key, expected, value)
        return int(value)

    def gateway(self, data: dict[str, Any]) -> GatewaySettings:
        table = self.section(data, "gateway")
        self.keys(table, "gateway", _GATEWAY_KEYS)
        d = GatewaySettings()
        retries = table.get("timeout_retries", d.timeout_retries)
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 100:
            self.fail("gateway", "timeout_retries", "an integer from 0 to 100", retries)
        timeout = self.duration(table, "call_timeout", "gateway")
        if timeout < 100:
            self.fail("gateway", "call_timeout", "a duration of at least 100 ms", timeout)
        return GatewaySettings(
            max_result_bytes=self.size(table, "gateway", "max_result_bytes", d.max_result_bytes),
            max_put_bytes=self.size(table, "gateway", "max_put_bytes", d.max_put_bytes),
            call_timeout=timeout / 1000, timeout_retries=retries)

    def replay(self, data: dict[str, Any]) -> ReplaySettings:
        table = self.section(data, "replay")
        self.keys(table, "replay", ("roll_period", "margin", "archive_ttl",
                                    "allow_lossy_deletes", "batches_in_flight"))
        lossy = table.get("allow_lossy_deletes", False)
        if not isinstance(lossy, bool):
            self.fail("replay", "allow_lossy_deletes", "true or false", lossy)
        in_flight = table.get("batches_in_flight", 2)
        if isinstance(in_flight, bool) or not isinstance(in_flight, int) or not (
                0 <= in_flight <= 64):
            self.fail("replay", "batches_in_flight", "an integer from 0 to 64", in_flight)
        return ReplaySettings(roll_period=self.duration(table, "roll_period"),
                              margin=self.duration(table, "margin"),
                              archive_ttl=self.duration(table, "archive_ttl"),
                              allow_lossy_deletes=bool(lossy), batches_in_flight=in_flight)

    def cdc(self, data: dict[str, Any]) -> CdcSettings | None:
        if "cdc" not in data:
            return None
        table = self.section(data, "cdc", required=True)
        self.keys(table, "cdc", _CDC_KEYS)
        bootstrap = self.string(table, "cdc", "bootstrap", required=True) or ""
        if not bootstrap.strip() or any(not b.strip() for b in bootstrap.split(",")):
            self.fail("cdc", "bootstrap", "host:port[,host:port...]", bootstrap)
        topic = self.string(table, "cdc", "topic") or CdcSettings.topic
        if not topic.strip() or any(c.isspace() for c in topic):
            self.fail("cdc", "topic", "a topic name, or a template with {table}", topic)
        row_image = table.get("row_image", False)
        if not isinstance(row_image, bool):
            self.fail("cdc", "row_image", "true or false", row_image)
        retries = table.get("retries", 3)
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            self.fail("cdc", "retries", "a number of retries >= 0", retries)
        timeout = self.duration(table, "delivery_timeout", "cdc")
        if timeout < 1:
            self.fail("cdc", "delivery_timeout", "a duration of at least 1 ms", timeout)
        producer = table.get("producer", {})
        if not isinstance(producer, dict) or not all(
                isinstance(v, (str, int, float, bool)) for v in producer.values()):
            self.fail("cdc", "producer", "a table of librdkafka settings", producer)
        fixed = sorted(set(producer) & set(FIXED_PRODUCER_KEYS))
        if fixed:
            self.fail("cdc", "producer", "settings other than " + ", ".join(FIXED_PRODUCER_KEYS)
                      + " (the stream's guarantees rest on them)", ", ".join(fixed))
        return CdcSettings(bootstrap.strip(), topic, row_image, timeout, retries,
                           tuple(sorted((str(k), _setting(v)) for k, v in producer.items())))


def _setting(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
