"""The generated reference agrees with the code, checked against what the code does rather
than against the generator's own reading: the documented defaults of the migration file give
the same spec as leaving the keys out, every command and option of the click tree has its
entry, the metrics a real scrape serves are the documented ones, the ledger tables are those
``ledger upgrade`` makes, every Param a DAG file declares is listed, and every error class
has a cause and a remedy."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path
from typing import Any

import click
import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping
from hbase_migrate.config import parse_config
from hbase_migrate.errors import ConfigError, HBaseMigrateError
from hbase_migrate.metrics import FollowCollector
from hbase_migrate.replay.summary import FollowSummary
from scripts import gen_reference as gen
from scripts.error_remedies import GROUPS, REMEDIES

REPO = Path(__file__).resolve().parents[2]


def _section(page: str, heading: str) -> str:
    """The text of ``page`` under the ``## heading`` (up to the next one)."""
    start = page.index(f"\n## {heading}\n")
    end = page.find("\n## ", start + 1)
    return page[start:end if end > 0 else None]


# ---------------------------------------------------------------------- config keys

def test_every_key_the_reader_accepts_is_documented() -> None:
    keys = gen.config_keys()
    page = gen.config_page()
    undocumented = [f"[{k.section}] {k.key}" for k in keys if not k.description]
    assert not undocumented, ("describe these keys in hbase_migrate/config.py's example "
                              "(a comment beside the key) or scripts/gen_reference.py",
                              undocumented)
    for key in keys:
        title = f"[[{key.section}]]" if key.section == "tables" else f"[{key.section}]"
        assert f"| `{key.key}` |" in _section(page, f"`{title}`"), (key.section, key.key)
    # the spec's own round trip names no key the reference lacks
    spec = parse_config(gen._minimal_config(), Path("M.toml")).to_dict()
    listed = {(k.section, k.key) for k in keys}
    for section, values in spec.items():
        if isinstance(values, dict) and section not in ("source", "target"):
            missing = {(section, key) for key in values} - listed
            assert not missing, missing


def test_an_unknown_key_is_refused_in_every_section() -> None:
    """The reference's key lists come from the reader's refusals: a key the reference does
    not list is refused, one it lists is not refused as unknown."""
    for key in gen.config_keys():
        data = gen._minimal_config()
        gen._section_of(data, key.section)[key.key] = gen.PROBE_VALUE
        try:
            parse_config(data, Path("M.toml"))
        except ConfigError as exc:
            assert "unknown key" not in str(exc), (key.section, key.key, str(exc))


def _toml_value(text: str) -> Any:
    return tomllib.loads(f"v = {text}")["v"]


def test_the_documented_defaults_are_the_defaults() -> None:
    """Writing each documented default explicitly gives the same spec as leaving it out."""
    base = parse_config(gen._minimal_config(), Path("M.toml"))
    checked = 0
    for key in gen.config_keys():
        shown = re.fullmatch(r"`(.+)`", key.default)
        if not shown or key.section in ("migration", "source", "target", "tables"):
            continue
        data = gen._minimal_config()
        gen._section_of(data, key.section)[key.key] = _toml_value(shown.group(1))
        assert parse_config(data, Path("M.toml")) == base, (key.section, key.key, key.default)
        checked += 1
    assert checked >= 25


# ------------------------------------------------------------------------ the CLI

def test_every_command_and_option_is_in_the_cli_reference() -> None:
    from hbase_migrate.cli import cli

    page = gen.cli_page()
    ctx = click.Context(cli)
    seen = 0

    def walk(command: click.Command, path: list[str]) -> None:
        nonlocal seen
        section = _section(page, "`" + " ".join(["hbase-migrate", *path]) + "`")
        for param in command.params:
            if isinstance(param, click.Option):
                for name in param.opts:
                    assert f"`{name}`" in section, (path, name)
                    seen += 1
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, [*path, name])

    walk(cli, [])
    assert seen > 100
    for group in ("minicluster", "realstack", "zookeeper", "demo", "soak", "workload"):
        assert f"## `hbase-migrate {group}`" in page  # the entry-point groups


# ------------------------------------------------------------------------ metrics

