"""spark-submit entry point: replay a migration's source WAL files into its target, one
Spark task per file; the driver selects the files and records the outcomes in the ledger.

    spark-submit spark_apps/replay_wal.py --config M.toml [--table T ...]
        [--start TIME [--end TIME]] [--master local[*]]

Prints the run summary as JSON; exits 0 ok, 1 a file failed, 3 a gap, 2 an error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="replay_wal", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="The migration config (TOML).")
    parser.add_argument("--table", action="append", default=[], help="Source table (repeat).")
    parser.add_argument("--start", help="Edits written at or after TIME (default: watermark).")
    parser.add_argument("--end", help="...and before TIME (a window replay).")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else "
                                         "local[*]).")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from pyspark.sql import SparkSession

    from hbase_migrate.config import load_config
    from hbase_migrate.errors import HBaseMigrateError
    from hbase_migrate.replay.job import ReplayJob
    from hbase_migrate.replay.run import run_replay
    from hbase_migrate.replay.spark import spark_executor
    from hbase_migrate.timeutil import parse_time

    args = parse_args(argv)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        job = ReplayJob.from_spec(
            load_config(args.config), tables=args.table, step_kind="replay",
            start=parse_time(args.start, name="--start") if args.start else None,
            end=parse_time(args.end, name="--end") if args.end else None)
    except HBaseMigrateError as exc:
        print(f"replay_wal: error: {exc}", file=sys.stderr)
        return 2
    builder = SparkSession.builder.appName(f"hbase-migrate replay {job.name}")
    master = args.master or (None if "PYSPARK_GATEWAY_PORT" in os.environ else "local[*]")
    if master:
        builder = builder.master(master)
    spark = builder.getOrCreate()
    try:
        summary = run_replay(job, executor=spark_executor(spark))
    except HBaseMigrateError as exc:
        print(f"replay_wal: error: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(json.dumps(summary.to_json(), sort_keys=True, indent=2))
    return summary.exit_code


if __name__ == "__main__":
    sys.exit(main())
