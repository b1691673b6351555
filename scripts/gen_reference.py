"""The docs site's reference pages, generated from the code so that they follow it.

Each ``*_page()`` returns one page's markdown: the migration file's keys (asked of the
config reader itself: the keys each section accepts, what each value must be, the defaults
of a parsed minimal config; descriptions from the comments of ``hbase_migrate/config.py``'s
example and of the settings' dataclass fields), the command line (the click tree, the
entry-point groups included), the Params of the Airflow DAGs (read from the DAG objects,
no Airflow database), the Prometheus metrics (``hbase_migrate/metrics.py``), the ledger's
tables (``sql/``) and the error classes (every ``HBaseMigrateError`` subclass, with the
remedies of ``scripts/error_remedies.py``).

``make docs`` builds them into the site through ``scripts/mkdocs_hooks.py``;
``python scripts/gen_reference.py DIR`` writes them to DIR to read them as files.
"""

from __future__ import annotations

import ast
import html
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

PROBE_KEY = "zz_not_a_key"
PROBE_VALUE: Any = [{"probe": 1}]  # a value no key accepts: the error says what it expects

# Keys whose meaning no comment of the code states (the cluster's endpoints).
KEY_DESCRIPTIONS = {
    "name": "the cluster's name in messages and the ledger (default: the section's role)",
    "thrift": "the Thrift1 gateway, `host:port` (HBase's `hbase thrift`; DDL, region lists)",
    "thrift2": "the Thrift2 gateway, `host:port` (HBase's `hbase thrift2`; reads and writes)",
    "transport": "the gateways' Thrift transport; `\"http\"` when they run with "
                 "`hbase.regionserver.thrift.http = true`",
    "protocol": "the gateways' Thrift protocol (`\"binary\"`, `\"compact\"`)",
    "webhdfs": "the NameNode's WebHDFS URL (`http://nn:9870`, `https://` for TLS): where "
               "the WAL files are read",
    "namenode": "the NameNode's RPC address, `host:port` (`fs.defaultFS`'s, 8020): store "
                "files are then read from the DataNodes over HDFS's own protocols, not "
                "through WebHDFS (needs `webhdfs` too; not on Kerberos-secured clusters yet)",
    "zookeeper": "the cluster's ZooKeeper quorum, `host:port[,host:port]`",
    "znode_parent": "HBase's `zookeeper.znode.parent`",
    "hbase_root": "HBase's `hbase.rootdir` path on HDFS (a local folder when no `webhdfs`)",
    "target.cluster_json": "a `cluster.json` file holding the endpoints (written by `minicluster "
                    "start` and `realstack start`)",
    "auth": "`\"kerberos\"` for a secured cluster (default `\"none\"`)",
    "principal": "the principal the migration logs in as",
    "keytab": "the keytab of `principal` (omit to use your own `kinit` ticket)",
    "krb5_conf": "the realm's `krb5.conf` (optional)",
    "hbase_principal": "HBase's service principal, of the Thrift gateways and of the master "
                       "and region servers' own RPC (`_HOST`: the server's host)",
    "hbase_master_principal": "the masters' principal where it is not `hbase_principal` "
                              "(HBase's `hbase.master.kerberos.principal`): then a server "
                              "both may answer for is asked which it runs as (HBase 2.6's "
                              "security preamble)",
    "rpc_protection": "with `client = \"native\"`: the `hbase.rpc.protection` asked of HBase's "
                      "own RPC: `authentication` (default), `integrity`, `privacy`, or a list "
                      "of them, most wanted first",
    "http_principal": "WebHDFS's SPNEGO principal (and the gateways' in HTTP mode)",
    "zookeeper_principal": "ZooKeeper's service principal",
    "qop": "the gateways' `hbase.thrift.security.qop`: `auth`, `auth-int` or `auth-conf`",
    "tls_ca_file": "the CA file for an `https://` WebHDFS or gateway, and for HBase's RPC "
                   "over TLS",
    "rpc_tls": "with `client = \"native\"`: `\"on\"` for HBase 2.6's TLS on its RPC "
               "(`hbase.client.netty.tls.enabled`; default `\"off\"`)",
    "rpc_tls_verify_hostname": "with `rpc_tls`: `\"false\"` skips the servers' host name "
                               "check (`hbase.client.netty.tls.verify.server.hostname`; "
                               "default `\"true\"`)",
    "tls_cert_file": "with `rpc_tls`: the client's certificate (PEM), for servers that want "
                     "one (`hbase.server.netty.tls.client.auth.mode`)",
    "tls_key_file": "with `tls_cert_file`: its private key (PEM, unencrypted; mode 600)",
    "admin_shell": "a command that runs hbase shell statements read on stdin against this "
                   "cluster (`\"hbase shell -n\"`): a repair's flush and major_compact past "
                   "delete markers, and the `hbase` copy method's snapshot calls",
    "tables.source": "the source table's name (`\"ns:table\"` allowed)",
    "source.cluster_json": "a `cluster.json` file holding the endpoints (written by "
                           "`minicluster start` and `realstack start`), or explicit endpoints",
    "migration.name": "the migration's name: one per ledger, in every step and message",
    "migration.ledger_env": "the name of an environment variable holding the ledger URL "
                            "(keeps a PostgreSQL password out of the file); not with `ledger`",
    "replay.margin": "how far before T0 replay starts reading edits, so that an edit in "
                     "flight at T0 or a clock skew between hosts is not missed",
    "replay.allow_lossy_deletes": "through a Thrift1 target only: let a single-version "
                                  "delete become a DeleteColumn (counted in the ledger) "
                                  "instead of failing its file",
    "limits.latency_target_ms": "with `adaptive`: a gateway call slower than this halves "
                                "the task's rate",
    "cdc.bootstrap": "the Kafka brokers, `host:port[,host:port...]`",
}


