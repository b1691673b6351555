"""What HBase's ``HFilePrettyPrinter -p -v -m`` printed for a golden file, taken apart with no
use of the reader under test: the cells (``K:`` lines) and the trailer and file info fields."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "real-hfile"
_TAG = re.compile(r" T\[(\d+)\]: \[Tag type : (\d+), value : (.*?)\](?= T\[\d+\]: |$)")
# HBase 1.x prints a tag's value alone: `` T[0]: <value>``
_TAG_1X = re.compile(r" T\[(\d+)\]: (.*?)(?= T\[\d+\]: |$)")
_CELL = re.compile(r"^K: (?P<key>.*)/vlen=(?P<vlen>\d+)/seqid=(?P<seqid>\d+) V: (?P<rest>.*)$")


def printed_cells(name: str, folder: Path = GOLDEN) -> list[dict[str, Any]]:
    """One dict per ``K:`` line, fields as HBase printed them (``Bytes.toStringBinary``).
    The golden rows and qualifiers hold no ``/`` and families no ``:``; a tag printed by
    HBase 1.x, which prints no tag type, has the type None."""
    cells = []
    for line in (folder / f"{name}.hbase.txt").read_text(encoding="utf-8").splitlines():
        match = _CELL.match(line)
        if match is None:
            continue
        row, column, timestamp, kind = match["key"].split("/")
        family, qualifier = column.split(":", 1)
        rest = match["rest"]
        tags: list[dict[str, Any]] = [{"type": int(m[2]), "value": m[3]}
                                      for m in _TAG.finditer(rest)]
        first_tag = _TAG.search(rest)
        if first_tag is None:  # as 1.x prints them: no type
            tags = [{"type": None, "value": m[2]} for m in _TAG_1X.finditer(rest)]
            first_tag = _TAG_1X.search(rest)
        value = rest[: first_tag.start()] if first_tag else rest
        cells.append({"row": row, "family": family, "qualifier": qualifier,
                      "timestamp": int(timestamp), "type": kind, "value": value,
                      "vlen": int(match["vlen"]), "mvcc": int(match["seqid"]), "tags": tags})
    return cells


def printed_section(name: str, section: str, folder: Path = GOLDEN) -> dict[str, str]:
    """``key=value`` (Trailer) or ``key = value`` (Fileinfo) lines of one printed section."""
    lines = (folder / f"{name}.hbase.txt").read_text(encoding="utf-8").splitlines()
    start = lines.index(f"{section}:") + 1
    fields = {}
    for line in lines[start:]:
        if not line.startswith("    "):
            break
        key, _, value = line.strip().rstrip(",").partition(" = " if section == "Fileinfo" else "=")
        fields[key] = value
    return fields
