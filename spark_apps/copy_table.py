"""spark-submit entry point: the snapshot copy of a migration, one Spark task per key range;
ranges copied by an earlier attempt are skipped.

    spark-submit spark_apps/copy_table.py --config M.toml [--watermark TIME] [--master URL]

Prints the step's result as JSON; exits 0 when copied, 2 on errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="copy_table", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="The migration config (TOML).")
    parser.add_argument("--watermark", help="T0 of the copy (default: now).")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else the "
                                         "config's).")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from hbase_migrate.lifecycle import snapshot
    from hbase_migrate.timeutil import parse_time
    from spark_apps.session import master_of, run_step

    args = parse_args(argv)

    def copy(spec: MigrationSpec, spark: Any) -> tuple[dict[str, Any], int]:
        watermark = parse_time(args.watermark, name="--watermark") if args.watermark else None
        return snapshot(spec, watermark=watermark, master=master_of(spark)).to_json(), 0

    return run_step("copy_table", "copy", args, copy)


if __name__ == "__main__":
    sys.exit(main())
