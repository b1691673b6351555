"""The range engine on a real Spark standalone cluster (a master and a worker started from
pyspark's own jars on loopback): the snapshot copy and the range checksums run there, one
task per key range, and the target ends equal to the source."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, snapshot, validate
from tests.spark.standalone import standalone_cluster
from tests.support.minicluster import EmbeddedClusters, compare, run_workload
from tests.support.ranges import configure

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow]
TABLE = "orders"


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from standalone_cluster(tmp_path_factory.mktemp("spark"))


def test_copy_and_checksums_run_on_a_standalone_cluster(standalone: Any,
                                                        tmp_path: Path,
                                                        make_embedded: EmbeddedClusters) -> None:
    url = str(standalone.sparkContext.master)
    src, dst = make_embedded.pair()
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