def _minimal_config() -> dict[str, Any]:
    cluster = {"thrift": "localhost:9090", "thrift2": "localhost:9091"}
    return {"migration": {"name": "m", "ledger": "sqlite:///:memory:"},
            "source": dict(cluster), "target": dict(cluster),
            "tables": [{"source": "t"}], "cdc": {"bootstrap": "localhost:9092"}}


def _config_error(data: dict[str, Any]) -> str:
    from hbase_migrate.config import parse_config
    from hbase_migrate.errors import ConfigError

    try:
        parse_config(data, Path("M.toml"))
    except ConfigError as exc:
        return str(exc)
    return ""


def _section_of(data: dict[str, Any], section: str) -> dict[str, Any]:
    found = data.setdefault(section, {})
    return found[0] if isinstance(found, list) else found  # type: ignore[no-any-return]


def accepted_keys() -> dict[str, list[str]]:
    """Each section's keys, as the reader lists them when it meets an unknown one."""
    from hbase_migrate.config import _SECTIONS

    found: dict[str, list[str]] = {}
    for section in _SECTIONS:
        data = _minimal_config()
        _section_of(data, section)[PROBE_KEY] = 1
        message = _config_error(data)
        listed = message.partition("expected one of ")[2]
        if not listed:
            raise RuntimeError(f"[{section}] accepted a key it does not know: {message!r}")
        found[section] = [k.strip() for k in listed.split(",")]
    return found


def _expected(section: str, key: str) -> str:
    data = _minimal_config()
    if section in ("source", "target") and key not in ("thrift", "thrift2"):
        data[section] = {"thrift": "localhost:9090"}
    _section_of(data, section)[key] = PROBE_VALUE
    message = _config_error(data)
    return message.partition(": expected ")[2].rpartition(", got ")[0] or message


