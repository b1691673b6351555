"""spark-submit entry point: replay a migration's source WAL files into its target, one
Spark task per WAL chain (its files in order); the driver selects the files and records the
outcomes in the ledger.

    spark-submit spark_apps/replay_wal.py --config M.toml [--table T ...]
        [--start TIME [--end TIME]] [--master URL]

Prints the run summary as JSON; exits 0 ok, 1 a file failed, 3 a gap, 2 an error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="replay_wal", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="The migration config (TOML).")
    parser.add_argument("--table", action="append", default=[], help="Source table (repeat).")
    parser.add_argument("--start", help="Edits written at or after TIME (default: watermark).")
    parser.add_argument("--end", help="...and before TIME (a window replay).")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else the "
                                         "config's, else local[*]).")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from hbase_migrate.replay.job import ReplayJob
    from hbase_migrate.replay.run import run_replay
    from hbase_migrate.replay.spark import spark_executor
    from hbase_migrate.timeutil import parse_time
    from spark_apps.session import run_step

    args = parse_args(argv)

    def replay(spec: MigrationSpec, spark: Any) -> tuple[dict[str, Any], int]:
        job = ReplayJob.from_spec(
            spec, tables=args.table, step_kind="replay",
            start=parse_time(args.start, name="--start") if args.start else None,
            end=parse_time(args.end, name="--end") if args.end else None)
        summary = run_replay(job, executor=spark_executor(spark))
        return summary.to_json(), summary.exit_code

    return run_step("replay_wal", "replay", args, replay)


if __name__ == "__main__":
    sys.exit(main())
