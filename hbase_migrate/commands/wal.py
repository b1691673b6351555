"""``hbase-migrate wal``: read WAL files without a cluster.

* ``wal dump`` prints entries, as JSON Lines (``--json``, the contract of the design notes,
  section 8) or as text in the spirit of HBase's WALPrettyPrinter. Byte strings are rendered
  as HBase's ``Bytes.toStringBinary`` does.
* ``wal stats`` counts entries, cells by type, markers, tables, regions and write times per
  file and in total; directories are walked recursively.
* ``wal select`` shows which files hold edits of a time window, and why (the manifest).

Every file is read as a stream. A cut-off tail (a file still being written) ends the file
normally with a note on stderr. A file that cannot be read (corrupt, legacy, encrypted,
missing) gets one error line on stderr naming it (and the byte offset, when corrupt); the
other files are still processed, and the command then exits with code 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import IO, TextIO

import click

from hbase_migrate.bytesutil import to_bytes_binary
from hbase_migrate.commands.pipes import stdout_closed
from hbase_migrate.errors import ConfigError, HBaseMigrateError, WalEmptyError
from hbase_migrate.timeutil import TIME_HELP, check_window, format_time, parse_duration, parse_time
from hbase_migrate.wal.dump import DumpFilter, entry_json, text_lines
from hbase_migrate.wal.stats import FileStats, count_file, expand_paths, local_size

PROGRESS_BYTES = 64 << 20
PROGRESS_FILES = 20
CUT_REASONS = {
    "truncated": "the last entry is cut off",
    "partial_trailer": "the trailer is cut off",
}
_READ_ERRORS = (HBaseMigrateError, OSError, ValueError)


@click.group()
def wal() -> None:
    """Read WAL files: dump entries, count statistics, select files for a time window."""


# --- shared helpers ------------------------------------------------------------------------




def _say_error(source: str, exc: BaseException) -> None:
    if isinstance(exc, FileNotFoundError):
        message = f"{source}: no such file"
    elif isinstance(exc, HBaseMigrateError):
        message = str(exc)
    else:
        message = f"{source}: {exc}"
    click.echo(f"hbase-migrate: error: {message}", err=True)


def _fail(failed: int, total: int) -> None:
    """End the command with exit code 2 after the files that could not be read (each has
    had its error line)."""
    click.echo(f"hbase-migrate: {failed} of {total} files could not be read", err=True)
    sys.exit(2)


def _note_cut_tail(source: str, end_offset: int, reason: str, size: int | None) -> None:
    if reason not in CUT_REASONS:
        return
    rest = f", {size - end_offset} bytes after it" if size is not None else ""
    click.echo(
        f"note: {source}: edits end at byte offset {end_offset} ({reason}: "
        f"{CUT_REASONS[reason]}{rest}); a file still being written or left by a crashed writer",
        err=True,
    )


def _time_option(name: str) -> Callable[[click.Context, click.Parameter, str | None], int | None]:
    def convert(_ctx: click.Context, _param: click.Parameter, value: str | None) -> int | None:
        if value is None:
            return None
        try:
            return parse_time(value, name=name)
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None

    return convert


def _bytes_arg(value: str, name: str) -> bytes:
    try:
        return to_bytes_binary(value, strict=True)
    except ValueError as exc:
        raise click.BadParameter(f"{name}: {exc}") from None


# --- dump ----------------------------------------------------------------------------------


def dump_file(source: str, out: IO[str], filt: DumpFilter, *, as_json: bool, values: bool) -> None:
    """Print the entries of one file that pass ``filt``; raises the reader's errors."""
    from hbase_migrate.wal.reader import WalReader

    with WalReader(source) as reader:
        if not as_json:
            header = reader.header
            out.write(f"File: {source}\n")
            out.write(f"Writer Classes: {header.writer_cls_name}\n")
            out.write(f"Cell Codec Class: {header.cell_codec_cls_name}\n")
        try:
            for entry in reader:
                cells = filt.cells(entry)
                if cells is None:
                    continue
                if as_json:
                    line = json.dumps(entry_json(source, entry, cells, values))
                    out.write(line + "\n")
                else:
                    out.write("\n".join(text_lines(entry, cells, values)) + "\n")
        finally:
            out.flush()
        _note_cut_tail(source, reader.end_offset, reader.end_reason, reader.file_size)


def _table_filter(tables: tuple[str, ...]) -> frozenset[bytes] | None:
    names = [name.strip() for given in tables for name in given.split(",") if name.strip()]
    if not names:
        return None
    # WAL keys omit the default namespace: "default:t1" is "t1".
    return frozenset(_bytes_arg(name.removeprefix("default:"), "--table") for name in names)