def _defaults() -> dict[str, dict[str, Any]]:
    from hbase_migrate.cluster.auth.security import ClusterSecurity
    from hbase_migrate.cluster.endpoints import ClusterEndpoints
    from hbase_migrate.config import parse_config

    spec = parse_config(_minimal_config(), Path("M.toml")).to_dict()
    cluster = {f: getattr(ClusterEndpoints, f, None)
               for f in ClusterEndpoints.__dataclass_fields__}
    cluster.update(ClusterSecurity().to_json())
    cluster.update(name=None, thrift=None, thrift2=None)
    defaults: dict[str, dict[str, Any]] = {k: v for k, v in spec.items() if isinstance(v, dict)}
    defaults["source"] = defaults["target"] = cluster
    defaults["tables"] = {"target": "the source's name", "families": "every family"}
    defaults["migration"] = {"ledger": "`$HBASE_MIGRATE_LEDGER`, else "
                                       "`<state dir>/<name>/ledger.db`"}
    defaults["cdc"].pop("bootstrap")
    return defaults


_DURATION_TEXT = "a duration"
_SIZE_TEXT = "bytes"


def _show_default(value: Any, expected: str) -> str:
    from hbase_migrate.timeutil import format_duration

    if value is None or value in ({}, []):
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int) and _DURATION_TEXT in expected:
        return f"`\"{format_duration(value)}\"`"
    if isinstance(value, int) and _SIZE_TEXT in expected and value % 1024**2 == 0:
        return f"`\"{value // 1024**2}MiB\"`" if value else "`0`"
    if isinstance(value, str) and (value.startswith("`") or " " in value):
        return value  # a sentence of this generator's, not a value
    return f"`{value!r}`".replace("'", '"')


def _comments_of_example() -> dict[tuple[str, str], str]:
    """(section, key) -> the comment beside the key in ``config.py``'s example (with its
    continuation lines)."""
    from hbase_migrate import config

    found: dict[tuple[str, str], str] = {}
    section, last = "", None
    for line in (config.__doc__ or "").split("::", 1)[-1].splitlines():
        stripped = line.strip()
        header = re.match(r"^\[\[?(\w+)\]\]?\s*(#.*)?$", stripped)
        pair = re.match(r"^#?\s*(\w+)\s*=\s*(.*?)(?:\s+#\s*(.*))?$", stripped)
        if header:
            section, last = header.group(1), None
        elif stripped.startswith("#") and last is not None and line.startswith(" " * 20):
            found[last] += " " + stripped.lstrip("# ")
        elif pair and not stripped.startswith("#") and pair.group(3):
            last = (section, pair.group(1))
            found[last] = pair.group(3)
        else:
            last = None
    return found


def _field_comments(*classes: type) -> dict[str, str]:
    """field -> the comment that ends its line in the dataclasses' source."""
    import inspect

    found: dict[str, str] = {}
    for cls in classes:
        source = inspect.getsource(cls)
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                match = re.match(r"^\s*(\w+)\s*:", tok.line)
                if match and match.group(1) not in found:
                    found[match.group(1)] = tok.string.lstrip("# ")
    return found


@dataclass(frozen=True)
class ConfigKey:
    section: str
    key: str
    expected: str
    default: str
    description: str


def config_keys() -> list[ConfigKey]:
    """Every key of the migration file, in the reader's order."""
    from hbase_migrate.cluster.auth.security import ClusterSecurity
    from hbase_migrate.cluster.endpoints import ClusterEndpoints
    from hbase_migrate.cluster.sizing import ClientSettings
    from hbase_migrate.config import (
        CdcSettings,
        EngineSettings,
        LimitSettings,
        ReplaySettings,
        SnapshotSettings,
    )

    comments = _comments_of_example()
    fields = _field_comments(ClusterEndpoints, ClusterSecurity, ClientSettings, ReplaySettings,
                             EngineSettings, CdcSettings, LimitSettings, SnapshotSettings)
    defaults = _defaults()
    keys = []
    for section, names in accepted_keys().items():
        for key in names:
            expected = _expected(section, key)
            description = (KEY_DESCRIPTIONS.get(f"{section}.{key}")
                           or comments.get((section, key)) or KEY_DESCRIPTIONS.get(key)
                           or fields.get(key) or "")
            keys.append(ConfigKey(section, key, expected,
                                  _show_default(defaults.get(section, {}).get(key), expected),
                                  description))
    return keys


