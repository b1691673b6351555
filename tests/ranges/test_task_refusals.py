"""A task whose error no other attempt cures is not retried: Spark runs it once and the step
fails in one line, where an ordinary error is retried ``spark.task.maxFailures`` times. The
session here retries as a cluster does (``local[2,4]``: four attempts), and the attempts are
counted by Spark's own status tracker, not by the engine under test."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.errors import ConfigError
from hbase_migrate.ranges.credentials import TaskCredentials
from hbase_migrate.ranges.engine import JOB_GROUP, SparkEngine, prepare_spark_environment
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.spark.jobs import group_job_ids

pytestmark = pytest.mark.integration
ATTEMPTS = 4  # spark.task.maxFailures of the session, as on a cluster


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pyspark_sql = pytest.importorskip("pyspark.sql")
    prepare_spark_environment()
    session = (pyspark_sql.SparkSession.builder.master(f"local[2,{ATTEMPTS}]")
               .appName("hbase-migrate-test-refusals").config("spark.ui.enabled", "false")
               .getOrCreate())
    yield session
    session.stop()
    logging.getLogger("py4j").setLevel(logging.WARNING)


def failed_attempts(spark: Any, before: list[int]) -> list[int]:
    """The failed task attempts of each job of the range engine since ``before``."""
    context = spark.sparkContext
    tracker = context.statusTracker()
    found = []
    for job in sorted(set(group_job_ids(context, JOB_GROUP)) - set(before)):
        info = tracker.getJobInfo(job)
        assert info is not None, job
        stages = [tracker.getStageInfo(s) for s in info.stageIds]
        found.append(sum(s.numFailedTasks for s in stages if s is not None))
    return found


def test_a_task_without_its_keytab_runs_once_and_fails_in_one_line(
        spark: Any, tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "migrate.keytab"
    security = ClusterSecurity(auth="kerberos", principal="migrate@EXAMPLE.COM",
                               keytab=str(missing))
    engine = SparkEngine(spark, TaskCredentials((("prod", security),)))
    before = group_job_ids(spark.sparkContext, JOB_GROUP)
    with pytest.raises(RangeError) as raised:
        engine.map(lambda i: i, [0, 1, 2], what="copy 3 key ranges")
    assert str(raised.value) == (
        f"copy 3 key ranges: a Spark task failed: KerberosError: cluster 'prod', Spark "
        f"executor on host {socket.gethostname()}, principal migrate@EXAMPLE.COM: keytab "
        f"{missing} is not on this host and was not shipped with the job; set [spark] "
        f"ship_keytab = \"auto\" (or \"always\") to send it, or deploy it at {missing} on "
        f"every worker")
    attempts = failed_attempts(spark, before)
    assert attempts and attempts == [0] * len(attempts), attempts  # none retried


def test_an_ordinary_error_is_retried_one_that_fails_at_once_is_not(spark: Any) -> None:
    engine = SparkEngine(spark)

    def flaky(i: int) -> int:  # (by value: nested)
        raise RangeError(f"range {i}: the region server hung up")

    before = group_job_ids(spark.sparkContext, JOB_GROUP)
    with pytest.raises(RangeError) as raised:
        engine.map(flaky, [0], what="copy 1 key range")
    assert failed_attempts(spark, before) == [ATTEMPTS]  # Spark's retries, as before
    said = str(raised.value)
    assert said.startswith("copy 1 key range: a Spark task failed: ") and \
        "range 0: the region server hung up" in said and "\n" not in said, said

    def misconfigured(i: int) -> int:  # (by value: nested)
        raise ConfigError(f"range {i}: [target] table_prefix must not be empty")

    before = group_job_ids(spark.sparkContext, JOB_GROUP)
    with pytest.raises(RangeError) as raised:
        engine.map(misconfigured, [0], what="copy 1 key range")
    assert failed_attempts(spark, before) == [0]  # returned, not raised: one attempt
    assert str(raised.value) == ("copy 1 key range: a Spark task failed: ConfigError: range "
                                 "0: [target] table_prefix must not be empty")
