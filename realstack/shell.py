"""``python -m realstack.shell CLUSTER_JSON``: the hbase shell statements a migration's
``[target] admin_shell`` sends (``flush 'T'``, ``major_compact 'T'``, read on stdin, one per
line or separated by ``;``), run against a realstack HBase through its admin endpoint, for
trials and tests where no ``hbase shell`` is installed. ``major_compact`` returns once the
compaction ended. Any other statement is refused (exit 2)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from stackprocs.admin_client import call_admin

_STATEMENT = re.compile(r"^\s*(flush|major_compact)\s+'([^']+)'\s*$")
_OPERATION = {"flush": "flush", "major_compact": "major-compact"}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m realstack.shell CLUSTER_JSON < statements", file=sys.stderr)
        return 2
    cluster_json = Path(argv[0])
    for statement in re.split(r"[;\n]", sys.stdin.read()):
        if not statement.strip():
            continue
        found = _STATEMENT.match(statement)
        if found is None:
            print(f"realstack.shell: not a statement it runs: {statement.strip()!r} (only "
                  "flush 'T' and major_compact 'T')", file=sys.stderr)
            return 2
        command, table = found.groups()
        call_admin(cluster_json, _OPERATION[command], {"table": table})
        print(f"{command} '{table}': done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