def _text(text: str) -> str:
    """``text`` with ``<`` and ``>`` outside code spans shown as themselves (not HTML)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("<", "&lt;").replace(">", "&gt;")
    return "`".join(parts)


def _cell(text: str) -> str:
    """``text`` in a table cell: one line, pipes outside code spans escaped."""
    parts = _text(text.replace("\n", " ")).split("`")
    for i in range(0, len(parts), 2):
        parts[i] = parts[i].replace("|", "\\|")
    return "`".join(parts)


def _code(text: str) -> str:
    """``text`` as code in a table cell (a pipe inside a code span would show its escape)."""
    escaped = html.escape(text).replace("|", "&#124;").replace("\\", "&#92;")
    return f"<code>{escaped}</code>"


def config_page() -> str:
    from hbase_migrate import config

    lines = ["# Migration file keys", "",
             "Generated from the config reader (`hbase_migrate/config.py`, "
             "`hbase_migrate/config_reader.py`): the keys each section accepts, what each "
             "value must be (the reader's own words when a value is wrong), the default, and "
             "the comment the code gives the key. Unknown keys are errors.", ""]
    intro = (config.__doc__ or "").split("::", 1)[-1].split("\n\n", 2)
    notes = intro[2] if len(intro) > 2 else ""
    if notes:
        lines += [re.sub(r":(?:meth|mod|func|class):`~?([^`]+)`", r"`\1`", notes.strip())
                  .replace("``", "`"), ""]
    section = None
    for key in config_keys():
        if key.section != section:
            section = key.section
            title = f"[[{section}]]" if section == "tables" else f"[{section}]"
            lines += ["", f"## `{title}`", "", "| key | value | default | what |",
                      "|---|---|---|---|"]
        lines.append(f"| `{key.key}` | {_cell(key.expected)} | {_cell(key.default)} | "
                     f"{_cell(key.description)} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- the CLI

def cli_commands() -> list[tuple[list[str], Any]]:
    """Every command of ``hbase-migrate``, groups first, entry-point groups included."""
    import click

    from hbase_migrate.cli import cli

    ctx = click.Context(cli)
    found: list[tuple[list[str], click.Command]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name])

    walk(cli, [])
    return found


def _option_line(param: Any) -> str:
    import click

    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    if isinstance(param, click.Argument):
        what = param.make_metavar(click.Context(click.Command("x")))
        return f"| `{what}` (argument) | {'required' if param.required else 'optional'} | |"
    default = param.default
    hidden = default in (None, (), False) or callable(default) or "Sentinel" in repr(default)
    shown = "" if hidden else f"`{default}`"
    help_text = _cell(" ".join((param.help or "").split()))
    choices = getattr(param.type, "choices", None)
    if choices:
        help_text += " (" + ", ".join(f"`{c}`" for c in choices) + ")"
    return f"| {names} | {help_text} | {shown} |"


def cli_page() -> str:
    import click

    lines = ["# Command line", "",
             "Generated from the `hbase-migrate` command itself (its click tree, the "
             "entry-point groups of the embedded stack included). `hbase-migrate COMMAND "
             "--help` prints the same with examples.", ""]
    for path, command in cli_commands():
        name = " ".join(["hbase-migrate", *path])
        lines += [f"## `{name}`", ""]
        text = (command.help or command.short_help or "").split("\n  Examples:")[0]
        text = "\n".join(line.strip() for line in text.strip().split("\b")[0].splitlines())
        lines += [_text(text.strip()), ""]
        if isinstance(command, click.Group):
            subs = command.list_commands(click.Context(command))
            lines += ["Commands: " + ", ".join(f"`{s}`" for s in subs), ""]
        params = [p for p in command.params if p.name != "help"]
        if params:
            lines += ["| option | what | default |", "|---|---|---|"]
            lines += [_option_line(p) for p in params]
            lines.append("")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------- the Params

def dag_params() -> dict[str, dict[str, Any]]:
    """dag_id -> its description, schedule and Params (name -> the Param's dump), read from
    the DAG objects Airflow's own DagBag parses (a throw-away Airflow home; no database)."""
    import atexit
    import os
    import shutil
    import tempfile

    if "AIRFLOW_HOME" not in os.environ:
        home = tempfile.mkdtemp(prefix="docs-airflow-home-")
        atexit.register(shutil.rmtree, home, ignore_errors=True)
        os.environ["AIRFLOW_HOME"] = home
    os.environ.setdefault("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
    os.environ.setdefault("AIRFLOW__LOGGING__LOGGING_LEVEL", "WARNING")
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(REPO / "dags"), safe_mode=False, load_op_links=False)
    if bag.import_errors:
        raise RuntimeError(f"DAG files that do not import: {bag.import_errors}")
    found: dict[str, dict[str, Any]] = {}
    for dag_id in sorted(bag.dags):
        dag = bag.dags[dag_id]
        found[dag_id] = {
            "description": (dag.doc_md or dag.description or "").strip(),
            "schedule": _schedule(dag),
            "params": {name: dag.params.get_param(name).dump() for name in dag.params},
        }
    return found


def _schedule(dag: Any) -> str:
    timetable = dag.timetable
    kind = type(timetable).__name__
    expression = getattr(timetable, "expression", None)
    delta = getattr(timetable, "delta", None)
    if expression:
        return f"`{expression}` ({kind})"
    if delta:
        return f"every {delta} ({kind})"
    if kind == "NullTimetable":
        return "none: triggered by hand"
    if "Asset" in kind:
        return "on the events of an Asset (" + kind + ")"
    return kind


def params_page() -> str:
    lines = ["# Airflow Params", "",
             "Generated from the DAG objects of `dags/` (their `params`, parsed by Airflow's "
             "DagBag): each DAG's Trigger form. Types, enums, patterns and date-times are "
             "checked before a run starts.", ""]
    for dag_id, dag in dag_params().items():
        about = re.sub(r"^#+ .*$", "", dag["description"], count=1, flags=re.M).strip()
        lines += [f"## `{dag_id}`", "", f"Schedule: {dag['schedule']}.", "", about, "",
                  "| Param | type | default | title / description |", "|---|---|---|---|"]
        for name, param in dag["params"].items():
            schema = dict(param.get("schema") or {})
            kind = schema.pop("type", "")
            kind = " or ".join(kind) if isinstance(kind, list) else kind
            title = schema.pop("title", "")
            description = param.get("description") or schema.pop("description", "") or ""
            extra = "".join(f"; {k} {_code(str(schema[k]))}" for k in
                            ("enum", "pattern", "format", "minimum", "maximum") if k in schema)
            value = param.get("value")
            shown = "" if value is None else _code(repr(value).replace("'", '"'))
            what = ". ".join(filter(None, [title, description]))
            lines.append(f"| `{name}` | {_cell(str(kind))}{extra} | {shown} | {_cell(what)} |")
        lines.append("")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ the metrics

@dataclass(frozen=True)
class MetricInfo:
    name: str
    kind: str
    help: str
    labels: tuple[str, ...]


def metrics() -> list[MetricInfo]:
    """The metric families ``hbase_migrate/metrics.py`` builds (its source's calls)."""
    import hbase_migrate.metrics as module

    tree = ast.parse(Path(module.__file__ or "").read_text("utf-8"))
    common = tuple(module._LABELS)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id.endswith("MetricFamily")):
            name, doc = (ast.literal_eval(a) for a in node.args[:2])
            labels: list[str] = []
            for keyword in node.keywords:
                if keyword.arg == "labels":
                    value = keyword.value
                    items = value.elts if isinstance(value, ast.List) else [ast.Starred(value)]
                    for item in items:
                        labels += common if isinstance(item, ast.Starred) else [
                            ast.literal_eval(item)]
            counter = node.func.id.startswith("Counter")
            found.append(MetricInfo(name + ("_total" if counter else ""),
                                    "counter" if counter else "gauge", doc, tuple(labels)))
    return found


