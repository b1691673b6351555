"""spark-submit entry point: validate a migration range by range (rows, cells and digests
on both sides, one Spark task per key range, judged by Great Expectations), recompare what
differs, and with --repair rewrite what still differs.

    spark-submit spark_apps/checksum_ranges.py --config M.toml [--table T ...] [--repair]
        [--master URL]

Prints the step's result as JSON; exits 0 when every range matches, 1 when some differ, 2 on
errors.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="checksum_ranges",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="The migration config (TOML).")
    parser.add_argument("--table", action="append", default=[], help="Table (repeat).")
    parser.add_argument("--repair", action="store_true", help="Repair what still differs.")
    parser.add_argument("--no-compact", dest="compact", action="store_false",
                        help="List repaired cells newer delete markers hide instead of "
                             "major-compacting their regions.")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else the "
                                         "config's).")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from hbase_migrate.lifecycle import validate
    from spark_apps.session import master_of, run_step

    args = parse_args(argv)

    def check(spec: MigrationSpec, spark: Any) -> tuple[dict[str, Any], int]:
        result = validate(spec, tables=args.table, repair=args.repair, compact=args.compact,
                          master=master_of(spark))
        return result.to_json(), 0 if result.passed else 1

    return run_step("checksum_ranges", "validate", args, check)


if __name__ == "__main__":
    sys.exit(main())
