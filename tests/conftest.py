"""Fixtures shared by every test area: the embedded ZooKeeper, the real HBase stack, an
Apache Kafka broker and the reference samples."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.wal import hotloops
from minihbase.zookeeper import ZooKeeperServer
from realstack.kafka import KafkaBroker, KafkaSettings
from tests.realstack.fixtures import (  # noqa: F401 - the real stack, session-wide
    real_hbase,
    source_cluster,
)

REPO = Path(__file__).resolve().parents[1]
SHARED_REFERENCE = REPO.parent / "shared" / "reference"


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """A real ZooKeeper server on a free loopback port, for the whole test session."""
    with ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")) as server:
        yield server


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A real Apache Kafka broker (KRaft, from the ``realstack/kafka`` Maven module) on a free
    loopback port, for the whole session. Topics are not created on first use: tests create
    the ones they need (a missing topic is an error case)."""
    if shutil.which("mvn") is None:
        pytest.skip("Maven ('mvn') is needed to fetch Apache Kafka from Maven Central")
    broker = KafkaBroker(tmp_path_factory.mktemp("kafka"), KafkaSettings(auto_create_topics=False))
    with broker:
        yield broker


@pytest.fixture(scope="session")
def legacy_hlog_samples() -> list[Path]:
    """Real pre-0.96 HLog files (``SEQ\\x06``), when the reference folder is beside the repo."""
    folder = SHARED_REFERENCE / "legacy-hlog-samples"
    samples = sorted(p for p in folder.glob("*") if p.is_file() and p.suffix != ".md")
    if not samples:
        pytest.skip(f"legacy HLog samples not available (looked in {folder})")
    return samples


@pytest.fixture(params=["python", "compiled"])
def both_hot_loops(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test once with the pure-Python hot loops (the reference) and once with the
    compiled ones (``make setup`` builds them; ``test_hotloops`` fails when they are not)."""
    if request.param == "compiled" and hotloops.COMPILED is None:
        pytest.skip("the compiled hot loops are not built")
    before = hotloops.implementation()
    hotloops.use(request.param)
    yield request.param
    hotloops.use(before)
