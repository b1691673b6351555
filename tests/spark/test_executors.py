"""What a session's executors are given, without a cluster: the settings of a cluster
master (the archive on their PYTHONPATH, their own Python, never this driver's), of a named
Python and of a local master; ``[spark] conf`` and ``--conf``; the migration as tasks get it
(endpoints resolved, no ledger); the probe's findings on a lacking executor."""

from __future__ import annotations

import json
import re
import sys
import tarfile
import tomllib
from pathlib import Path

import click
import click.testing
import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.commands.spark_conf import conf_option, with_conf
from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.limits.changes import set_limits
from hbase_migrate.spark import probe
from hbase_migrate.spark.archive import CACHE_ENV, UNPACKED
from hbase_migrate.spark.executors import executor_setup
from hbase_migrate.spark.preflight import remedy, wanted
from hbase_migrate.spark.shipped import executor_spec


def config(tmp_path: Path, spark: str = "") -> Path:
    (tmp_path / "a.json").write_text(json.dumps({"name": "a", "thrift": "src-host:9090",
                                                   "thrift2": "src-host:9091"}))
    path = tmp_path / "m.toml"
    path.write_text(f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path}/l.db"\n'
                    '[source]\ncluster_json = "a.json"\n[target]\nthrift = "dst-host:9090"\n'
                    f'[[tables]]\nsource = "t"\n[spark]\n{spark}', encoding="utf-8")
    return path


def test_a_cluster_master_ships_the_archive_and_never_this_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    spec = load_config(config(tmp_path, 'conf = { "spark.executor.memory" = "2g", '
                                        '"spark.executorEnv.PYTHONPATH" = "extra" }\n'))
    first = executor_setup("spark://m:7077", spec.engine)
    conf = dict(first.conf)
    assert first.archive is not None and first.archive.built
    assert conf["spark.archives"] == f"{first.archive.path}#{UNPACKED}"
    assert conf["spark.executorEnv.PYTHONPATH"] == f"{UNPACKED}:extra"
    assert conf["spark.executor.memory"] == "2g"
    assert first.python == conf["spark.pyspark.python"] == "python3"
    assert sys.executable not in json.dumps(first.conf)
    assert "their own python3 with hbase-migrate" in first.description
    assert first.description.endswith("(built now)")
    again = executor_setup("yarn", spec.engine)
    assert again.archive is not None and not again.archive.built
    assert again.archive.path == first.archive.path and again.description.endswith(
        "(from the cache)")
    with tarfile.open(first.archive.path) as tar:
        names = set(tar.getnames())
    assert "hbase_migrate/ranges/tasks.py" in names and "thriftpy2/__init__.py" in names
    assert not any(n.startswith(("airflow/", "great_expectations/", "pyspark/"))
                   for n in names)
    assert any(n.startswith("hbase_migrate/wal/_hotloops.") and n.endswith(".so")
               for n in names)


def test_a_named_python_and_a_local_master(tmp_path: Path) -> None:
    spec = load_config(config(tmp_path, 'python = "/opt/hbm/bin/python"\n'))
    named = executor_setup("k8s://https://api:6443", spec.engine)
    assert named.archive is None and named.python == "/opt/hbm/bin/python"
    assert dict(named.conf) == {"spark.pyspark.python": "/opt/hbm/bin/python"}
    local = executor_setup("local[2]", load_config(config(tmp_path)).engine)
    assert local.python == sys.executable and local.archive is None


def test_spark_conf_in_the_file_and_on_the_command_line(tmp_path: Path) -> None:
    spec = load_config(config(tmp_path, 'conf = { "spark.executor.cores" = 2 }\n'))
    assert spec.engine.conf == (("spark.executor.cores", "2"),)
    assert spec.to_dict()["spark"]["conf"] == {"spark.executor.cores": "2"}

    @click.command()
    @conf_option
    def command(spark_conf: tuple[tuple[str, str], ...]) -> None:
        click.echo(json.dumps(with_conf(spec, spark_conf).engine.conf))

    done = click.testing.CliRunner().invoke(command, [
        "--conf", "spark.executor.cores=4", "--conf", "spark.yarn.queue=etl"])
    assert json.loads(done.output) == [["spark.executor.cores", "4"],
                                       ["spark.yarn.queue", "etl"]]
    bad = click.testing.CliRunner().invoke(command, ["--conf", "memory"])
    assert bad.exit_code == 2
    assert "Invalid value for '--conf': expected spark.KEY=VALUE, got 'memory'" in bad.output
    with pytest.raises(ConfigError, match=r"\[spark\] conf: expected a table of Spark "):
        load_config(config(tmp_path, 'conf = { "executor.memory" = "2g" }\n'))
    with pytest.raises(ConfigError, match=r"\[spark\] python: expected the executors' "):
        load_config(config(tmp_path, 'python = ""\n'))


