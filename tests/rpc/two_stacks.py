"""The stacks the suites of third-party clients' calls run on, each module once on both: the
embedded cluster (two region servers under a ZooKeeper parent of its own) and the session's
real HBase, as their ``cluster.json`` describes them (plus ``stack``). A module imports
:func:`described` and names it in ``__all__``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from minihbase.regionserver import WalSettings
from tests.support.minicluster import EmbeddedClusters


@pytest.fixture(scope="module",
                params=["minihbase", pytest.param("real", marks=pytest.mark.realstack)])
def described(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    if request.param == "real":
        yield {**request.getfixturevalue("real_hbase").described, "stack": "real"}
        return
    zookeeper = request.getfixturevalue("zookeeper")
    with EmbeddedClusters(tmp_path_factory.mktemp("third"), lambda: zookeeper) as clusters:
        mini = clusters(over="native", wal=WalSettings(region_servers=2, roll_period=3600))
        yield {**mini.describe(), "stack": "minihbase"}
