"""Parsing the DAG files is cheap: within Airflow's own import timeout, and without loading
the core's heavy parts (Spark, Great Expectations, the cluster clients, the ledger), which
belong in task code. Each file is parsed in a fresh interpreter after Airflow itself is
loaded, so the time and the modules are the file's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dags.integrity import DAG_FILES

pytestmark = pytest.mark.integration
HEAVY = ("pyspark", "great_expectations", "happybase", "thriftpy2", "kazoo", "hdfs",
         "hbase_migrate.lifecycle", "hbase_migrate.replay", "hbase_migrate.audit")

PROBE = """
import json, sys, time
import airflow.sdk, airflow.dag_processing.dagbag  # Airflow's own cost, not the file's
from airflow.configuration import conf
from airflow.dag_processing.dagbag import DagBag
report = {}
for path in sys.argv[1:]:
    before = set(sys.modules)
    began = time.perf_counter()
    bag = DagBag(dag_folder=path, safe_mode=False, load_op_links=False)
    report[path] = {"seconds": time.perf_counter() - began, "dags": sorted(bag.dags),
                    "errors": list(bag.import_errors.values()),
                    "modules": sorted(set(sys.modules) - before)}
report["timeout"] = conf.getfloat("core", "dagbag_import_timeout")
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def parsed() -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, DAG_FILES)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path", DAG_FILES, ids=[p.name for p in DAG_FILES])
def test_parse_is_quick_and_light(parsed: dict[str, dict], path: Path) -> None:
    report = parsed[str(path)]
    assert report["errors"] == [] and report["dags"] == [path.stem]
    assert report["seconds"] < parsed["timeout"], report["seconds"]
    heavy = [m for m in report["modules"] if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert heavy == [], f"{path.name} loads {heavy[:10]} at parse time"
    print(f"{path.name}: parsed in {report['seconds']:.3f} s")
