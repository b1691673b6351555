"""What every spark-submit entry point shares: the Spark session (spark-submit's when it
launched us, else one on ``--master`` or the migration's configured master; stopped on the
way out) and the run itself: load the config, run one step, print its result as JSON, turn
the project's errors into one line and exit code 2."""

from __future__ import annotations

import json
import os
import sys
from argparse import Namespace
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hbase_migrate.config import AUTO, IN_PROCESS, MigrationSpec

# (the migration, its Spark session) -> (the step's JSON-safe result, the exit code)
Step = Callable[[MigrationSpec, Any], tuple[dict[str, Any], int]]


@contextmanager
def session(master: str | None, spec: MigrationSpec, what: str) -> Iterator[Any]:
    """Start the session (a ``pyspark.sql.SparkSession``) and stop it afterwards: spark-submit's
    as it launched us, else one on ``master`` set up as the steps' own sessions are (the
    migration's ``[spark] conf``, the executors' Python or the project's archive)."""
    from pyspark.sql import SparkSession

    from hbase_migrate.ranges.engine import executor_python, prepare_spark_environment
    from hbase_migrate.spark.executors import executor_setup

    prepare_spark_environment()
    builder = SparkSession.builder.appName(f"hbase-migrate {what} {spec.name}")
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        configured = spec.engine.spark_master
        url = master or (spec.engine.large_master if configured in (AUTO, IN_PROCESS)
                         else configured)
        setup = executor_setup(url, spec.engine)
        for key, value in setup.conf:
            builder = builder.config(key, value)
        with executor_python(setup.python):
            spark = builder.master(url).getOrCreate()
    else:
        spark = builder.getOrCreate()
    try:
        yield spark
    finally:
        spark.stop()


def run_step(prog: str, what: str, args: Namespace, step: Step) -> int:
    """Run ``step`` on the migration of ``args.config`` in a session on ``args.master``;
    print its result as JSON and return its exit code (2 on the project's errors)."""
    from hbase_migrate.config import load_config
    from hbase_migrate.errors import HBaseMigrateError

    try:
        spec = load_config(args.config)
        with session(args.master, spec, what) as spark:
            result, code = step(spec, spark)
    except HBaseMigrateError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, sort_keys=True, indent=2))
    return code


def master_of(spark: Any) -> str:
    """The master URL of a session, for a lifecycle step's ``master``."""
    return str(spark.sparkContext.master)
