"""A Spark ``local[2]`` session per module of the range engine's live tests, and helpers."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.ranges.engine import prepare_spark_environment


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    pyspark_sql = pytest.importorskip("pyspark.sql")
    prepare_spark_environment()
    session = (pyspark_sql.SparkSession.builder.master("local[2]")
               .appName("hbase-migrate-test-ranges").config("spark.ui.enabled", "false")
               .getOrCreate())
    yield session
    session.stop()
    logging.getLogger("py4j").setLevel(logging.WARNING)