def test_the_metrics_a_scrape_serves_are_the_documented_ones(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with Ledger.open(url) as ledger:
        ledger.ensure_migration("orders", "src", "dst", [TableMapping("orders", "orders")])
    follow = FollowSummary("orders", "source", 0, runs=1)
    collector = FollowCollector(url, "orders", "source", lambda: follow)
    try:
        served = {(m.name + ("_total" if m.type == "counter" else ""), m.type)
                  for m in collector.collect()}
    finally:
        collector.close()
    documented = {(m.name, m.kind) for m in gen.metrics()}
    assert served == documented
    page = gen.metrics_page()
    for name, _ in served:
        assert f"| `{name}` |" in page


# ------------------------------------------------------------------------ ledger

def test_the_ledger_tables_are_those_an_upgrade_makes(tmp_path: Path) -> None:
    from sqlalchemy import create_engine, inspect

    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    Ledger.open(url).close()
    found = inspect(create_engine(url))
    made = {t: {c["name"] for c in found.get_columns(t)} for t in found.get_table_names()
            if not t.startswith("sqlite_")}
    documented = {t: {c[0] for c in columns} for t, columns in gen.ledger_tables().items()}
    assert made == documented
    page = gen.ledger_page()
    for table, columns in made.items():
        section = _section(page, f"`{table}`")
        assert all(f"| `{c}` |" in section for c in columns), table


# ------------------------------------------------------------------------ Params

def _declared_params(path: Path) -> set[str]:
    """The Param names a DAG file passes as keywords, read from its source."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.keyword) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "Param" and node.arg:
                names.add(node.arg)
    return names


def test_every_param_a_dag_declares_is_documented() -> None:
    page = gen.params_page()
    files = sorted((REPO / "dags").glob("hbase_migrate_*.py"))
    assert len(files) >= 7
    for path in files:
        section = _section(page, f"`{path.stem}`")
        for name in _declared_params(path):
            assert f"| `{name}` |" in section, (path.name, name)
        assert "| `migration` |" in section  # the common fields (plugins' params())


# ------------------------------------------------------------------------ errors

def _imported_subclasses() -> set[str]:
    found: set[str] = set()
    todo = [HBaseMigrateError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in gen.SOURCE_ROOTS and sub.__name__ not in found:
                found.add(sub.__name__)
                todo.append(sub)
    return found


def test_every_error_class_has_a_cause_and_a_remedy() -> None:
    classes = gen.error_classes()
    names = {c.name for c in classes}
    assert len(names) > 60
    for error in classes:  # the source reading agrees with Python's own class tree
        cls = getattr(importlib.import_module(error.module), error.name)
        assert issubclass(cls, HBaseMigrateError), error
    assert _imported_subclasses() <= names
    grouped = [n for _, _, members in GROUPS for n in members]
    assert sorted(grouped) == sorted(set(grouped)), "a class in two groups"
    assert set(grouped) == names, ("put each error class in one group of "
                                   "scripts/error_remedies.py", names ^ set(grouped))
    assert set(REMEDIES) == names, ("give each error class a remedy in "
                                    "scripts/error_remedies.py", names ^ set(REMEDIES))
    page = gen.errors_page()
    for name in names:
        start = page.index(f"### `{name}` {{ #error-{name.strip('_').lower()} }}")
        entry = page[start:page.find("\n### ", start + 1)]
        assert "**Cause.** " in entry and REMEDIES[name] in entry, name


@pytest.mark.parametrize("page", sorted(gen.PAGES))
def test_generated_pages_are_not_committed(page: str) -> None:
    """The reference is generated at each build; a committed copy would go stale."""
    assert not (REPO / "docs" / page).exists(), page


def _matches(message: str, templates: list[str]) -> bool:
    return any(re.fullmatch(".*".join(re.escape(part) for part in
                                      re.split(r"\{[^{}]*\}", template)), message, re.S)
               for template in templates)


def test_the_troubleshooting_page_lists_what_errors_say(tmp_path: Path) -> None:
    """Errors raised for real match a message the page lists for their class."""
    from hbase_migrate.tablename import InvalidTableNameError, normalize_table_name

    said = gen.raise_messages({"ConfigError", "InvalidTableNameError"})
    data = gen._minimal_config()
    data["replay"] = {"no_such_key": 1}
    with pytest.raises(ConfigError) as config_error:
        parse_config(data, tmp_path / "M.toml")
    assert _matches(str(config_error.value), said["ConfigError"]), str(config_error.value)
    with pytest.raises(InvalidTableNameError) as name_error:
        normalize_table_name("a table")
    assert _matches(str(name_error.value), said["InvalidTableNameError"]), str(name_error.value)
    page = gen.errors_page()
    assert page.count("**What it says.** ") >= 50
    # the index of messages as an operator sees them, each leading to its entry
    index = page[page.index("## Find your message"):page.index("\n## ", page.index(
        "## Find your message") + 1)]
    seen = gen.as_seen(next(m for m in said["InvalidTableNameError"]))
    assert f"* {gen._code(seen)} → [cause and remedy](#error-invalidtablenameerror)" in index
    assert "`_NoMaster`" not in index