def test_tasks_get_endpoints_resolved_and_no_ledger(tmp_path: Path) -> None:
    spec = load_config(config(tmp_path))
    with Ledger.open(spec.ledger_url) as ledger:
        ledger.ensure_spec(spec)
    set_limits(spec, ["copy_cells_per_second=500"])
    shipped = executor_spec(spec)
    assert shipped.ledger_url == "" and shipped.path is None
    assert shipped.source.cluster_json is None
    assert shipped.source.endpoints().thrift2 == "src-host:9091"
    assert shipped.limits.copy_cells_per_second == 500  # in force now, read here
    (tmp_path / "a.json").unlink()  # nothing of the driver's is read again
    assert executor_spec(shipped) is shipped and shipped.source.endpoints().name == "a"


def test_the_probe_says_what_an_executor_lacks(tmp_path: Path, closed_port: int) -> None:
    port = closed_port
    found = probe.probe({"python": "3.99", "modules": ["hbase_migrate_nothing"],
                         "versions": {"pyspark": "0.0.1"},
                         "paths": {"source WAL folder": str(tmp_path / "none")},
                         "reach": [["target Thrift2 gateway", "127.0.0.1", port]]})
    python = "{}.{}".format(*sys.version_info[:2])
    assert found["problems"][0] == (
        f"runs Python {python} ({sys.executable}) where the shipped project is built for "
        "Python 3.99")
    assert found["problems"][1].startswith(
        "cannot import hbase_migrate_nothing (ModuleNotFoundError: No module named ")
    assert found["problems"][2].startswith("has pyspark 4.") and found["problems"][2].endswith(
        "where the driver has 0.0.1")
    assert found["problems"][3] == f"cannot see source WAL folder {tmp_path / 'none'}"
    assert found["problems"][4].startswith(f"cannot reach target Thrift2 gateway at "
                                           f"127.0.0.1:{port} (")
    assert probe.probe({"modules": ["hbase_migrate.ranges.tasks"]})["problems"] == []


def test_a_refusal_over_the_executors_python_names_the_setting_that_mends_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped archive: the remedy is a Python with pyspark, named by
    spark.pyspark.python; a [spark] python: pyspark and the project installed there. A
    problem that names its own fix (an address) gets nothing more."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    spec = load_config(config(tmp_path))
    shipped = executor_setup("spark://m:7077", spec.engine)
    check = wanted(spec, shipped, wal=False)
    pyspark = check["versions"]["pyspark"]
    python = "{}.{}".format(*sys.version_info[:2])
    for problem in ("has pyspark (none) where the driver has 4.1.3",
                    "cannot import hbase_migrate.ranges.tasks (ModuleNotFoundError: No module "
                    "named 'pyspark') with /usr/bin/python3",
                    "runs Python 3.9 (/usr/bin/python3) where the shipped project is built "
                    f"for Python {python}",
                    'executor 0 on host w1: java.io.IOException: Cannot run program "python3"'):
        assert remedy(problem, shipped, check) == (
            f"; name a Python {python} with pyspark {pyspark} that every worker has: --conf "
            'spark.pyspark.python=/path/to/python, or "spark.pyspark.python" in [spark] conf')
    assert remedy("cannot reach target Thrift2 gateway at dst-host:9090 (timed out)",
                  shipped, check) == ""
    named = executor_setup("spark://m:7077", load_config(config(
        tmp_path, 'python = "/opt/hbm/bin/python"\n')).engine)
    assert remedy("has pyspark (none) where the driver has 4.1.3", named,
                  wanted(spec, named, wal=False)) == (
        f"; install pyspark {pyspark} and hbase-migrate[executor] into /opt/hbm/bin/python on "
        "every worker, or set [spark] python to a Python that has them")


def test_the_guides_kubernetes_recipe_renders_the_images_python_and_no_archive(
        tmp_path: Path) -> None:
    """The ``[spark]`` of docs/guides/spark-cluster.md's Kubernetes section, as written: the
    session gets its master, its image and the Python ``docker/spark/Dockerfile`` installs
    the project for (its ``PYSPARK_PYTHON``), and no archive is shipped."""
    root = Path(__file__).resolve().parents[2]
    guide = (root / "docs" / "guides" / "spark-cluster.md").read_text("utf-8")
    section = guide.split("## Kubernetes", 1)[1].split("\n## ", 1)[0]
    (recipe,) = re.findall(r"^```toml\n(.*?)^```", section, re.M | re.S)
    written = tomllib.loads(recipe)["spark"]
    body = recipe.split("[spark]\n", 1)[1]
    spec = load_config(config(tmp_path, body))
    setup = executor_setup(spec.engine.spark_master, spec.engine)
    image_python = re.search(r"PYSPARK_PYTHON=(\S+)", (root / "docker" / "spark" /
                                                       "Dockerfile").read_text("utf-8"))
    assert image_python and written["python"] == image_python.group(1)
    assert spec.engine.spark_master == written["master"]
    assert setup.archive is None and setup.python == written["python"]
    assert dict(setup.conf) == {**{k: str(v) for k, v in written["conf"].items()},
                                "spark.pyspark.python": written["python"]}