@wal.command()
@click.option("--json", "as_json", is_flag=True, help="JSON Lines, one object per entry.")
@click.option("--values", is_flag=True, help="Include cell values.")
@click.option("--table", "tables", multiple=True, help="Only these tables (repeat or a,b).")
@click.option("--region", help="Only this encoded region name.")
@click.option("--row", help="Only cells of this row (toStringBinary form, e.g. 'r\\x00').")
@click.option("--row-prefix", help="Only cells whose row starts with this.")
@click.option("--sequence", type=int, help="Only the entry with this sequence id.")
@click.option("--start", callback=_time_option("--start"), metavar="TIME",
              help="write_time >= TIME." + TIME_HELP)
@click.option("--end", callback=_time_option("--end"), metavar="TIME",
              help="write_time < TIME." + TIME_HELP)
@click.argument("files", nargs=-1, required=True)
def dump(
    as_json: bool,
    values: bool,
    tables: tuple[str, ...],
    region: str | None,
    row: str | None,
    row_prefix: str | None,
    sequence: int | None,
    start: int | None,
    end: int | None,
    files: tuple[str, ...],
) -> None:
    """Print the entries of WAL files (paths or webhdfs:// URLs), like WALPrettyPrinter.

    Filters on the entry key (table, region, sequence, write_time window [start, end)) drop
    whole entries; row filters drop cells, and entries left with none. A cut-off tail ends a
    file normally (note on stderr); a file that cannot be read gets an error line naming it
    (and the byte offset), the other files are still dumped, and the exit code is 2.
    """
    check_window(start, end)  # an empty window is an error, as for ``select``
    filt = DumpFilter(
        tables=_table_filter(tables),
        region=None if region is None else _bytes_arg(region, "--region"),
        sequence=sequence,
        row=None if row is None else _bytes_arg(row, "--row"),
        row_prefix=None if row_prefix is None else _bytes_arg(row_prefix, "--row-prefix"),
        start=start,
        end=end,
    )
    failed = 0
    out = sys.stdout
    for source in files:
        try:
            dump_file(source, out, filt, as_json=as_json, values=values)
        except BrokenPipeError:
            stdout_closed()
        except WalEmptyError as exc:
            click.echo(f"note: {exc}; no entries", err=True)
        except _READ_ERRORS as exc:
            _say_error(source, exc)
            failed += 1
    if failed:
        _fail(failed, len(files))


# --- stats ---------------------------------------------------------------------------------


def stats_file(path: str, on_progress: Callable[[int], None] | None = None) -> FileStats:
    """Count one file, saying on stderr what went wrong or was cut off."""
    stats = count_file(path, on_progress)
    if stats.failure is not None:
        _say_error(path, stats.failure)
    if stats.end_reason in CUT_REASONS and stats.end_offset is not None:
        _note_cut_tail(path, stats.end_offset, stats.end_reason, stats.bytes or None)
    return stats


# A file whose name is none of HBase's: read (given by name, or starting with PWAL), but its
# server and creation time, which HBase's WAL names carry, are not known.
UNKNOWN_KIND = ("kind unknown (the name is not an HBase WAL name, <server>.<creation time "
                "in ms>: server and name time unknown)")


def _stats_text(per_file: list[FileStats], total: FileStats, skipped: int, out: TextIO) -> None:
    def describe(s: FileStats) -> Iterator[str]:
        by_type = ", ".join(f"{k} {v}" for k, v in sorted(s.cells_by_type.items()))
        markers = ", ".join(f"{k} {v}" for k, v in sorted(s.markers.items())) or "none"
        tables = ", ".join(f"{k} {v}" for k, v in sorted(s.tables.items())) or "none"
        yield f"  entries {s.entries}, cells {s.cells} ({by_type or 'none'}), markers: {markers}"
        yield f"  tables: {tables}; regions {len(s.regions)}"
        if s.first_write_time is not None and s.last_write_time is not None:
            span = f"{format_time(s.first_write_time)} .. {format_time(s.last_write_time)}"
            yield f"  write_time {span}"

    for s in per_file:
        end = f"end {s.end_reason} at byte offset {s.end_offset}" if s.end_reason else ""
        kind = UNKNOWN_KIND if s.kind == "unknown" else s.kind
        out.write(f"{s.path}\n  {kind}, {s.bytes} bytes{', ' + end if end else ''}\n")
        if s.error:
            out.write(f"  error: {s.error}\n")
        out.write("\n".join(describe(s)) + "\n")
    errors = sum(1 for s in per_file if s.error)
    out.write(
        f"total: {len(per_file)} files ({errors} unreadable, {skipped} skipped), "
        f"{total.bytes} bytes\n"
    )
    out.write("\n".join(describe(total)) + "\n")


