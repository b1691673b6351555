"""``hbase-migrate hfile``: read HBase store files (HFiles) without a JVM.

``hfile dump FILE`` prints one line per cell in file order, as text in the spirit of HBase's
``HFilePrettyPrinter -p`` or with ``--json`` as one JSON object per cell: the fields of
``wal dump --json``'s cells (byte strings rendered as HBase's ``Bytes.toStringBinary``, the
same renderer) and the cell's ``mvcc``. ``hfile info FILE`` prints the trailer and file info
(``hfile/summary.py``). A file the reader cannot read ends with one error line
naming it and the byte offset, exit code 2.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click

from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.dump import cell_json


@click.group()
def hfile() -> None:
    """Read HFiles (HBase store files): dump their cells, show their trailer and file info."""


@hfile.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per cell.")
@click.argument("file", type=click.Path(dir_okay=False))
def dump(as_json: bool, file: str) -> None:
    """Print every cell of an HFile (row, family, qualifier, timestamp, type, value, tags,
    mvcc), in file order."""
    from hbase_migrate.hfile.reader import HFileReader

    out = sys.stdout
    try:
        with HFileReader(file) as reader:
            for stored in reader.cells():
                data = cell_json(stored.cell, values=True)
                data.setdefault("tags", [])
                data["mvcc"] = stored.mvcc
                if as_json:
                    out.write(json.dumps(data) + "\n")
                else:
                    out.write(_text(data) + "\n")
    except (HBaseMigrateError, OSError) as exc:
        _fail(file, exc)


@hfile.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.argument("file", type=click.Path(dir_okay=False))
def info(as_json: bool, file: str) -> None:
    """Print an HFile's trailer and file info: version, entries, compression, encoding,
    comparator, tags and mvcc, max sequence id, time range, index levels and offsets."""
    from hbase_migrate.hfile.reader import HFileReader
    from hbase_migrate.hfile.summary import file_summary

    try:
        with HFileReader(file) as reader:
            summary = file_summary(reader)
    except (HBaseMigrateError, OSError) as exc:
        _fail(file, exc)
    if as_json:
        click.echo(json.dumps(summary))
    else:
        for key, value in summary.items():
            click.echo(f"{key}: {value}")


def _fail(file: str, exc: BaseException) -> NoReturn:
    message = str(exc) if isinstance(exc, HBaseMigrateError) else f"{file}: {exc}"
    click.echo(f"hbase-migrate: error: {message}", err=True)
    sys.exit(2)


def _text(data: dict[str, Any]) -> str:
    tags: list[dict[str, Any]] = data["tags"]
    printed = "".join(f" T[{i}]: [Tag type : {t['type']}, value : {t['value']}]"
                      for i, t in enumerate(tags))
    return (f"K: {data['row']}/{data['family']}:{data['qualifier']}/{data['timestamp']}/"
            f"{data['type']}/mvcc={data['mvcc']} V: {data['value']}{printed}")
