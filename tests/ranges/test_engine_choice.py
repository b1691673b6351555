"""``[spark] master = "auto"``: a step's range work runs in-process under ``auto_cells``
estimated cells and on ``large_master`` from there on; a master named by the caller or the
config is used as it is; the choice and its reason are in the step's metrics, the ledger
and the output."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import AUTO, IN_PROCESS, EngineSettings, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.choice import choose_engine
from tests.cli_util import run
from tests.support.minicluster import EmbeddedClusters, cell_count, run_workload
from tests.support.ranges import configure

TABLE = "orders"


def test_auto_chooses_by_the_estimate_and_a_named_master_wins() -> None:
    settings = EngineSettings(spark_master=AUTO, large_master="spark://m:7077", auto_cells=500)
    small, large = choose_engine(None, settings, 499), choose_engine(None, settings, 500)
    assert (small.master, large.master) == (IN_PROCESS, "spark://m:7077")
    assert "499 cells, under auto_cells = 500" in small.reason
    assert "500 cells" in large.reason and "Spark on spark://m:7077" in large.reason
    named = choose_engine("local[2]", settings, 10**9)
    assert (named.master, named.reason) == ("local[2]", "asked for by the caller: local[2]")
    local = EngineSettings(spark_master=AUTO, large_master="local[*]", auto_cells=500)
    stays = choose_engine(None, local, 10**7)  # same cores: Spark would only add start-up
    assert stays.master == IN_PROCESS
    assert stays.reason == ("auto: about 10000000 cells, but large_master = local[*] is this "
                            "machine, where Spark only adds start-up: in-process")
    fixed = EngineSettings(spark_master="yarn")
    assert choose_engine(None, fixed, 1).reason == "[spark] master: yarn"
    assert choose_engine(AUTO, fixed, 1).master == IN_PROCESS  # the caller asks for auto


def spark_section(tmp_path: Path, section: str) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path}/l.db"\n'
                    '[source]\nthrift = "h:1"\n[target]\nthrift = "h:2"\n'
                    f'[[tables]]\nsource = "t"\n{section}', encoding="utf-8")
    return path


def test_the_spark_section_reads_auto_large_master_and_auto_cells(tmp_path: Path) -> None:
    engine = load_config(spark_section(tmp_path, "")).engine
    assert (engine.spark_master, engine.large_master) == (AUTO, "local[*]")
    spec = load_config(spark_section(tmp_path, '[spark]\nlarge_master = "spark://m:7077"\n'
                                               "auto_cells = 1000\n"))
    assert (spec.engine.large_master, spec.engine.auto_cells) == ("spark://m:7077", 1000)
    assert spec.to_dict()["spark"] == {"master": AUTO, "large_master": "spark://m:7077",
                                       "auto_cells": 1000, "ship_keytab": "auto", "conf": {}}
    with pytest.raises(ConfigError, match="large_master"):
        load_config(spark_section(tmp_path, '[spark]\nlarge_master = "auto"\n'))
    with pytest.raises(ConfigError, match="auto_cells"):
        load_config(spark_section(tmp_path, "[spark]\nauto_cells = 0\n"))


def test_the_spark_section_reads_ship_keytab(tmp_path: Path) -> None:
    for ship in ("always", "never"):
        spec = load_config(spark_section(tmp_path, f'[spark]\nship_keytab = "{ship}"\n'))
        assert spec.engine.ship_keytab == spec.to_dict()["spark"]["ship_keytab"] == ship
    with pytest.raises(ConfigError, match=r'\[spark\] ship_keytab: expected "auto" or '
                                          r'"always" or "never", got True'):
        load_config(spark_section(tmp_path, "[spark]\nship_keytab = true\n"))


@pytest.mark.integration
def test_auto_runs_a_small_table_in_process_and_a_large_estimate_on_spark(
        tmp_path: Path,
        make_embedded: EmbeddedClusters, capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=71, ops=100)
    cells = cell_count(src, TABLE)
    config = configure(tmp_path, src, dst, master=AUTO)
    config.write_text(config.read_text().replace(  # the crossover just above this table
        'master = "auto"\n',
        f'master = "auto"\nlarge_master = "local[1]"\nauto_cells = {cells + 1}\n'))
    spec = load_config(config)
    assert spec.engine.auto_cells == cells + 1 and spec.engine.large_master == "local[1]"
    prepare(spec)
    code, out = run(["snapshot", "--config", str(config)], capsys)
    assert code == 0, out
    planned = snapshot(spec).metrics  # already copied: the recorded step is the first
    with Ledger.open(spec.ledger_url) as ledger:
        (copy,) = [s for s in ledger.steps(1, "snapshot") if "engine" in s.metrics]
    assert copy.metrics["engine"] == IN_PROCESS, copy.metrics
    assert copy.metrics["estimated_cells"] <= cells  # planned from the source's cells
    assert f"auto_cells = {cells + 1}: in-process" in copy.metrics["engine_reason"]
    assert f"engine: in-process (auto: about {copy.metrics['estimated_cells']} cells" in out
    assert "skipped" in planned

    # the crossover under it, large_master this machine: still in-process
    large = replace(spec, engine=replace(spec.engine, auto_cells=1))
    checked = validate(large, recompare_wait=0)
    assert checked.metrics["verdict"] == "match"
    assert checked.metrics["engine"] == IN_PROCESS, checked.metrics["engine_reason"]
    assert checked.metrics["estimated_cells"] == copy.metrics["estimated_cells"]
    assert "large_master = local[1] is this machine" in checked.metrics["engine_reason"]
    with Ledger.open(spec.ledger_url) as ledger:
        recorded = ledger.steps(1, "validate")[-1].metrics
    assert json.dumps(recorded["engine_reason"]) == json.dumps(
        checked.metrics["engine_reason"])
