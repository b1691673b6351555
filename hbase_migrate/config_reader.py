"""Reading a migration file's TOML tree into the spec's parts (:mod:`hbase_migrate.config`
builds the spec from them): every value checked where it is read, every error naming the
file, the section, the key and what was expected."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from hbase_migrate.cluster.admin import DEFAULT_HBASE_VERSION
from hbase_migrate.cluster.auth.security import SECURITY_KEYS, ClusterSecurity, warn_if_exposed
from hbase_migrate.cluster.endpoints import CLIENTS, ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.config_parts import (
    AUTO,
    BULK_DEFAULTS,
    BULK_MEMORY_MIN,
    BULK_MODES,
    CDC_DEFAULTS,
    DEFAULT_AUTO_CELLS,
    DEFAULT_BULK,
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
    VALIDATE_FROM,
    CdcSettings,
    ClusterSpec,
    EngineSettings,
    LimitSettings,
    ReplaySettings,
    SnapshotSettings,
    TableSpec,
    ValidateSettings,
)
from hbase_migrate.errors import ConfigError
from hbase_migrate.tablename import InvalidTableNameError, normalize_table_name
from hbase_migrate.timeutil import parse_duration

_GATEWAY_KEYS = ("max_result_bytes", "max_put_bytes", "call_timeout", "timeout_retries",
                 "region_wait", "multis_per_server")
_GATEWAY_DEFAULTS = {"call_timeout": round(ClientSettings.call_timeout * 1000),
                     "region_wait": round(ClientSettings.region_wait * 1000)}
_SIZE_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1024,
               "mib": 1024**2, "gib": 1024**3}
_LIMITS_DEFAULTS = {"refresh": LimitSettings.refresh}
_CDC_KEYS = ("bootstrap", "topic", "row_image", "delivery_timeout", "retries", "producer",
             "envelope")


class Reader:
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
        defaults = {"replay": REPLAY_DEFAULTS, "cdc": CDC_DEFAULTS,
                    "gateway": _GATEWAY_DEFAULTS, "limits": _LIMITS_DEFAULTS,
                    "snapshot": SNAPSHOT_DEFAULTS}[section]
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
        if role == "target" and table.get("kind") == "bigtable":
            return ClusterSpec(role, bigtable=BigtableSettings.from_section(table, self))
        if "kind" in table:
            self.fail(role, "kind", "\"bigtable\" (a Google Cloud Bigtable target), or no kind "
                      "(an HBase cluster)" if role == "target" else "no kind (an HBase cluster)",
                      table["kind"])
        self.keys(table, role, ("cluster_json", "admin_shell", *ENDPOINT_KEYS,
                                *SECURITY_KEYS))
        cluster_json = self.string(table, role, "cluster_json")
        shell = self.string(table, role, "admin_shell")
        security = self.security(table, role)
        given: dict[str, Any] = {k: self.string(table, role, k) for k in ENDPOINT_KEYS
                                 if k in table}
        if cluster_json is not None:
            client = given.pop("client", None)  # a setting, over the file's own
            if given:
                raise ConfigError(
                    f"{self.path}: [{role}]: give either cluster_json or explicit endpoints, "
                    f"not both (found cluster_json and {', '.join(sorted(given))})")
            if client is not None and client not in CLIENTS:
                self.fail(role, "client", f"one of {', '.join(CLIENTS)}", client)
            return ClusterSpec(role, cluster_json=self.folder / cluster_json, admin_shell=shell,
                               security=security, client=client)
        if not given.get("thrift") and not given.get("zookeeper") and not given.get("uri"):
            raise ConfigError(f"{self.path}: [{role}]: expected cluster_json or at least "
                              "thrift = \"host:port\" (or zookeeper = \"host:2181\" or uri = "
                              "\"hbase+rpc://host:16020\" for client = \"native\")")
        given.setdefault("name", role)
        root = given.get("hbase_root")
        if root and not given.get("webhdfs") and not Path(root).is_absolute():
            given["hbase_root"] = str(self.folder / root)  # a local HBase root folder
        try:
            endpoints = ClusterEndpoints(**{k: v for k, v in given.items() if v is not None})
        except ConfigError as exc:
            raise ConfigError(f"{self.path}: [{role}]: {exc}") from None
        return ClusterSpec(role, explicit=endpoints, admin_shell=shell, security=security)

    def security(self, table: dict[str, Any], role: str) -> tuple[tuple[str, str], ...]:
        """The section's security keys, checked (relative files against the config's
        folder)."""
        given = {k: table[k] for k in SECURITY_KEYS if k in table}
        if given:
            warn_if_exposed(self.path, f"a migration config with [{role}] security settings")
        checked = ClusterSecurity.checked(given, f"{self.path}: [{role}]", self.folder)
        return tuple(sorted(checked.items()))

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
        self.keys(spark, "spark", ("master", "large_master", "auto_cells", "ship_keytab",
                                   "python", "conf"))
        self.keys(ranges, "ranges", ("max_cells", "parts", "threads", "plan_copy_cells"))
        master = self.string(spark, "spark", "master") or DEFAULT_SPARK_MASTER
        if not master.strip():
            self.fail("spark", "master", f"{AUTO!r}, {IN_PROCESS!r} or a Spark master URL",
                      master)
        large = self.string(spark, "spark", "large_master") or LOCAL_SPARK_MASTER
        if not large.strip() or large in (AUTO, IN_PROCESS):
            self.fail("spark", "large_master", "a Spark master URL", large)
        ship = spark.get("ship_keytab", SHIP_KEYTAB[0])
        if ship not in SHIP_KEYTAB:
            self.fail("spark", "ship_keytab", " or ".join(f'"{s}"' for s in SHIP_KEYTAB), ship)
        return EngineSettings(spark_master=master, large_master=large,
                              max_cells=self.count(ranges, "ranges", "max_cells",
                                                   DEFAULT_MAX_CELLS),
                              auto_cells=self.count(spark, "spark", "auto_cells",
                                                    DEFAULT_AUTO_CELLS),
                              parts=self.count(ranges, "ranges", "parts", DEFAULT_PARTS),
                              threads=self.count(ranges, "ranges", "threads",
                                                 DEFAULT_RANGE_THREADS),
                              plan_copy_cells=(self.count(ranges, "ranges", "plan_copy_cells", 1)
                                               if "plan_copy_cells" in ranges else None),
                              ship_keytab=ship, python=self.executor_python(spark),
                              conf=self.spark_conf(spark))

    def executor_python(self, spark: dict[str, Any]) -> str | None:
        """``[spark] python``: the executors' interpreter (a path or a command on their
        PATH), None for the shipped archive's."""
        python = spark.get("python")
        if python is not None and (not isinstance(python, str) or not python.strip()):
            self.fail("spark", "python", "the executors' Python (a path or a command)", python)
        return python

    def spark_conf(self, spark: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        """``[spark] conf``: Spark settings (``"spark.executor.memory" = "2g"``)."""
        conf = spark.get("conf", {})
        if not isinstance(conf, dict) or not all(
                isinstance(k, str) and k.startswith("spark.") and
                isinstance(v, (str, int, float, bool)) for k, v in conf.items()):
            self.fail("spark", "conf", 'a table of Spark settings ("spark.executor.memory" = '
                      '"2g")', conf)
        return tuple(sorted((k, _setting(v)) for k, v in conf.items()))

    def count(self, table: dict[str, Any], section: str, key: str, default: int) -> int:
        """A positive number of cells."""
        cells = table.get(key, default)
        if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
            self.fail(section, key, "a positive number of cells", cells)
        return int(cells)

    def size(self, table: dict[str, Any], section: str, key: str, default: int) -> int:
        """Bytes: an integer, or ``512KiB``, ``4MiB``, ``4MB`` (at least 1 KiB)."""
        value = table.get(key, default)
        expected = "a size such as \"4MiB\", \"512KiB\", \"8MB\" or an integer of bytes >= 1024"
        size = _bytes(value)
        if size is None or size < 1024:
            self.fail(section, key, expected, value)
        return size

    def limits(self, table: dict[str, Any]) -> LimitSettings:
        """The ``[limits]`` section (also what ``limits set`` checks its values with)."""
        self.keys(table, "limits", LIMIT_KEYS)
        d = LimitSettings()
        rates = {}
        for key in RATE_KEYS:
            value = table.get(key, 0)
            bytes_ok = key == "copy_bytes_per_second"
            rate = _bytes(value) if bytes_ok else (
                value if isinstance(value, int) and not isinstance(value, bool) else None)
            if rate is None or rate < 0:
                self.fail("limits", key, "a number of bytes per second such as \"50MiB\" "
                          "(0: unlimited)" if bytes_ok else
                          "a number of cells per second >= 0 (0: unlimited)", value)
            rates[key] = rate
        adaptive = table.get("adaptive", d.adaptive)
        if not isinstance(adaptive, bool):
            self.fail("limits", "adaptive", "true or false", adaptive)
        target = table.get("latency_target_ms", d.latency_target_ms)
        if isinstance(target, bool) or not isinstance(target, int) or target < 1:
            self.fail("limits", "latency_target_ms", "a number of milliseconds >= 1", target)
        refresh = self.duration(table, "refresh", "limits")
        if not 100 <= refresh <= MAX_LIMITS_REFRESH:
            self.fail("limits", "refresh", "a duration from 100ms to 10s", table["refresh"])
        return LimitSettings(**rates, adaptive=adaptive, latency_target_ms=target,
                             refresh=refresh)

    def gateway(self, data: dict[str, Any]) -> ClientSettings:
        table = self.section(data, "gateway")
        self.keys(table, "gateway", _GATEWAY_KEYS)
        d = ClientSettings()
        retries = table.get("timeout_retries", d.timeout_retries)
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 100:
            self.fail("gateway", "timeout_retries", "an integer from 0 to 100", retries)
        timeout = self.duration(table, "call_timeout", "gateway")
        if timeout < 100:
            self.fail("gateway", "call_timeout", "a duration of at least 100 ms", timeout)
        region_wait = self.duration(table, "region_wait", "gateway")
        multis = table.get("multis_per_server", d.multis_per_server)
        if isinstance(multis, bool) or not isinstance(multis, int) or not 1 <= multis <= 64:
            self.fail("gateway", "multis_per_server", "an integer from 1 to 64", multis)
        return ClientSettings(
            max_result_bytes=self.size(table, "gateway", "max_result_bytes", d.max_result_bytes),
            max_put_bytes=self.size(table, "gateway", "max_put_bytes", d.max_put_bytes),
            call_timeout=timeout / 1000, timeout_retries=retries,
            region_wait=region_wait / 1000, multis_per_server=multis)

    def replay(self, data: dict[str, Any]) -> ReplaySettings:
        table = self.section(data, "replay")
        self.keys(table, "replay", ("roll_period", "margin", "archive_ttl",
                                    "allow_lossy_deletes", "batches_in_flight",
                                    "writers", "outage_tolerance", "bulk", "bulk_backlog",
                                    "bulk_window", "bulk_memory"))
        lossy = table.get("allow_lossy_deletes", False)
        if not isinstance(lossy, bool):
            self.fail("replay", "allow_lossy_deletes", "true or false", lossy)
        in_flight = table.get("batches_in_flight", 2)
        if isinstance(in_flight, bool) or not isinstance(in_flight, int) or not (
                0 <= in_flight <= 64):
            self.fail("replay", "batches_in_flight", "an integer from 0 to 64", in_flight)
        writers = table.get("writers", 1)
        if isinstance(writers, bool) or not isinstance(writers, int) or not 1 <= writers <= 32:
            self.fail("replay", "writers", "an integer from 1 to 32", writers)
        bulk = table.get("bulk", DEFAULT_BULK)
        if bulk not in BULK_MODES:
            self.fail("replay", "bulk", " or ".join(map(repr, BULK_MODES)), bulk)
        window = self.size(table, "replay", "bulk_window", BULK_DEFAULTS["bulk_window"])
        return ReplaySettings(roll_period=self.duration(table, "roll_period"),
                              margin=self.duration(table, "margin"),
                              archive_ttl=self.duration(table, "archive_ttl"),
                              allow_lossy_deletes=bool(lossy), batches_in_flight=in_flight,
                              writers=writers,
                              outage_tolerance=self.duration(table, "outage_tolerance"),
                              bulk=bulk, bulk_backlog=self.size(
                                  table, "replay", "bulk_backlog", BULK_DEFAULTS["bulk_backlog"]),
                              bulk_window=window, bulk_memory=self.bulk_memory(table, window))

    def bulk_memory(self, table: dict[str, Any], window: int) -> int:
        """``[replay] bulk_memory``: from :data:`BULK_MEMORY_MIN` (or the whole window when
        smaller) up to ``bulk_window``; unset, its default or the window when smaller."""
        if "bulk_memory" not in table:
            return min(BULK_DEFAULTS["bulk_memory"], window)
        low = min(BULK_MEMORY_MIN, window)
        value = table["bulk_memory"]
        size = _bytes(value)
        if size is None or not low <= size <= window:
            self.fail("replay", "bulk_memory", f"a size in bytes from {_size_text(low)} up to "
                      f"[replay] bulk_window ({_size_text(window)})", value)
        return size

    def snapshot(self, data: dict[str, Any]) -> SnapshotSettings:
        table = self.section(data, "snapshot")
        self.keys(table, "snapshot", ("method", "ttl", "keep", "hbase_version",
                                      "target_hfile_ttl", "auto_bulk"))
        method = table.get("method", SnapshotSettings.method)
        if method not in SNAPSHOT_METHODS:
            self.fail("snapshot", "method", " or ".join(map(repr, SNAPSHOT_METHODS)), method)
        keep = table.get("keep", False)
        if not isinstance(keep, bool):
            self.fail("snapshot", "keep", "true or false", keep)
        auto_bulk = table.get("auto_bulk", False)
        if not isinstance(auto_bulk, bool):
            self.fail("snapshot", "auto_bulk", "true or false", auto_bulk)
        ttl = self.duration(table, "ttl", "snapshot")
        if ttl < 1000:
            self.fail("snapshot", "ttl", "at least 1s (HBase keeps TTLs in seconds)", ttl)
        version = self.string(table, "snapshot", "hbase_version") or DEFAULT_HBASE_VERSION
        return SnapshotSettings(method=method, auto_bulk=auto_bulk, ttl=ttl, keep=keep,
                                hbase_version=version,
                                target_hfile_ttl=self.duration(table, "target_hfile_ttl",
                                                               "snapshot"))

    def validate(self, data: dict[str, Any]) -> ValidateSettings:
        table = self.section(data, "validate")
        self.keys(table, "validate", ("from",))
        read_from = table.get("from", "live")
        if read_from not in VALIDATE_FROM:
            self.fail("validate", "from", " or ".join(map(repr, VALIDATE_FROM)), read_from)
        return ValidateSettings(read_from=read_from)

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
        envelope = table.get("envelope", ENVELOPES[0])
        if envelope not in ENVELOPES:
            self.fail("cdc", "envelope", " or ".join(f'"{e}"' for e in ENVELOPES), envelope)
        return CdcSettings(bootstrap.strip(), topic, row_image, timeout, retries,
                           tuple(sorted((str(k), _setting(v)) for k, v in producer.items())),
                           envelope)


def _bytes(value: object) -> int | None:
    """Bytes from an integer or ``512KiB``, ``4MiB``, ``4MB``; None when neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace(" ", "")
    number = text.rstrip("kmgib")
    unit = text[len(number):]
    if not number.isdigit() or unit not in _SIZE_UNITS:
        return None
    return int(number) * _SIZE_UNITS[unit]


def _size_text(n: int) -> str:
    """``n`` bytes as the config writes it: ``256MiB``, ``4KiB``, ``1000`` (exact)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def _setting(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
