"""HBase's own ``WALPrettyPrinter -j -p`` over WAL files, and its output as plain entries.

``pretty_print(files)`` runs the printer (through the ``hbase`` module's ``PrettyPrintWals``)
in a short JVM. ``parse(output)`` turns what it printed for one file into entries::

    {"sequence": 7, "region": "f3b7...", "table": "golden_a", "end": 2033,
     "cells": [{"row", "family", "qualifier", "timestamp", "type", "value", "vlen",
                "tags": ["8:\\x00..."]}]}

``end`` is the reader position after the entry; strings are ``Bytes.toStringBinary``, as
HBase prints them. This is HBase's view, for comparison with ``hbase-migrate wal dump``.

HBase 1.x's printer (run on the ``hbase1`` module's class path) prints no cell type, and
1.2's no position after an entry: its ``PrettyPrintWals`` adds ``reads``, each printed
entry's cell types and end as HBase's own WAL reader reads them, which ``parse(output,
reads)`` puts into the entries (a printed position must equal the reader's).
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


def pretty_print(files: Sequence[str | Path], version: str = DEFAULT_VERSION,
                 phoenix: str | None = None) -> dict[str, dict[str, Any]]:
    """File name -> ``{"output": printed text, "error"?: what the printer threw}``; with
    ``phoenix`` (a phoenix-core version) on the printer's class path."""
    if not files:
        return {}
    cells = ["--cells"] if phoenix else []
    command = java_command(hbase_classpath(version, phoenix), MAIN_CLASS,
                           [*cells, *(str(f) for f in files)],
                           heap="256m")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RealStackError(f"WALPrettyPrinter (HBase {version}) failed with code "
                             f"{done.returncode}:\n{done.stderr[-2000:]}")
    printed = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {p["file"]: p for p in printed}


def parse(output: str, reads: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The entries of one file's ``-j -p`` output (header lines and position notes aside);
    ``reads``, for a 1.x printer, each entry's cell ``types`` and ``end`` as HBase's reader
    read them."""
    start = output.find("[")
    if start < 0:
        return []
    decoder = json.JSONDecoder()
    printed: list[tuple[dict[str, Any], int | None]] = []
    at = start + 1
    while True:
        while at < len(output) and output[at] in ",\n ":
            at += 1
        if at >= len(output) or output[at] == "]":
            break
        raw, at = decoder.raw_decode(output, at)
        after = _AFTER_ENTRY.match(output, at)
        if after is None and reads is None:
            raise ValueError(f"unexpected WALPrettyPrinter output at {at}: {output[at:at + 80]!r}")
        if after is not None:
            at = after.end()
        printed.append((raw, int(after.group(1)) if after else None))
    if reads is not None:
        return [_entry(raw, end) for raw, end in _with_reads(printed, reads)]
    return [_entry(raw, end) for raw, end in printed if end is not None]


def _with_reads(printed: list[tuple[dict[str, Any], int | None]], reads: list[dict[str, Any]]
                ) -> list[tuple[dict[str, Any], int]]:
    """Each printed cell's type and each entry's end from what HBase's reader read."""
    counts = [len(raw["actions"]) for raw, _ in printed]
    if counts != [len(read["types"]) for read in reads]:
        raise ValueError(f"cells per entry: the printer printed {counts}, HBase's reader "
                         f"read {[len(read['types']) for read in reads]}")
    done = []
    for index, ((raw, end), read) in enumerate(zip(printed, reads, strict=True)):
        if end is not None and end != read["end"]:
            raise ValueError(f"entry {index}: the printer ends it at {end}, HBase's reader "
                             f"at {read['end']}")
        for action, kind in zip(raw["actions"], read["types"], strict=True):
            action.setdefault("type", kind)
        done.append((raw, int(read["end"])))
    return done


def _entry(raw: dict[str, Any], end: int) -> dict[str, Any]:
    return {"sequence": int(raw["sequence"]), "region": raw["region"],
            "table": raw["table"]["nameAsString"], "end": end,
            "cells": [{"row": a["row"], "family": a["family"], "qualifier": a["qualifier"],
                       "timestamp": int(a["timestamp"]), "type": a["type"],
                       "value": a.get("value"), "vlen": a["vlen"],
                       "tags": list(a.get("tag", []))} for a in raw["actions"]]}
