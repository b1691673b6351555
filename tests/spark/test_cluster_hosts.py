"""A Spark standalone cluster whose two workers are as good as other hosts: each runs a plain
Python with pyspark alone (its ``python3``), and cannot see the project's folder, this
environment, nor the driver's folder (the migration's config, ``cluster.json`` files, SQLite
ledger and the executors' archive in its cache): each worker runs in a private mount
namespace where those folders are empty.

From the CLI (a process of its own, with ``PYSPARK_PYTHON`` set to this interpreter as a
careless shell has it), the copy, a replay of later writes and the validation run there:
the project travels as the archive the driver builds, endpoints are resolved on the driver,
the tasks never open the ledger. Every application's executors ran on both workers (the
workers' JSON answers say so), every task ran in their executors (their logs), the target
ends equal to the source cell for cell and the ledger is complete. Bad set-ups fail in the
pre-flight job, in one line, before any range is copied.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from minihbase.server import MiniHBase
from tests.spark.standalone import (
    Cluster,
    apps,
    bare_python,
    executors_of,
    finished_tasks,
    other_hosts,
)
from tests.support.minicluster import EmbeddedClusters, compare, run_workload, write_migration

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow]
TABLE = "orders"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    yield from other_hosts(tmp_path_factory)


@pytest.fixture(scope="module")
def clusters(cluster: Cluster) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    with EmbeddedClusters(cluster.driver) as embedded:  # in the driver's folder
        yield embedded("source", folder=cluster.driver / "src"), \
            embedded("target", folder=cluster.driver / "dst")


def write_config(folder: Path, src: MiniHBase, dst: MiniHBase, spark: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = write_migration(folder, src, dst, TABLE, name=folder.name, roll_period="1s")
    with path.open("a", encoding="utf-8") as out:
        out.write(f'[spark]\n{spark}\n[spark.conf]\n"spark.executor.memory" = "512m"\n'
                  "[ranges]\nmax_cells = 150\n")
    return path


def cli(cluster: Cluster, *args: str) -> subprocess.CompletedProcess[str]:
    """``hbase-migrate ARGS`` as a user runs it; ``PYSPARK_PYTHON`` names this (the
    driver's) interpreter, which no worker has."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
           "HBASE_MIGRATE_CACHE_DIR": str(cluster.driver / "cache")}
    return subprocess.run([str(Path(sys.executable).parent / "hbase-migrate"), *args],
                          env=env, capture_output=True, text=True, timeout=600, check=False)


