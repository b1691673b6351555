"""The range engine on a real Spark standalone cluster (a master and a worker started from
pyspark's own jars on loopback): the snapshot copy and the range checksums run there, one
task per key range, and the target ends equal to the source."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.engine import prepare_spark_environment
from minihbase.process import free_port
from minihbase.server import MiniHBase
from tests.ranges.test_live import configure
from tests.replay.minicluster_util import compare, run_workload

pytestmark = [pytest.mark.integration, pytest.mark.slow]
TABLE = "orders"


def _wait_http(url: str, needle: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if needle in answer.read().decode():
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {needle!r} at {url}")


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    pyspark = pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    prepare_spark_environment()
    home = Path(pyspark.__file__).parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable,
           "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "SPARK_LOG_DIR": str(tmp_path_factory.mktemp("spark-logs"))}
    port, ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(home / "bin" / "spark-class")
    logs = tmp_path_factory.mktemp("spark-out")
    procs = [subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)], env=env,
        stdout=(logs / "master.log").open("wb"), stderr=subprocess.STDOUT)]
    session = None
    try:
        _wait_http(f"http://127.0.0.1:{ui}/json/", '"status" : "ALIVE"', 90)
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--cores", "2", "--memory", "1g", "--webui-port", str(worker_ui),
             "--work-dir", str(tmp_path_factory.mktemp("spark-work"))], env=env,
            stdout=(logs / "worker.log").open("wb"), stderr=subprocess.STDOUT))
        _wait_http(f"http://127.0.0.1:{ui}/json/", '"state" : "ALIVE"', 90)
        session = (SparkSession.builder.master(url).appName("hbase-migrate-test-standalone")
                   .config("spark.ui.enabled", "false")
                   .config("spark.executor.memory", "512m").getOrCreate())
        yield session
    finally:
        if session is not None:
            session.stop()
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        logging.getLogger("py4j").setLevel(logging.WARNING)


def test_copy_and_checksums_run_on_a_standalone_cluster(standalone: Any,
                                                        tmp_path: Path) -> None:
    url = str(standalone.sparkContext.master)
    with MiniHBase(tmp_path / "src", "source") as src, \
            MiniHBase(tmp_path / "dst", "target") as dst:
        run_workload(src, TABLE, seed=41, ops=300)
        config = configure(tmp_path, src, dst, master=url)
        spec = load_config(config)
        prepare(spec)
        copied = snapshot(spec).to_json()
        assert copied["engine"] == url and copied["ranges_copied"] == copied["ranges"] > 2
        result = validate(spec, recompare_wait=0).to_json()
        assert result["verdict"] == "match", result
        assert compare(src, dst, TABLE).equal
        with Ledger.open(spec.ledger_url) as ledger:
            assert len(ledger.last_validations(1)) == copied["ranges"]
    executors = standalone.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    assert executors >= 2  # the driver and the worker's executor ran the tasks
