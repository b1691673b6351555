"""The suite's budgets, judged after a run: every test within its category's budget (a unit
test's CPU, any other's wall time; ``tests/support/durations.py`` says which and how much),
read from the records the runs left in ``build/``. Exit 1 naming each test over budget."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("records", nargs="+", type=Path,
                        help="build/test-durations-*.json, as the test runs wrote them")
    args = parser.parse_args()
    over: list[str] = []
    for path in args.records:
        record = json.loads(path.read_text(encoding="utf-8"))
        over += [f"{path.name}: {line}" for line in record["over"]]
        print(f"{path.name}: {len(record['tests'])} tests, {len(record['over'])} over budget "
              f"(budgets: " + ", ".join(f"{name} {seconds:g} s" for name, seconds
                                        in record["budgets"].items()) + ")")
    for line in over:
        print(f"over budget: {line}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
