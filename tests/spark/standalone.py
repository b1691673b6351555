"""A real Spark standalone cluster for a test module: a master and one worker started from
pyspark's own jars on loopback, and a session of this process on it (the driver), all
stopped afterwards. ``worker_env`` and ``worker_prefix`` shape the worker's processes (and so
its executors'): its environment, and a command it runs under (a private mount namespace)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.ranges.engine import prepare_spark_environment
from minihbase.process import free_port


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


def spark_environment(folder: Path) -> dict[str, str]:
    """What the master's and the worker's processes run with: this Python and loopback."""
    import pyspark

    home = Path(pyspark.__file__).parent
    return {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "SPARK_LOG_DIR": str(folder / "logs")}


def standalone_cluster(folder: Path, *, worker_env: Mapping[str, str] | None = None,
                       worker_prefix: Sequence[str] = (),
                       conf: Mapping[str, str] | None = None) -> Iterator[Any]:
    """Start the cluster in ``folder`` (logs in ``master.log``/``worker.log``, the worker's
    work dir ``work/``) and yield a ``SparkSession`` on it; stop everything afterwards."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    prepare_spark_environment()
    env = spark_environment(folder)
    spark_class = str(Path(env["SPARK_HOME"]) / "bin" / "spark-class")
    port, ui, worker_ui = free_port(), free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    (folder / "work").mkdir(parents=True, exist_ok=True)
    procs = [subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)], env=env,
        stdout=(folder / "master.log").open("wb"), stderr=subprocess.STDOUT)]
    session = None
    try:
        _wait_http(f"http://127.0.0.1:{ui}/json/", '"status" : "ALIVE"', 90)
        procs.append(subprocess.Popen(
            [*worker_prefix, spark_class, "org.apache.spark.deploy.worker.Worker", url,
             "--host", "127.0.0.1", "--cores", "2", "--memory", "1g", "--webui-port",
             str(worker_ui), "--work-dir", str(folder / "work")],
            env=dict(worker_env) if worker_env is not None else env,
            stdout=(folder / "worker.log").open("wb"), stderr=subprocess.STDOUT))
        _wait_http(f"http://127.0.0.1:{ui}/json/", '"state" : "ALIVE"', 90)
        builder = (SparkSession.builder.master(url).appName("hbase-migrate-test-standalone")
                   .config("spark.ui.enabled", "false")
                   .config("spark.executor.memory", "512m"))
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
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