def metrics_page() -> str:
    lines = ["# Metrics", "",
             "Generated from `hbase_migrate/metrics.py`: what `replay --follow` and `cdc "
             "--follow` serve for Prometheus with `--metrics-port P` (`--metrics-host H`, "
             "loopback by default; `0` picks a free port and prints it). Ledger figures are "
             "read at each scrape, so they equal what `status --json` prints under `streams`. "
             "Every series carries `migration` and `stream` (`source` for replay, `cdc`).", "",
             "| metric | type | labels | what |", "|---|---|---|---|"]
    for metric in metrics():
        labels = ", ".join(f"`{label}`" for label in metric.labels)
        lines.append(f"| `{metric.name}` | {metric.kind} | {labels} | {_cell(metric.help)} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------- the ledger

def ledger_tables() -> dict[str, list[tuple[str, str, int]]]:
    """table -> its columns (name, SQL type, schema version that added it), from the SQL
    migrations applied to a fresh SQLite ledger."""
    import sqlite3

    from hbase_migrate.audit.schema import known_migrations

    db = sqlite3.connect(":memory:")
    seen: dict[str, list[tuple[str, str, int]]] = {}
    for migration in known_migrations():
        for statement in migration.statements("sqlite"):
            db.execute(statement)
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                   "AND name NOT LIKE 'sqlite_%' ORDER BY name"):
            columns = seen.setdefault(table, [])
            known = {c[0] for c in columns}
            for row in db.execute(f"PRAGMA table_info({table})"):
                if row[1] not in known:
                    columns.append((row[1], row[2], migration.version))
    return seen