def _run_stats(files: list[str], show_progress: bool) -> list[FileStats]:
    if not show_progress:
        return [stats_file(path) for path in files]
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    sizes = [local_size(path) for path in files]
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn())
    results: list[FileStats] = []
    with Progress(*columns, TimeRemainingColumn(), console=Console(stderr=True)) as progress:
        task = progress.add_task(f"{len(files)} WAL files", total=sum(sizes) or None)
        done = 0
        for path, size in zip(files, sizes, strict=True):
            base = done

            def advance(offset: int, base: int = base) -> None:
                progress.update(task, completed=base + offset)

            stats = stats_file(path, advance)
            done += size or stats.bytes
            progress.update(task, completed=done)
            results.append(stats)
    return results


@wal.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document, sorted keys.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr (default: when stderr is a terminal and the input is large).",
)
@click.argument("paths", nargs=-1, required=True)
def stats(as_json: bool, progress: bool | None, paths: tuple[str, ...]) -> None:
    """Count entries, cells by type, markers, tables, regions and write times.

    PATHS are WAL files or directories, local or webhdfs:// URLs (folders walked recursively;
    procedure logs, master-store WALs and other non-WAL files are skipped and counted).
    """
    files, skipped = expand_paths(paths)
    if progress is None:
        large = sum(local_size(p) for p in files) > PROGRESS_BYTES or len(files) > PROGRESS_FILES
        progress = large and sys.stderr.isatty()
    per_file = _run_stats(files, progress)
    total = FileStats()
    for s in per_file:
        total.merge(s)
    if as_json:
        document = {
            "files": [s.to_dict() for s in per_file],
            "skipped": [{"path": p, "kind": k} for p, k in skipped],
            "total": {
                **total.to_dict(total=True),
                "files": len(per_file),
                "skipped": len(skipped),
                "unreadable": sum(1 for s in per_file if s.error),
            },
        }
        click.echo(json.dumps(document, indent=2, sort_keys=True))
    else:
        _stats_text(per_file, total, len(skipped), sys.stdout)
    failed = sum(1 for s in per_file if s.error)
    if failed:
        _fail(failed, len(per_file))


# --- select --------------------------------------------------------------------------------


def _duration(name: str) -> Callable[[click.Context, click.Parameter, str], int]:
    def convert(_ctx: click.Context, _param: click.Parameter, value: str) -> int:
        try:
            return parse_duration(value, name=name)
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from None

    return convert


@wal.command()
@click.option("--start", required=True, callback=_time_option("--start"),
              metavar="TIME", help="Window start." + TIME_HELP)
@click.option("--end", required=True, callback=_time_option("--end"),
              metavar="TIME", help="Window end (excl.)." + TIME_HELP)
@click.option(
    "--roll-period",
    default="1h",
    show_default=True,
    callback=_duration("--roll-period"),
    help="The source's hbase.regionserver.logroll.period.",
)
@click.option(
    "--margin",
    default="10m",
    show_default=True,
    callback=_duration("--margin"),
    help="Allowance for clock skew and roll delays.",
)
@click.option("--json", "as_json", is_flag=True, help="The manifest as JSON.")
@click.argument("paths", nargs=-1, required=True)
def select(
    start: int, end: int, roll_period: int, margin: int, as_json: bool, paths: tuple[str, ...]
) -> None:
    """Show which WAL files hold edits with write_time in [START, END), and why (dry run).

    Files created before the window are read, not dropped by name (HBASE-30377).
    """
    from hbase_migrate.wal.selection import FileRef, select_files

    check_window(start, end)  # the same check, and the same error, as ``dump``
    files, skipped = expand_paths(paths)
    refs = [FileRef(p, local_size(p) or None) for p in files]
    # Procedure logs and master-store WALs get a verdict by name; other non-WAL files found in
    # directories (no PWAL magic) are not WAL files at all.
    refs += [FileRef(p) for p, kind in skipped if kind != "unknown"]
    others = sum(1 for _, kind in skipped if kind == "unknown")
    if others:
        click.echo(f"note: {others} files that are not WAL files were skipped", err=True)
    try:
        manifest = select_files(refs, start, end, roll_period=roll_period, margin=margin)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    click.echo(manifest.to_json() if as_json else manifest.render_text(), nl=as_json)
    if manifest.attention:
        click.echo(
            f"note: {len(manifest.attention)} files could not be read; they are included and "
            "need attention",
            err=True,
        )
