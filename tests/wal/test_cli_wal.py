"""``hbase-migrate wal dump|stats|select`` over files written with the project's writer.

Expectations are derived from the cells written (and hand-written toStringBinary strings),
never from the dump itself.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hbase_migrate.commands.wal import wal
from hbase_migrate.wal.markers import (
    BulkLoadDescriptor,
    FlushDescriptor,
    StoreDescriptor,
    TableName,
    bulk_load_marker,
    flush_marker,
)
from hbase_migrate.wal.model import Cell, CellType, Tag, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.writer import WalOptions, WalWriter

REGION_A = b"0123456789abcdef0123456789abcdef"
REGION_B = b"fedcba9876543210fedcba9876543210"
T0 = 1_700_000_000_000
SN = ServerName("rs1", 16020, 1_699_000_000_000)

Pair = tuple[WalKey, Sequence[Cell]]

ENTRIES: list[Pair] = [
    (
        WalKey(REGION_A, b"t1", 11, T0),
        [
            Cell(
                b"r\x00\xff", b"cf", b"q\\1", T0 - 5, CellType.PUT, b"v\x01", (Tag(8, b"\x00\x10"),)
            ),
            Cell(b"row2", b"cf", b"q", T0 - 4, CellType.DELETE, b""),
        ],
    ),
    (
        WalKey(REGION_B, b"ns:t2", 12, T0 + 1000),
        [
            Cell(b"row2", b"cf", b"", T0 - 3, CellType.DELETE_FAMILY_VERSION),
            Cell(b"row3", b"cf", b"q", T0 - 2, CellType.DELETE_COLUMN),
            Cell(b"row3", b"cf", b"", T0 - 1, CellType.DELETE_FAMILY),
        ],
    ),
    (
        WalKey(REGION_A, b"t1", 13, T0 + 2000),
        [flush_marker(FlushDescriptor(1, b"t1", REGION_A, 12), T0 + 2000)],
    ),
    (WalKey(REGION_A, b"t1", 14, T0 + 3000), [Cell(b"row2", b"cf", b"q", T0 + 3000, 4, b"x")]),
    (
        WalKey(REGION_B, b"ns:t2", 15, T0 + 4000),
        [
            bulk_load_marker(
                BulkLoadDescriptor(
                    TableName(b"ns", b"t2"), REGION_B, (StoreDescriptor(b"cf", "cf", ("h1",)),), 15
                ),
                T0 + 4000,
                start_key=b"m",
            )
        ],
    ),
]

# What HBase's toStringBinary prints for the first entry's fields, written by hand.
FIRST_CELL_JSON = {
    "row": "r\\x00\\xFF",
    "family": "cf",
    "qualifier": "q\\x5C1",
    "timestamp": T0 - 5,
    "type": "Put",
    "value": "v\\x01",
    "tags": [{"type": 8, "value": "\\x00\\x10"}],
}


def write(
    path: Path, pairs: Sequence[Pair], options: WalOptions | None = None, *, trailer: bool = True
) -> list[tuple[int, int]]:
    """Write a WAL; return each entry's (offset, size) as the writer reports them."""
    with path.open("wb") as f:
        writer = WalWriter(f, options or WalOptions())
        spans = [writer.append(key, cells) for key, cells in pairs]
        writer.close(trailer=trailer)
    return spans


def run(*args: str) -> Result:
    return CliRunner().invoke(wal, list(args), catch_exceptions=False)


def lines(result: Result) -> list[dict[str, Any]]:
    return [json.loads(line) for line in result.stdout.splitlines()]


@pytest.fixture
def wal_file(tmp_path: Path) -> tuple[Path, list[tuple[int, int]]]:
    path = tmp_path / wal_file_name(SN, T0)
    return path, write(path, ENTRIES)


# --- dump --json -------------------------------------------------------------------------------


