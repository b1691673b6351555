"""``hbase-migrate hfile``: read HBase store files (HFiles) without a JVM.

``hfile dump FILE`` prints one line per cell in file order, as HBase's
``HFilePrettyPrinter -p -v`` prints it (``K: row/family:qualifier/timestamp/type/vlen=N/seqid=M
V: value`` and its tags), or with ``--json`` one JSON object per cell: the fields of ``wal dump
--json``'s cells (byte strings rendered as HBase's ``Bytes.toStringBinary``, the same renderer)
and the cell's ``mvcc``. ``hfile info FILE`` prints the trailer, the first and last key and the
file info map (``hfile/summary.py``). FILE is a local path or a ``webhdfs://host:port/path``
URL, as for ``wal dump``. A file the reader cannot read ends with one error line naming it and
the byte offset, exit code 2; a reader that stops reading (``| head``) ends the command
quietly, exit code 1, as for ``wal dump``.
"""

from __future__ import annotations

import json
import sys
from typing import NoReturn

import click

from hbase_migrate.commands.pipes import stdout_closed
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.dump import cell_json


@click.group()
def hfile() -> None:
    """Read HFiles (HBase store files): dump their cells, show their trailer and file info.

    A store file of a live table is /hbase/data/<namespace>/<table>/<region>/<family>/<file>
    under the HBase root (local or webhdfs://); see the docs' HFiles guide."""


@hfile.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per cell.")
@click.argument("file")
def dump(as_json: bool, file: str) -> None:
    """Print every cell of an HFile (a path or a webhdfs:// URL) in file order, as HBase's
    HFilePrettyPrinter -p -v prints them: key, value length, sequence id, value, tags."""
    from hbase_migrate.hfile.infoprint import cell_line
    from hbase_migrate.hfile.reader import HFileReader

    out = sys.stdout
    try:
        with HFileReader(file) as reader:
            for stored in reader.cells():
                if as_json:
                    data = cell_json(stored.cell, values=True)
                    data.setdefault("tags", [])
                    data["mvcc"] = stored.mvcc
                    out.write(json.dumps(data) + "\n")
                else:
                    out.write(cell_line(stored.cell, stored.mvcc) + "\n")
        out.flush()
    except BrokenPipeError:
        stdout_closed()
    except (HBaseMigrateError, OSError) as exc:
        _fail(file, exc)


@hfile.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.argument("file")
def info(as_json: bool, file: str) -> None:
    """Print an HFile's trailer and file info (a path or a webhdfs:// URL): version, entries,
    compression, encoding, comparator, tags and mvcc, first and last key, bloom type, max
    sequence id, time range, index levels and offsets, then the whole file info map as
    HBase's HFilePrettyPrinter -m prints it."""
    from hbase_migrate.hfile.reader import HFileReader
    from hbase_migrate.hfile.summary import file_summary

    try:
        with HFileReader(file) as reader:
            summary = file_summary(reader)
    except (HBaseMigrateError, OSError) as exc:
        _fail(file, exc)
    try:
        if as_json:
            click.echo(json.dumps(summary))
            return
        file_info = summary.pop("file_info")
        for key, value in summary.items():
            click.echo(f"{key}: {value}")
        click.echo("file_info:")
        for key, value in file_info.items():
            click.echo(f"    {key} = {value}")
        sys.stdout.flush()
    except BrokenPipeError:
        stdout_closed()


def _fail(file: str, exc: BaseException) -> NoReturn:
    message = str(exc) if isinstance(exc, HBaseMigrateError) else f"{file}: {exc}"
    click.echo(f"hbase-migrate: error: {message}", err=True)
    sys.exit(2)