def test_copy_replay_and_validation_run_on_workers_that_see_nothing_of_the_driver(
        cluster: Cluster, clusters: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    run_workload(src, TABLE, seed=56, ops=600)
    config = write_config(cluster.driver / "hosts", src, dst, f'master = "{cluster.url}"')
    spec = load_config(config)
    steps = {}
    for step in ("prepare", "snapshot", "replay", "validate"):
        if step == "replay":  # writes after the copy: the replay's work
            run_workload(src, TABLE, seed=57, ops=300)
        conf = ["--conf", "spark.executor.memory=600m"] if step == "validate" else []
        done = cli(cluster, step, "--config", str(config), *conf)
        if done.returncode:
            pytest.fail(f"{step}: {done.stderr.strip().splitlines()[-1]}")
        steps[step] = done.stdout
    for step in ("snapshot", "replay", "validate"):
        assert f"engine: {cluster.url}" in steps[step], steps[step]
        assert "executors run their own python3 with hbase-migrate" in steps[step]
        assert "shipped as spark.archives hbase-migrate-executors-" in steps[step]
        assert "pre-flight passed on executor " in steps[step]
    assert "(built now)" in steps["snapshot"] and "(from the cache)" in steps["validate"]
    assert compare(src, dst, TABLE).equal

    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None and migration.state == "validated"
        ranges = ledger.key_ranges(migration.id, TABLE)
        assert len(ranges) > 2 and all(r.copied_cells is not None for r in ranges)
        assert sum(r.copied_cells or 0 for r in ranges) > 0
        (replayed,) = ledger.steps(migration.id, "replay")
        assert replayed.metrics["engine"]["engine"] == cluster.url, replayed.metrics
        assert "pre-flight passed" in replayed.metrics["engine"]["executors"]
        assert replayed.metrics["files_read"] > 0, replayed.metrics

    ended = dict(apps(cluster))  # (a name per step here)
    for step in ("snapshot", "replay", "validate"):
        app = ended[f"hbase-migrate {step} {spec.name}"]
        executors = executors_of(cluster, app)
        assert {n for n, _, _ in executors} == {0, 1}, (step, executors)
        assert sum(finished_tasks(f) for _, f, _ in executors) > 0, (step, executors)
        # [spark] conf, and --conf over it on the command line
        assert {m for _, _, m in executors} == {600 if step == "validate" else 512}
    copied = ended[f"hbase-migrate snapshot {spec.name}"]
    tasks = sum(finished_tasks(f) for _, f, _ in executors_of(cluster, copied))
    assert tasks >= len(ranges) + 4  # every range's task and the pre-flight's, on workers


# a Python the workers have without pyspark: this one's base interpreter (/usr/bin)
BARE = Path(sys.base_prefix) / "bin" / "python{}.{}".format(*sys.version_info[:2])
PYSPARK = metadata.version("pyspark")


BAD_SETUPS = [
    ("no-such-python", 'python = "/opt/none/bin/python3"', (),
     ['on host 127.0.0.1: java.io.IOException: Cannot run program "/opt/none/bin/python3"',
      f"; install pyspark {PYSPARK} and hbase-migrate[executor] into /opt/none/bin/python3 "
      "on every worker"]),
    ("python-without-the-project", 'python = "python3"', (),
     ["cannot import hbase_migrate.ranges.tasks (ModuleNotFoundError: No module named "
      "'hbase_migrate')"]),
]


@pytest.mark.parametrize(("name", "spark", "args", "says"), BAD_SETUPS,
                         ids=[name for name, *_ in BAD_SETUPS])
def test_a_bad_setup_fails_in_one_line_before_any_task(
        cluster: Cluster, clusters: tuple[MiniHBase, MiniHBase], name: str, spark: str,
        args: tuple[str, ...], says: list[str]) -> None:
    src, dst = clusters
    run_workload(src, TABLE, seed=58, ops=100)
    config = write_config(cluster.driver / name, src, dst, f'master = "{cluster.url}"\n{spark}')
    assert cli(cluster, "prepare", "--config", str(config)).returncode == 0
    done = cli(cluster, "snapshot", "--config", str(config), *args)
    assert done.returncode == 2, (done.stdout, done.stderr)
    last = done.stderr.strip().splitlines()[-1]  # (above it: Spark's own start-up warnings)
    assert last.startswith(f"hbase-migrate: error: Spark pre-flight on {cluster.url}: "), last
    assert all(said in last for said in says) and "executors run" in last, last
    assert "Traceback" not in done.stderr and "at org.apache" not in done.stderr
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        assert all(r.copied_cells is None for r in ledger.key_ranges(migration.id, TABLE))


def test_the_workers_python_installs_from_the_index_with_an_empty_uv_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The workers' plain Python needs nothing in uv's cache (a fresh machine's holds nothing
    of an install's index answers): with an empty one, uv fetches and fills it."""
    cache = tmp_path / "uv-cache"
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))
    try:
        python = bare_python(tmp_path / "python") / "bin" / "python"
        found = subprocess.run(
            [str(python), "-c", "from importlib.metadata import version as v; "
             "import pyspark; print(v('pyspark'), v('py4j'), pyspark.__file__)"],
            capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
        filled = any(cache.rglob("*.whl")) or any(cache.rglob("*.dist-info"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)  # (GBs: pyspark's source and its build)
    pyspark, py4j, where = found.stdout.split()
    assert (pyspark, py4j) == (metadata.version("pyspark"), metadata.version("py4j"))
    assert Path(where).is_relative_to(tmp_path / "python")
    assert filled, f"nothing of the install went to the empty cache {cache}"
