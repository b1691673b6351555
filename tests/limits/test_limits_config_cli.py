"""``[limits]`` read from a migration config, kept in the ledger by ``limits set`` and shown
by ``limits show``; the errors a user meets."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

import hbase_migrate.config
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import main
from hbase_migrate.config import MAX_LIMITS_REFRESH, LimitSettings, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.limits.watch import ThrottlePlan, read_overrides
from tests.cli_util import fails

BASE = """
[migration]
name = "orders"
ledger = "sqlite:///ledger.db"
[source]
thrift = "a:9090"
[target]
thrift = "b:9090"
[[tables]]
source = "orders"
"""


def config(tmp_path: Path, limits: str = "") -> Path:
    path = tmp_path / "m.toml"
    path.write_text(BASE + ("[limits]\n" + limits if limits else ""), encoding="utf-8")
    return path


def test_the_documented_limits_load_and_unset_means_unlimited(tmp_path: Path) -> None:
    doc = hbase_migrate.config.__doc__ or ""
    example = re.search(r"::\n\n(.*?)\n\n", doc, re.S)
    assert example is not None
    documented = textwrap.dedent(example.group(1)).split("[limits]")[1].split("\n[")[0]
    spec = load_config(config(tmp_path, documented.split("\n", 1)[1]))
    assert spec.limits == LimitSettings(20_000, 50 * 1024**2, 50_000, 20_000, False, 500, 5000)
    assert load_config(config(tmp_path)).limits == LimitSettings()
    assert LimitSettings().refresh <= MAX_LIMITS_REFRESH == 10_000


@pytest.mark.parametrize(("line", "message"), [
    ("copy_cells_per_second = -5", r"\[limits\] copy_cells_per_second: expected a number of "
                                   r"cells per second >= 0"),
    ("replay_cells_per_second = \"5k\"", r"replay_cells_per_second: expected a number"),
    ("copy_bytes_per_second = \"lots\"", r"copy_bytes_per_second: expected a number of bytes"),
    ("adaptive = 1", r"\[limits\] adaptive: expected true or false"),
    ("latency_target_ms = 0", r"latency_target_ms: expected a number of milliseconds >= 1"),
    ("refresh = \"1m\"", r"refresh: expected a duration from 100ms to 10s"),
    ("cells_per_second = 5", r"\[limits\] unknown key 'cells_per_second'"),
])
def test_bad_limits_name_the_key(tmp_path: Path, line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(config(tmp_path, line + "\n"))


def test_limits_set_keeps_each_change_and_show_tells_what_is_in_force(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = config(tmp_path, "copy_cells_per_second = 1000\n")
    with pytest.raises(SystemExit) as done:
        main(["limits", "set", "--config", str(path), "copy_bytes_per_second=2MiB",
              "adaptive=true"])
    assert done.value.code == 0
    assert capsys.readouterr().out.splitlines() == [
        "orders: copy_bytes_per_second = 2097152", "orders: adaptive = true"]
    with pytest.raises(SystemExit):
        main(["limits", "set", "--config", str(path), "copy_cells_per_second=0"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["limits", "show", "--config", str(path), "--json"])
    shown = json.loads(capsys.readouterr().out)["limits"]
    assert {k: v["in_force"] for k, v in shown.items()} == {
        "copy_cells_per_second": 0, "copy_bytes_per_second": 2 * 1024**2,
        "validate_cells_per_second": 0, "replay_cells_per_second": 0, "adaptive": True,
        "latency_target_ms": 500, "refresh": 5000}
    assert shown["copy_cells_per_second"]["config"] == 1000
    spec = load_config(path)
    with Ledger.open(spec.ledger_url) as ledger:
        changes = ledger.limit_changes(1)
    assert [(c.name, c.value) for c in changes] == [
        ("copy_bytes_per_second", 2 * 1024**2), ("adaptive", True),
        ("copy_cells_per_second", 0)]
    assert read_overrides(spec.ledger_url, "orders") == {
        "copy_bytes_per_second": 2 * 1024**2, "adaptive": True, "copy_cells_per_second": 0}
    with pytest.raises(SystemExit):
        main(["limits", "show", "--config", str(path)])
    assert "  copy_cells_per_second = 0 (set " in capsys.readouterr().out
    plan = ThrottlePlan.of(spec, "copy", tasks=2)
    assert (plan.limit_keys(), plan.tasks) == (
        ("copy_cells_per_second", "copy_bytes_per_second"), 2)


@pytest.mark.parametrize(("argument", "message"), [
    ("copy_cells_per_second", "limits set: 'copy_cells_per_second': expected KEY=VALUE"),
    ("speed=5", "limits set: unknown key 'speed'; expected one of copy_cells_per_second"),
    ("adaptive=maybe", "limits set: [limits] adaptive: expected true or false, got 'maybe'"),
    ("refresh=30s", "limits set: [limits] refresh: expected a duration from 100ms to 10s"),
])
def test_limits_set_refuses_bad_values_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argument: str,
        message: str) -> None:
    path = config(tmp_path)
    assert fails(["limits", "set", "--config", str(path), argument], capsys).startswith(message)
    with Ledger.open(load_config(path).ledger_url) as ledger:
        assert ledger.limit_changes(1) == []


def test_status_shows_the_limits_in_force(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = config(tmp_path, "replay_cells_per_second = 3000\n")
    with pytest.raises(SystemExit):
        main(["limits", "set", "--config", str(path), "copy_cells_per_second=500"])
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["status", "--config", str(path), "--json"])
    limits = json.loads(capsys.readouterr().out)["migrations"][0]["limits"]
    assert limits["set"] == {"copy_cells_per_second": 500}
    assert (limits["in_force"]["copy_cells_per_second"],
            limits["in_force"]["replay_cells_per_second"]) == (500, 3000)
    with pytest.raises(SystemExit):
        main(["status", "--config", str(path)])
    assert ("limits: copy bytes unlimited, copy cells 500 cells/s, replay cells 3,000 "
            "cells/s, validate cells unlimited") in " ".join(capsys.readouterr().out.split())


def test_the_report_plots_the_replay_limit_in_force(tmp_path: Path) -> None:
    from hbase_migrate.audit.ledger import now_ms
    from hbase_migrate.report import build_report

    spec = load_config(config(tmp_path))
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        for limit in (1000.0, None):
            with ledger.step(record.id, "replay") as step:
                step.metrics.update(cells={"Put": 500}, entries=100,
                                    limits={"replay_cells_per_second": limit})
        page = build_report(ledger, spec.name, now=now_ms())
        assert page.count("replay limit in force (cells/s; 0: unlimited)") >= 1
    without = tmp_path / "other"
    without.mkdir()
    spec = load_config(config(without))
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        with ledger.step(record.id, "replay") as step:
            step.metrics.update(cells={"Put": 500}, limits={"replay_cells_per_second": None})
        assert "replay limit in force" not in build_report(ledger, spec.name, now=now_ms())
