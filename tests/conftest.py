"""Fixtures shared by every test area: those of :mod:`tests.support.fixtures` (ZooKeeper,
the transports, embedded clusters and clients), the real HBase stack, an Apache Kafka
broker and the reference samples."""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.wal import hotloops
from realstack.kafka import KafkaBroker, KafkaSettings
from tests.realstack import stacks
from tests.realstack.fixtures import (  # noqa: F401 - the real stacks, session-wide
    SHARED_STACKS,
    native_hbase,
    real_hbase,
    real_stacks,
    second_hbase,
    secured_stack,
    source_cluster,
)

# The shared fixtures (ZooKeeper, the transports, embedded clusters and clients of them), and
# the account of the suite's time (categories, budgets, build/test-durations-*.json).
pytest_plugins = ("tests.support.fixtures", "tests.support.durations")

REPO = Path(__file__).resolve().parents[1]
SHARED_REFERENCE = REPO.parent / "shared" / "reference"

# The suite's JVMs (real HBase, Kafka, HBase's tools) live for seconds to minutes: C1 alone
# compiles enough and spends a fifth less CPU on two cores (bench/ keeps the full JIT).
# Spark's too: a driver's JVM (SPARK_SUBMIT_OPTS) spends half (15 against 8 CPU s for a
# session and two small jobs), and through the driver's conf its executors and YARN's
# application master; a standalone cluster's master and workers (SPARK_DAEMON_JAVA_OPTS).
QUICK_JIT = "-XX:TieredStopAtLevel=1"
os.environ.setdefault("HBASE_MIGRATE_JVM_OPTIONS", QUICK_JIT)
os.environ.setdefault("SPARK_SUBMIT_OPTS", " ".join(
    [QUICK_JIT] + [f"-Dspark.{role}.extraJavaOptions={QUICK_JIT}" for role in ("executor",
                                                                              "yarn.am")]))
os.environ.setdefault("SPARK_DAEMON_JAVA_OPTS", QUICK_JIT)

# Every real HBase started is counted; the session's summary lists them.
stacks.count_starts()

# The WebHDFS library logs each request at info: a failing test's captured log would be
# those lines, not what failed.
logging.getLogger("hdfs").setLevel(logging.WARNING)


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


# Side by side (``make test`` runs ``pytest -n 3 --dist loadgroup``): each test goes to a
# worker with the tests that share its heavy fixtures, so none starts twice. Everything on
# the session's real stacks (``real_hbase``, ``secured_stack``) is one group, as is
# everything on the session's Kafka broker; a module of ``make test-stacks`` on real HBase
# (``own_stack``) goes with the modules borrowing the same shared stack (SHARED_STACKS), or
# alone: its clusters are its own, so such modules run side by side, one per worker.
# Any other test goes with its module (its module-scoped fixtures). The groups are handed
# out in collection order, the longest first (measured with --durations), so no worker
# is left with a long tail.
REAL_HBASE_GROUP = "real-hbase"
KAFKA_GROUP = "kafka"
SESSION_STACKS = ("real_hbase", "secured_stack")
# Longest first, by the time each group took (build/test-durations-*.json): own_stack's
# and make test's in one list (a group of the other run is not collected, so not in the way).
FIRST_GROUPS = (REAL_HBASE_GROUP, "tests/spark/test_yarn.py",
                "tests/airflow/test_live_stack.py", "tests/spark/test_cluster_hosts.py",
                "tests/airflow/test_crash_tasks.py", "tests/e2e/test_demo.py",
                "tests/spark/test_standalone_kerberos.py",
                "tests/realstack/test_wal_holes_real.py", KAFKA_GROUP, "native_hbase",
                "tests/airflow/test_spark_cluster.py", "tests/airflow/test_celery_stack.py",
                "tests/realstack/test_hbase1_real.py", "tests/soak/test_crash.py",
                "tests/ranges/test_live.py", "tests/replay/test_outages.py",
                "tests/replay/test_faults.py", "tests/airflow/test_lineage.py",
                "tests/soak/test_soak.py")


def worker_group(item: pytest.Item) -> str:
    """The group ``item`` runs in under pytest-xdist's ``loadgroup``."""
    names = getattr(item, "fixturenames", ())
    if item.get_closest_marker("realstack") is not None:
        if item.get_closest_marker("own_stack") is None or any(
                name in names for name in SESSION_STACKS):
            return REAL_HBASE_GROUP
        return next((name for name in SHARED_STACKS if name in names), module(item))
    if "kafka_broker" in names:
        return KAFKA_GROUP
    return item.nodeid.split("::", 1)[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = {}
    for item in items:
        groups[item] = worker_group(item)
        item.add_marker(pytest.mark.xdist_group(groups[item]))
    # xdist's workers collect (and so order) the tests; a worker runs with dist "no" and
    # loadgroup set when the run's --dist is loadgroup
    if getattr(config.option, "loadgroup", False) or getattr(config.option, "dist", "no") != "no":
        order = {item: n for n, item in enumerate(items)}
        shared = shared_stack_order(items)
        items.sort(key=lambda i: (FIRST_GROUPS.index(groups[i]) if groups[i] in FIRST_GROUPS
                                  else len(FIRST_GROUPS), shared[module(i)], order[i]))


def module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def shared_stack_order(items: list[pytest.Item]) -> dict[str, int]:
    """Each module's place among those borrowing a shared real stack (SHARED_STACKS: the
    modules of one run one after another, so it starts once), the others after them."""
    found: dict[str, int] = {}
    for item in items:
        names = getattr(item, "fixturenames", ())
        rank = min((n for n, name in enumerate(SHARED_STACKS) if name in names),
                   default=len(SHARED_STACKS))
        found[module(item)] = min(rank, found.get(module(item), rank))
    return found


# A passed test's folder is emptied once its fixtures are torn down (a failed one's kept for
# reading): a full run would otherwise hold every embedded cluster's files until it ends.
# The folder itself stays, so no later test gets its name (tables, instances and topics on
# the session's shared stacks are named after it).
CALL_PASSED = pytest.StashKey[Path]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    folder = (getattr(item, "funcargs", None) or {}).get("tmp_path")
    if report.when == "call" and report.passed and isinstance(folder, Path):
        item.stash[CALL_PASSED] = folder
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        folder = item.stash.get(CALL_PASSED, None)
        if folder is not None and folder.is_dir():
            for child in folder.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A worker of pytest-xdist hands the stacks it started to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["real_stacks_started"] = stacks.started()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist's controller: a worker's stacks, for the summary."""
    STARTED.extend(getattr(node, "workeroutput", {}).get("real_stacks_started", []))


STARTED: list[str] = []  # the real stacks the workers started


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """How many real HBase stacks the session started, and which (one per configuration
    and per module of its own)."""
    started = STARTED or stacks.started()
    if started:
        terminalreporter.write_line(f"real HBase stacks started: {len(started)}")
        for line in started:
            terminalreporter.write_line(f"  {line}")
