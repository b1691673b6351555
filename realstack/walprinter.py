"""HBase's own ``WALPrettyPrinter -j -p`` over WAL files, and its output as plain entries.

``pretty_print(files)`` runs the printer (through the ``hbase`` module's ``PrettyPrintWals``)
in a short JVM. ``parse(output)`` turns what it printed for one file into entries::

    {"sequence": 7, "region": "f3b7...", "table": "golden_a", "end": 2033,
     "cells": [{"row", "family", "qualifier", "timestamp", "type", "value", "vlen",
                "tags": ["8:\\x00..."]}]}

``end`` is the reader position after the entry; strings are ``Bytes.toStringBinary``, as
HBase prints them. This is HBase's view, for comparison with ``hbase-migrate wal dump``.

HBase 1.x's printer (run on the ``hbase1`` module's class path) prints no cell type: its
``PrettyPrintWals`` adds ``types``, each printed entry's cell types as HBase's own WAL reader
reads them, which ``parse(output, types)`` puts into the cells.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from realstack.hbase import DEFAULT_VERSION, hbase_classpath
from realstack.maven import RealStackError, java_command

MAIN_CLASS = "hbasemigrate.realstack.PrettyPrintWals"
_AFTER_ENTRY = re.compile(r"edit heap size: \d+\nposition: (\d+)\n")


def pretty_print(files: Sequence[str | Path], version: str = DEFAULT_VERSION
                 ) -> dict[str, dict[str, Any]]:
    """File name -> ``{"output": printed text, "error"?: what the printer threw}``."""
    if not files:
        return {}
    command = java_command(hbase_classpath(version), MAIN_CLASS, [str(f) for f in files],
                           heap="256m")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RealStackError(f"WALPrettyPrinter (HBase {version}) failed with code "
                             f"{done.returncode}:\n{done.stderr[-2000:]}")
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {p["file"]: p for p in printed}


def parse(output: str, types: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """The entries of one file's ``-j -p`` output (header lines and position notes aside);
    ``types``, where the printer has none (HBase 1.x), each entry's cell types."""
    start = output.find("[")
    if start < 0:
        return []
    decoder = json.JSONDecoder()
    printed: list[tuple[dict[str, Any], int]] = []
    at = start + 1
    while True:
        while at < len(output) and output[at] in ",\n ":
            at += 1
        if at >= len(output) or output[at] == "]":
            break
        raw, at = decoder.raw_decode(output, at)
        after = _AFTER_ENTRY.match(output, at)
        if after is None:
            raise ValueError(f"unexpected WALPrettyPrinter output at {at}: {output[at:at + 80]!r}")
        at = after.end()
        printed.append((raw, int(after.group(1))))
    if types is not None:
        _add_types(printed, types)
    return [_entry(raw, end) for raw, end in printed]


def _add_types(printed: list[tuple[dict[str, Any], int]], types: list[list[str]]) -> None:
    """Each printed cell's type from what HBase's reader read, entry by entry."""
    counts = [len(raw["actions"]) for raw, _ in printed]
    if counts != [len(kinds) for kinds in types]:
        raise ValueError(f"cells per entry: the printer printed {counts}, HBase's reader "
                         f"read {[len(kinds) for kinds in types]}")
    for (raw, _), kinds in zip(printed, types, strict=True):
        for action, kind in zip(raw["actions"], kinds, strict=True):
            action.setdefault("type", kind)


def _entry(raw: dict[str, Any], end: int) -> dict[str, Any]:
    return {"sequence": int(raw["sequence"]), "region": raw["region"],
            "table": raw["table"]["nameAsString"], "end": end,
            "cells": [{"row": a["row"], "family": a["family"], "qualifier": a["qualifier"],
                       "timestamp": int(a["timestamp"]), "type": a["type"],
                       "value": a.get("value"), "vlen": a["vlen"],
                       "tags": list(a.get("tag", []))} for a in raw["actions"]]}