def test_dump_json_contract(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    path, spans = wal_file
    given = str(path)
    result = run("dump", "--json", "--values", given)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    out = lines(result)
    assert len(out) == len(ENTRIES)
    for obj, (key, cells), (offset, size) in zip(out, ENTRIES, spans, strict=True):
        assert obj["file"] == given
        assert (obj["offset"], obj["size"]) == (offset, size)
        assert obj["sequence"] == key.sequence
        assert obj["region"] == key.encoded_region_name.decode()
        assert obj["table"] == key.table_name.decode()
        assert obj["write_time"] == key.write_time
        assert len(obj["cells"]) == len(cells)
    assert [o["index"] for o in out] == [0, 1, 2, 3, 4]
    assert out[0]["cells"][0] == FIRST_CELL_JSON
    assert out[0]["cells"][1] == {
        "row": "row2", "family": "cf", "qualifier": "q", "timestamp": T0 - 4,
        "type": "Delete", "value": "",
    }  # fmt: skip
    types = [c["type"] for o in out for c in o["cells"]]
    assert types == ["Put", "Delete", "DeleteFamilyVersion", "DeleteColumn", "DeleteFamily",
                     "Put", "Put", "Put"]  # fmt: skip


def test_dump_json_markers(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    out = lines(run("dump", "--json", str(wal_file[0])))
    flush = out[2]["cells"][0]
    assert (flush["row"], flush["family"], flush["qualifier"]) == (
        "\\x00", "METAFAMILY", "HBASE::FLUSH",
    )  # fmt: skip
    assert flush["marker"]["kind"] == "FLUSH"
    assert flush["marker"]["action_name"] == "COMMIT_FLUSH"
    assert flush["marker"]["flush_sequence_number"] == 12
    assert flush["marker"]["encoded_region_name"] == REGION_A.decode()
    bulk = out[4]["cells"][0]
    assert bulk["row"] == "m"
    assert bulk["marker"]["kind"] == "BULK_LOAD"
    assert bulk["marker"]["table_name"] == {"namespace": "ns", "qualifier": "t2"}
    assert bulk["marker"]["stores"][0]["store_file"] == ["h1"]
    assert "marker" not in out[0]["cells"][0]


def test_dump_json_without_values_or_tags(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    out = lines(run("dump", "--json", str(wal_file[0])))
    cells = [c for o in out for c in o["cells"]]
    assert all("value" not in c for c in cells)
    assert [("tags" in c) for c in cells] == [True] + [False] * 7
    assert out[0]["cells"][0] == {k: v for k, v in FIRST_CELL_JSON.items() if k != "value"}


def test_dump_compressed_file_gives_the_same_entries(tmp_path: Path) -> None:
    plain, packed = tmp_path / "plain", tmp_path / "recovered.edits" / "0000000000000000015"
    packed.parent.mkdir()
    write(plain, ENTRIES)
    spans = write(packed, ENTRIES, WalOptions(compression=True, value_compression="GZ",
                                               recovered_edits=True))  # fmt: skip
    a = lines(run("dump", "--json", "--values", str(plain)))
    b = lines(run("dump", "--json", "--values", str(packed)))
    assert [o["offset"] for o in b] == [offset for offset, _ in spans]
    strip = ("file", "offset", "size")
    assert [{k: v for k, v in o.items() if k not in strip} for o in a] == [
        {k: v for k, v in o.items() if k not in strip} for o in b
    ]


# --- filters ---------------------------------------------------------------------------------


def sequences(*args: str) -> list[int]:
    result = run("dump", "--json", *args)
    assert result.exit_code == 0, result.output
    return [o["sequence"] for o in lines(result)]


def test_dump_filters(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    f = str(wal_file[0])
    assert sequences("--table", "t1", f) == [11, 13, 14]
    assert sequences("--table", "default:t1", f) == [11, 13, 14]
    assert sequences("--table", "ns:t2", f) == [12, 15]
    assert sequences("--table", "t1,ns:t2", f) == [11, 12, 13, 14, 15]
    assert sequences("--table", "t1", "--table", "ns:t2", f) == [11, 12, 13, 14, 15]
    assert sequences("--region", REGION_B.decode(), f) == [12, 15]
    assert sequences("--sequence", "13", f) == [13]
    assert sequences("--start", str(T0 + 1000), "--end", str(T0 + 3000), f) == [12, 13]
    assert sequences("--start", "2023-11-14T22:13:23Z", f) == [14, 15]
    assert sequences("--end", "2023-11-14T22:13:20.001Z", f) == [11]


def test_dump_row_filter_keeps_matching_cells_only(
    wal_file: tuple[Path, list[tuple[int, int]]],
) -> None:
    f = str(wal_file[0])
    out = lines(run("dump", "--json", "--row", "row2", f))
    assert [o["sequence"] for o in out] == [11, 12, 14]
    assert [[c["row"] for c in o["cells"]] for o in out] == [["row2"], ["row2"], ["row2"]]
    out = lines(run("dump", "--json", "--row", "r\\x00\\xFF", f))
    assert [(o["sequence"], len(o["cells"])) for o in out] == [(11, 1)]
    out = lines(run("dump", "--json", "--row-prefix", "row", f))
    assert [(o["sequence"], len(o["cells"])) for o in out] == [(11, 1), (12, 3), (14, 1)]


def test_dump_rejects_a_bad_row_escape(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    result = CliRunner().invoke(wal, ["dump", "--row", "r\\xff", str(wal_file[0])])
    assert result.exit_code == 2
    assert "--row" in result.stderr and "uppercase" in result.stderr


def test_dump_rejects_a_bad_time(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    result = CliRunner().invoke(wal, ["dump", "--start", "soon", str(wal_file[0])])
    assert result.exit_code == 2
    assert "'soon'" in result.stderr


# --- text form -----------------------------------------------------------------------------


def test_dump_text(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    path, spans = wal_file
    result = run("dump", "--values", "--sequence", "11", str(path))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"File: {path}",
        "Writer Classes: ProtobufLogWriter",
        "Cell Codec Class: org.apache.hadoop.hbase.regionserver.wal.WALCellCodec",
        f"Sequence=11, table=t1, region={REGION_A.decode()}, at write timestamp="
        f"2023-11-14T22:13:20.000Z ({T0}), offset={spans[0][0]}, size={spans[0][1]}",
        f"row=r\\x00\\xFF, column=cf:q\\x5C1, timestamp={T0 - 5}, type=Put",
        "    tag: [8:\\x00\\x10]",
        "    value: v\\x01",
        f"row=row2, column=cf:q, timestamp={T0 - 4}, type=Delete",
        "    value: ",
    ]


# --- ends of files -------------------------------------------------------------------------


def test_cut_off_tail_is_a_normal_end_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "live"
    spans = write(path, ENTRIES, trailer=False)
    last_offset = spans[-1][0]
    path.write_bytes(path.read_bytes()[: last_offset + 7])  # inside the last entry
    result = run("dump", "--json", str(path))
    assert result.exit_code == 0
    assert [o["sequence"] for o in lines(result)] == [11, 12, 13, 14]
    assert result.stderr.startswith(f"note: {path}: edits end at byte offset {last_offset} ")
    assert "truncated" in result.stderr
    assert "7 bytes after it" in result.stderr


def test_partial_trailer_is_a_normal_end(tmp_path: Path) -> None:
    path = tmp_path / "closing"
    spans = write(path, ENTRIES[:2])
    end = spans[-1][0] + spans[-1][1]
    path.write_bytes(path.read_bytes()[: end + 5])  # 00 00 00 00 4C of the trailer
    result = run("dump", "--json", str(path))
    assert result.exit_code == 0
    assert len(lines(result)) == 2
    assert f"edits end at byte offset {end} (partial_trailer" in result.stderr


def corrupt_copy(tmp_path: Path, name: str = "corrupt") -> tuple[Path, int]:
    """A WAL whose fourth entry's key is garbage; returns the path and that entry's offset."""
    path = tmp_path / name
    spans = write(path, ENTRIES)
    data = bytearray(path.read_bytes())
    bad = spans[3][0]
    data[bad : bad + 4] = b"\x03\xff\xff\xff"
    path.write_bytes(bytes(data))
    return path, bad


def test_corrupt_file_prints_what_was_read_then_fails(tmp_path: Path) -> None:
    bad_path, bad_offset = corrupt_copy(tmp_path)
    good = tmp_path / "good"
    write(good, ENTRIES[:1])
    result = run("dump", "--json", str(bad_path), str(good))
    assert result.exit_code == 2
    out = lines(result)
    assert [(o["file"], o["sequence"]) for o in out] == [
        (str(bad_path), 11), (str(bad_path), 12), (str(bad_path), 13), (str(good), 11),
    ]  # fmt: skip
    errors = result.stderr.splitlines()
    assert errors[0].startswith(f"hbase-migrate: error: {bad_path}: corrupt WAL at byte offset ")
    assert f"byte offset {bad_offset} (entry #3)" in errors[0]
    assert errors[-1] == "hbase-migrate: 1 of 2 files could not be read"


def test_missing_empty_and_legacy_files(tmp_path: Path, legacy_hlog_samples: list[Path]) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    legacy = str(legacy_hlog_samples[0])
    result = run("dump", str(tmp_path / "nope"), str(empty), legacy)
    assert result.exit_code == 2
    err = result.stderr
    assert f"hbase-migrate: error: {tmp_path / 'nope'}: no such file" in err
    assert f"note: {empty}: " in err and "no entries" in err
    assert f"hbase-migrate: error: {legacy}: " in err and "SequenceFile" in err
    assert "2 of 3 files could not be read" in err


def test_encrypted_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "secret"
    with path.open("wb") as f:
        WalWriter(f, WalOptions(encryption_key=b"k" * 16)).close()
    result = run("dump", str(path))
    assert result.exit_code == 2
    assert f"hbase-migrate: error: {path}: " in result.stderr
    assert "encrypt" in result.stderr.lower()


def test_console_script_exit_code_and_registration(
    wal_file: tuple[Path, list[tuple[int, int]]], tmp_path: Path
) -> None:
    bad, offset = corrupt_copy(tmp_path)
    script = "from hbase_migrate.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", script, "wal", "dump", "--json", str(bad)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert len(proc.stdout.splitlines()) == 3
    assert f"byte offset {offset}" in proc.stderr


# --- stats ---------------------------------------------------------------------------------


def expected_counts(pairs: Sequence[Pair]) -> dict[str, Any]:
    """Counts computed straight from what was written."""
    names = {4: "Put", 8: "Delete", 10: "DeleteFamilyVersion", 12: "DeleteColumn",
             14: "DeleteFamily"}  # fmt: skip
    data = [(key, c) for key, cells in pairs for c in cells if c.family != b"METAFAMILY"]
    markers = [c for _, cells in pairs for c in cells if c.family == b"METAFAMILY"]
    return {
        "entries": len(pairs),
        "cells": len(data),
        "cells_by_type": dict(Counter(names[c.type] for _, c in data)),
        "markers": dict(Counter(c.qualifier.decode().removeprefix("HBASE::") for c in markers)),
        "tables": dict(Counter(key.table_name.decode() for key, _ in data)),
        "regions": len({key.encoded_region_name for key, _ in pairs}),
        "first_write_time": min(key.write_time for key, _ in pairs),
        "last_write_time": max(key.write_time for key, _ in pairs),
    }


def test_stats_json_counts(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    path, _ = wal_file
    result = run("stats", "--json", str(path))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    [one] = doc["files"]
    expected = expected_counts(ENTRIES)
    assert expected["cells_by_type"] == {"Put": 2, "Delete": 1, "DeleteFamilyVersion": 1,
                                         "DeleteColumn": 1, "DeleteFamily": 1}  # fmt: skip
    assert expected["markers"] == {"FLUSH": 1, "BULK_LOAD": 1}
    for key, value in expected.items():
        assert one[key] == value, key
    assert one["bytes"] == path.stat().st_size
    assert (one["end_reason"], one["end_offset"]) == ("trailer", path.stat().st_size - 8)
    assert (one["kind"], one["error"], one["path"]) == ("wal", None, str(path))
    assert result.stdout == json.dumps(doc, indent=2, sort_keys=True) + "\n"


def test_stats_directory_walk_and_totals(tmp_path: Path) -> None:
    root = tmp_path / "hbase"
    live = root / "WALs" / server_dir_name(SN)
    old = root / "oldWALs"
    live.mkdir(parents=True)
    old.mkdir()
    first, second = ENTRIES[:2], ENTRIES[2:]
    write(old / wal_file_name(SN, T0), first)
    write(live / wal_file_name(SN, T0 + 2000), second, trailer=False)
    (old / "pv2-00000000000000000001.log").write_bytes(b"procedure")
    (old / "host%2C16000%2C1.1700000000000$masterlocalwal$").write_bytes(b"PWAL")
    (old / "notes.txt").write_text("hello")
    result = run("stats", "--json", str(root))
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [f["path"] for f in doc["files"]] == [
        str(live / wal_file_name(SN, T0 + 2000)), str(old / wal_file_name(SN, T0)),
    ]  # fmt: skip
    assert sorted((Path(s["path"]).name, s["kind"]) for s in doc["skipped"]) == [
        ("host%2C16000%2C1.1700000000000$masterlocalwal$", "master_store"),
        ("notes.txt", "unknown"),
        ("pv2-00000000000000000001.log", "procedure"),
    ]
    total = doc["total"]
    for key, value in expected_counts(ENTRIES).items():
        assert total[key] == value, key
    assert (total["files"], total["skipped"], total["unreadable"]) == (2, 3, 0)
    assert doc["files"][0]["end_reason"] == "eof"


def test_stats_walks_a_webhdfs_folder_as_a_local_one(tmp_path: Path) -> None:
    """A ``webhdfs://`` folder URL is walked as the same folder given as a path is: the same
    files (as URLs) and counts, the same files skipped (it was "Is a directory")."""
    from minihbase.webhdfs import WebHdfsServer

    root = tmp_path / "hbase"
    live, old = root / "WALs" / server_dir_name(SN), root / "oldWALs"
    live.mkdir(parents=True)
    old.mkdir()
    write(old / wal_file_name(SN, T0), ENTRIES[:2])
    write(live / wal_file_name(SN, T0 + 2000), ENTRIES[2:], trailer=False)
    (old / "pv2-00000000000000000001.log").write_bytes(b"procedure")
    (old / "notes.txt").write_text("hello")
    local = json.loads(run("stats", "--json", str(root)).stdout)
    with WebHdfsServer(root) as server:
        url = f"webhdfs://127.0.0.1:{server.port}/hbase"
        result = run("stats", "--json", url)
        missing = run("stats", "--json", f"{url}/nowhere")
    assert result.exit_code == 0, result.stderr
    remote = json.loads(result.stdout)
    as_url = {str(p): f"{url}{p.removeprefix(str(root))}"
              for p in [f["path"] for f in local["files"]] +
              [s["path"] for s in local["skipped"]]}
    assert [f["path"] for f in remote["files"]] == [as_url[f["path"]] for f in local["files"]]
    assert remote["skipped"] == [{**s, "path": as_url[s["path"]]} for s in local["skipped"]]
    assert remote["total"] == local["total"]
    assert missing.exit_code != 0 and "nowhere" in missing.stderr, missing.stderr


def test_stats_reports_unreadable_files(tmp_path: Path) -> None:
    bad, offset = corrupt_copy(tmp_path)
    result = run("stats", "--json", str(bad))
    assert result.exit_code == 2
    [one] = json.loads(result.stdout)["files"]
    assert one["entries"] == 3  # what was read before the corrupt entry
    assert (one["end_reason"], one["end_offset"]) == ("corrupt", offset)
    assert f"byte offset {offset}" in one["error"]
    assert f"byte offset {offset}" in result.stderr


def test_stats_text_and_progress(wal_file: tuple[Path, list[tuple[int, int]]]) -> None:
    path, _ = wal_file
    result = run("stats", "--progress", str(path))
    assert result.exit_code == 0
    text = result.stdout
    assert f"{path}\n  wal, {path.stat().st_size} bytes, end trailer at byte offset" in text
    assert "cells 6 (Delete 1, DeleteColumn 1, DeleteFamily 1, DeleteFamilyVersion 1, Put 2)" in (
        text
    )
    assert "markers: BULK_LOAD 1, FLUSH 1" in text
    assert "tables: ns:t2 3, t1 3; regions 2" in text
    assert "total: 1 files (0 unreadable, 0 skipped)" in text


# --- select --------------------------------------------------------------------------------


def test_select_reads_files_created_before_the_window(tmp_path: Path) -> None:
    old = tmp_path / "oldWALs"
    old.mkdir()
    hour = 3_600_000
    early = old / wal_file_name(SN, T0 - 50 * 60_000)
    write(early, [(WalKey(REGION_A, b"t1", 1, T0 - 50 * 60_000), []),
                  (WalKey(REGION_A, b"t1", 2, T0 + 60_000), [])])  # fmt: skip
    ancient = old / wal_file_name(SN, T0 - 3 * hour)
    write(ancient, [(WalKey(REGION_A, b"t1", 1, T0 - 3 * hour), [])])
    result = run("select", "--start", str(T0), "--end", str(T0 + hour), "--json", str(old))
    assert result.exit_code == 0, result.stderr
    items = {Path(i["path"]).name: i for i in json.loads(result.stdout)["items"]}
    assert items[early.name]["included"] is True
    assert items[early.name]["entries_in_window"] == 1
    assert (items[ancient.name]["included"], items[ancient.name]["stage"]) == (False, "name")


@pytest.mark.parametrize(("start", "end"), [("2023-11-14T22:14:20Z", "2023-11-14T22:13:20Z"),
                                            (str(T0), str(T0))])
def test_dump_and_select_refuse_an_empty_window_alike(
        wal_file: tuple[Path, list[tuple[int, int]]], start: str, end: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from hbase_migrate.cli import main

    path = wal_file[0]
    lines = []
    for command in ("dump", "select"):
        with pytest.raises(SystemExit) as exit_info:
            main(["wal", command, "--start", start, "--end", end, str(path)])
        out, err = capsys.readouterr()
        assert (exit_info.value.code, out) == (2, ""), err
        lines.append(err)
    shown_start = "2023-11-14T22:14:20.000Z" if start != end else "2023-11-14T22:13:20.000Z"
    expected = (f"hbase-migrate: error: empty time window: start {shown_start} is not before "
                "end 2023-11-14T22:13:20.000Z\n")
    assert lines == [expected, expected]


def test_dump_fails_on_a_length_prefix_damaged_to_point_past_the_end(tmp_path: Path) -> None:
    from conftest import widened_length_wal

    data, offset, index = widened_length_wal()
    path = tmp_path / "gz.wal"
    path.write_bytes(data)
    result = CliRunner().invoke(wal, ["dump", "--json", str(path)])
    assert result.exit_code == 2, result.output
    assert len(result.stdout.splitlines()) == index
    assert f"corrupt WAL at byte offset {offset} (entry #{index})" in result.stderr
    assert "damaged length, not a cut-off tail" in result.stderr


def test_stats_says_why_a_files_kind_is_unknown(
        wal_file: tuple[Path, list[tuple[int, int]]], tmp_path: Path) -> None:
    """A WAL under a name HBase never gives (a copy, renamed): read, and the text says what
    'unknown' means instead of the bare word."""
    path, _ = wal_file
    renamed = tmp_path / "copy-of-a-wal.bin"
    renamed.write_bytes(path.read_bytes())
    result = run("stats", str(renamed))
    assert result.exit_code == 0, result.stderr
    second = result.stdout.splitlines()[1]
    assert second.startswith("  kind unknown (the name is not an HBase WAL name"), second
    assert "server and name time unknown" in second
    assert f"{renamed.stat().st_size} bytes" in second