def _sql_comments() -> dict[str, str]:
    """table or table.column -> the ``--`` comment the SQL files give it."""
    from hbase_migrate.audit.schema import known_migrations

    found: dict[str, str] = {}
    for migration in known_migrations():
        table = ""
        for line in migration.path.read_text("utf-8").splitlines():
            code, _, comment = line.partition("--")
            create = re.search(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", code, re.I)
            alter = re.search(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", code, re.I)
            column = re.match(r"^\s+(\w+)\s+\w", code)
            if create:
                table = create.group(1)
                if comment.strip():
                    found[table] = comment.strip()
            elif alter and comment.strip():
                found[f"{alter.group(1)}.{alter.group(2)}"] = comment.strip()
            elif column and table and comment.strip():
                found[f"{table}.{column.group(1)}"] = comment.strip()
            if code.strip().startswith(")"):
                table = ""
    return found


def ledger_page() -> str:
    from hbase_migrate.audit.schema import known_migrations

    versions = ", ".join(f"{m.version} `{m.path.name}`" for m in known_migrations())
    comments = _sql_comments()
    lines = ["# Ledger tables", "",
             "Generated from the SQL migrations of `sql/` (applied in order to a fresh "
             "SQLite ledger; PostgreSQL gets the same tables). `hbase-migrate ledger upgrade` "
             f"applies them. Schema versions: {versions}.", ""]
    for table, columns in ledger_tables().items():
        lines += [f"## `{table}`", "", comments.get(table, ""), "",
                  "| column | type | since | note |", "|---|---|---|---|"]
        lines += [f"| `{name}` | {kind} | {version} | "
                  f"{_cell(comments.get(f'{table}.{name}', ''))} |"
                  for name, kind, version in columns]
        lines.append("")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------- the errors

SOURCE_ROOTS = ("hbase_migrate", "minihbase", "realstack", "stackprocs", "hbase_migrate_airflow")


@dataclass(frozen=True)
class ErrorClass:
    name: str
    module: str
    bases: tuple[str, ...]
    doc: str


def error_classes() -> list[ErrorClass]:
    """Every subclass of ``HBaseMigrateError`` in the project's sources (read as source,
    nothing imported), in module order."""
    classes: dict[str, ErrorClass] = {}
    for root in SOURCE_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            module = ".".join(path.relative_to(REPO).with_suffix("").parts)
            for node in ast.parse(path.read_text("utf-8")).body:
                if isinstance(node, ast.ClassDef):
                    bases = tuple(b.id if isinstance(b, ast.Name) else ast.unparse(b)
                                  for b in node.bases)
                    classes.setdefault(node.name, ErrorClass(
                        node.name, module, bases, ast.get_docstring(node) or ""))

    def is_error(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == "HBaseMigrateError":
            return True
        found = classes.get(name.rpartition(".")[2])
        return found is not None and name not in seen and any(
            is_error(b, seen | {name}) for b in found.bases)

    return [c for c in classes.values() if is_error(c.name)]


def _message(node: ast.expr) -> str | None:
    """A raise site's message as a template: f-string values shown as ``{expression}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else
                       "{" + ast.unparse(v.value) + "}"  # type: ignore[attr-defined]
                       for v in node.values)
    return None


def raise_messages(names: set[str]) -> dict[str, list[str]]:
    """Error class -> the messages its ``raise`` sites in the sources give it (the literal
    ones and f-strings; messages built elsewhere are not seen)."""
    found: dict[str, list[str]] = {}
    for root in SOURCE_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                        and node.exc.args):
                    continue
                func = node.exc.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                message = _message(node.exc.args[0]) if name in names else None
                if message and message not in found.setdefault(name, []):
                    found[name].append(message)
    return found


def _paragraph(text: str) -> str:
    text = re.sub(r":(?:meth|mod|func|class|data):`~?([^`]+)`", r"`\1`", text)
    return _text(" ".join(text.replace("``", "`").split()))


def as_seen(template: str) -> str:
    """A message template as an operator reads the line: each ``{value}`` as ``…``."""
    return re.sub(r"\{[^{}]*\}", "…", template)


def _anchor(name: str) -> str:
    return "error-" + name.strip("_").lower()


def _message_index(messages: dict[str, list[str]], names: list[str]) -> list[str]:
    """Every message the code gives, as seen, in alphabetical order, each linked to the
    entry of its error."""
    rows = sorted({(as_seen(m), name) for name in names for m in messages.get(name, [])
                   if len(re.findall(r"[A-Za-z]{2,}", as_seen(m))) >= 2},  # words to find
                  key=lambda row: (row[0].lstrip("…:[( -").lower(), row[1]))
    return ["## Find your message", "",
            "Search this page for words of the line the tool printed (after "
            "`hbase-migrate: error:`); `…` stands for what differs from run to run (a "
            "file, a table, an endpoint). Each message leads to its cause and remedy.", "",
            *(f"* {_code(seen)} → [cause and remedy](#{_anchor(name)})"
              for seen, name in rows), ""]


def errors_page() -> str:
    from scripts.error_remedies import GROUPS, INTRO, REMEDIES

    found = {c.name: c for c in error_classes()}
    messages = raise_messages(set(found))
    listed = [n for _, _, names in GROUPS for n in names if n in found]
    lines = ["# Troubleshooting", "", INTRO.strip(), "", *_message_index(messages, listed)]
    for title, about, names in GROUPS:
        lines += [f"## {title}", "", about, ""]
        for name in names:
            error = found.get(name)
            if error is None:
                continue
            bases = ", ".join(f"`{b}`" for b in error.bases)
            said = messages.get(name, [])
            lines += [f"### `{name}` {{ #{_anchor(name)} }}", "",
                      *([f"**What it says.** {'; '.join(_code(as_seen(m)) for m in said)}",
                         ""] if said else []),
                      f"**Cause.** {_paragraph(error.doc) or 'See the message.'}", "",
                      f"**Remedy.** {REMEDIES.get(name, '')}", "",
                      f"*`{error.module}`, a kind of {bases}.*", ""]
    return "\n".join(lines) + "\n"


PAGES: dict[str, Callable[[], str]] = {
    "reference/config.md": config_page,
    "reference/cli.md": cli_page,
    "reference/params.md": params_page,
    "reference/metrics.md": metrics_page,
    "reference/ledger.md": ledger_page,
    "troubleshooting.md": errors_page,
}


def generate() -> Iterator[tuple[str, str]]:
    """(path under docs/, markdown) of every generated page."""
    for path, page in PAGES.items():
        yield path, page()


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build/reference")
    for name, text in generate():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, "utf-8")
        print(out / name)
