"""The suite's shared fixtures, each built from the one before: a ZooKeeper server for the
session; the transport a test runs over (``thrift2`` and ``native``: tests asking for it
run once per transport); embedded clusters with the options a test needs, stopped at its
end; an embedded cluster and a source-target pair the product reaches over that transport;
and the product's clients of them (:func:`hbase_migrate.hbase.connect`, as the steps open
them). Registered for every test area by ``tests/conftest.py``."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.client import Client
from hbase_migrate.hbase.connect import connect
from minihbase.server import MiniHBase
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import TRANSPORTS, EmbeddedClusters


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """A real ZooKeeper server on a free loopback port, for the whole test session."""
    with ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")) as server:
        yield server


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port nothing listens on, for the whole test: held bound (never listening)
    so no other process of a parallel run can take it and answer there; a connection to it
    is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    """How the product reaches the embedded clusters: ``"thrift2"`` or ``"native"``."""
    return str(request.param)


@pytest.fixture
def make_embedded(request: pytest.FixtureRequest,
                  tmp_path: Path) -> Iterator[EmbeddedClusters]:
    """Builds started embedded clusters in the test's folder with the options it asks for,
    ``make_embedded("source", wal=WalSettings(...))`` (``over="native"``: registered in the
    session's ZooKeeper), or a source-target pair, ``make_embedded.pair(over, wal)``; all
    stopped at the test's end. A module's shared cluster uses
    :class:`~tests.support.minicluster.EmbeddedClusters` itself, in a module fixture."""
    with EmbeddedClusters(tmp_path, lambda: request.getfixturevalue("zookeeper")) as clusters:
        yield clusters


@pytest.fixture
def embedded_pair(make_embedded: EmbeddedClusters,
                  transport: str) -> tuple[MiniHBase, MiniHBase]:
    """A source and a target embedded cluster the product reaches over ``transport``."""
    return make_embedded.pair(transport)


@pytest.fixture
def embedded(embedded_pair: tuple[MiniHBase, MiniHBase]) -> MiniHBase:
    """One embedded cluster (the pair's source) the product reaches over ``transport``."""
    return embedded_pair[0]


@pytest.fixture
def client_pair(embedded_pair: tuple[MiniHBase, MiniHBase]) -> Iterator[tuple[Client, Client]]:
    """The product's clients of the source and the target, over ``transport``."""
    src, dst = embedded_pair
    with connect(src.endpoints) as source, connect(dst.endpoints) as target:
        yield source, target


@pytest.fixture
def client(client_pair: tuple[Client, Client]) -> Client:
    """The product's client of :func:`embedded`, over ``transport``."""
    return client_pair[0]
