"""spark-submit entry point: the snapshot copy of a migration, one Spark task per key range;
ranges copied by an earlier attempt are skipped.

    spark-submit spark_apps/copy_table.py --config M.toml [--watermark TIME] [--master URL]

Prints the step's result as JSON; exits 0 when copied, 2 on errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="copy_table", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="The migration config (TOML).")
    parser.add_argument("--watermark", help="T0 of the copy (default: now).")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else the "
                                         "config's).")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    from hbase_migrate.config import load_config
    from hbase_migrate.errors import HBaseMigrateError
    from hbase_migrate.lifecycle import snapshot
    from hbase_migrate.timeutil import parse_time
    from spark_apps.session import session

    args = parse_args(argv)
    try:
        spec = load_config(args.config)
        watermark = parse_time(args.watermark, name="--watermark") if args.watermark else None
        with session(args.master, spec, "copy") as master:
            result = snapshot(spec, watermark=watermark, master=master)
    except HBaseMigrateError as exc:
        print(f"copy_table: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result, sort_keys=True, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
