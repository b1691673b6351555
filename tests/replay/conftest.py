"""Fixtures of the replay tests: a source and a target embedded cluster, a fresh table
name (the building blocks are in :mod:`tests.support.replay`)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.support.minicluster import EmbeddedClusters
from tests.support.replay import Clusters


@pytest.fixture(scope="module")
def clusters(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clusters]:
    base = tmp_path_factory.mktemp("replay")
    with EmbeddedClusters(base) as clusters:
        both = Clusters(*clusters.pair())
        yield both
        both.close()


@pytest.fixture
def table() -> str:
    return f"t_{uuid.uuid4().hex[:10]}"
