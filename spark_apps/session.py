"""The Spark session of an entry point: spark-submit's when it launched us, else one on
``--master`` or the migration's configured master; stopped on the way out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from hbase_migrate.config import DEFAULT_SPARK_MASTER, IN_PROCESS, MigrationSpec


@contextmanager
def session(master: str | None, spec: MigrationSpec, what: str) -> Iterator[str]:
    """Start the session; yields its master URL for the lifecycle step."""
    from pyspark.sql import SparkSession

    from hbase_migrate.ranges.engine import prepare_spark_environment

    prepare_spark_environment()
    builder = SparkSession.builder.appName(f"hbase-migrate {what} {spec.name}")
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        configured = spec.engine.spark_master
        builder = builder.master(master or (DEFAULT_SPARK_MASTER if configured == IN_PROCESS
                                            else configured))
    spark = builder.getOrCreate()
    try:
        yield str(spark.sparkContext.master)
    finally:
        spark.stop()
