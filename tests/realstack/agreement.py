"""``hbase-migrate wal dump --json --values`` against HBase's WALPrettyPrinter, field by field.

HBase's entries come from :func:`realstack.walprinter.parse` (run now, or committed as
JSON); ours from the command's JSON Lines, put in the same shape."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from hbase_migrate.bytesutil import to_bytes_binary


def dump(path: Path) -> list[dict[str, Any]]:
    """Our entries of one WAL file, in the printer's shape (``end`` = offset + size)."""
    done = run_dump(path)
    assert done.returncode == 0, f"wal dump {path.name}: {done.stderr}"
    return entries(done.stdout)


def run_dump(source: Path | str) -> subprocess.CompletedProcess[str]:
    """``hbase-migrate wal dump --json --values`` of a WAL path or URL."""
    return subprocess.run([sys.executable, "-m", "hbase_migrate", "wal", "dump", "--json",
                           "--values", str(source)], capture_output=True, text=True,
                          timeout=300, check=False)


def entries(output: str) -> list[dict[str, Any]]:
    """The entries of ``wal dump --json`` output, in the printer's shape."""
    return [_ours(json.loads(line)) for line in output.splitlines() if line.strip()]


def _ours(entry: dict[str, Any]) -> dict[str, Any]:
    return {"sequence": entry["sequence"], "region": entry["region"],
            "table": entry["table"], "end": entry["offset"] + entry["size"],
            "cells": [{"row": c["row"], "family": c["family"], "qualifier": c["qualifier"],
                       "timestamp": c["timestamp"], "type": c["type"], "value": c["value"],
                       "vlen": len(to_bytes_binary(c["value"])),
                       "tags": [f"{t['type']}:{t['value']}" for t in c.get("tags", [])]}
                      for c in entry["cells"]]}


def disagreements(name: str, ours: list[dict[str, Any]], hbase: list[dict[str, Any]]
                  ) -> list[str]:
    """Every field where the two differ, named by file, entry index and field."""
    found = []
    if len(ours) != len(hbase):
        found.append(f"{name}: {len(ours)} entries read, HBase printed {len(hbase)}")
    for index, (mine, theirs) in enumerate(zip(ours, hbase, strict=False)):
        for key in ("sequence", "region", "table", "end"):
            if mine[key] != theirs[key]:
                found.append(f"{name} #{index} {key}: ours {mine[key]!r}, "
                             f"HBase {theirs[key]!r}")
        if len(mine["cells"]) != len(theirs["cells"]):
            found.append(f"{name} #{index}: {len(mine['cells'])} cells, HBase "
                         f"{len(theirs['cells'])}")
        for at, (a, b) in enumerate(zip(mine["cells"], theirs["cells"], strict=False)):
            found.extend(f"{name} #{index} cell {at} {key}: ours {a[key]!r}, HBase {b[key]!r}"
                         for key in b if a[key] != b[key])
    return found
