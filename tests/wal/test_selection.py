"""The time-window selector (HBASE-30377): name stage, content stage, manifest."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from hbase_migrate.errors import ConfigError, WalCorruptError
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.selection import (
    ContentScan,
    FileRef,
    Manifest,
    scan_wal_contents,
    select_files,
)

SN = ServerName("rs1.example.com", 16020, 1_600_000_000_000)
HOUR = 3_600_000
MINUTE = 60_000
START = 1_700_000_000_000
END = START + HOUR
NOW = END + 10 * HOUR  # the window is closed unless a test says otherwise


def archived(created: int, **kwargs: object) -> str:
    return f"/hbase/oldWALs/{wal_file_name(SN, created, **kwargs)}"  # type: ignore[arg-type]


def live(created: int) -> str:
    return f"/hbase/WALs/{server_dir_name(SN)}/{wal_file_name(SN, created)}"


class FakeScanner:
    """Write times per path; records which paths were scanned and the stop bound."""

    def __init__(self, contents: dict[str, Sequence[int]], broken: dict[str, Exception]):
        self.contents = contents
        self.broken = broken
        self.scanned: list[str] = []
        self.stops: list[int] = []

    def __call__(self, path: str, start: int, end: int, stop_at: int) -> ContentScan:
        self.scanned.append(path)
        self.stops.append(stop_at)
        if path in self.broken:
            raise self.broken[path]
        times = list(self.contents.get(path, ()))
        inside = sum(1 for t in times if start <= t < end)
        first = min(times) if times else None
        last = max(times) if times else None
        return ContentScan(first, last, len(times), inside)


def select(
    paths: dict[str, Sequence[int]],
    broken: dict[str, Exception] | None = None,
    now: int = NOW,
    margin: int = 5 * MINUTE,
) -> tuple[Manifest, FakeScanner]:
    scanner = FakeScanner(paths, broken or {})
    manifest = select_files(
        list(paths) + list(broken or {}),
        START,
        END,
        roll_period=HOUR,
        margin=margin,
        scanner=scanner,
        now=now,
    )
    return manifest, scanner


def by_path(manifest: Manifest) -> dict[str, tuple[bool, str]]:
    return {item.path: (item.included, item.stage) for item in manifest.items}


def test_file_created_before_the_window_with_edits_inside_is_selected() -> None:
    # Created 40 minutes before the window, rolled 20 minutes into it: WALInputFormat drops it.
    early = archived(START - 40 * MINUTE)
    manifest, scanner = select({early: [START - 40 * MINUTE, START - MINUTE, START + 20 * MINUTE]})
    [item] = manifest.items
    assert (item.included, item.stage, item.entries_in_window) == (True, "content", 1)
    assert item.first_write_time == START - 40 * MINUTE
    assert item.last_write_time == START + 20 * MINUTE
    assert item.name_time == START - 40 * MINUTE
    assert scanner.scanned == [early]
    assert scanner.stops == [END + 5 * MINUTE]


def test_exclusions_by_name_with_reasons() -> None:
    too_old = archived(START - HOUR - 6 * MINUTE)  # before start - period - margin
    boundary = archived(START - HOUR - 5 * MINUTE)  # exactly at the bound: read it
    after = archived(END + 5 * MINUTE)  # at end + margin
    manifest, scanner = select({too_old: [START - HOUR], boundary: [START - 1], after: [END]})
    verdicts = by_path(manifest)
    assert verdicts[too_old] == (False, "name")
    assert verdicts[after] == (False, "name")
    assert verdicts[boundary] == (False, "content")
    assert scanner.scanned == [boundary]
    reasons = {item.path: item.reason for item in manifest.items}
    assert (
        "created 2023-11-14T21:07:20.000Z, so rolled by 2023-11-14T22:07:20.000Z at the latest"
        in reasons[too_old]
    )
    assert "roll period 1h" in reasons[too_old]
    assert "at or after the window end" in reasons[after]
    assert "no entry in the window (1 entries" in reasons[boundary]


def test_created_just_after_the_end_is_read_within_the_margin() -> None:
    # A roll can put an entry appended just before `end` into a file named just after it.
    rolled = archived(END + 2000)
    manifest, _ = select({rolled: [END - 1, END + 3000]})
    assert by_path(manifest)[rolled] == (True, "content")


def test_live_file_is_never_excluded_by_the_lower_bound() -> None:
    old_live = live(START - 5 * HOUR)
    splitting = f"/hbase/WALs/{server_dir_name(SN, splitting=True)}/" + wal_file_name(
        SN, START - 5 * HOUR
    )
    manifest, scanner = select({old_live: [START + MINUTE], splitting: [START - 4 * HOUR]})
    assert by_path(manifest) == {old_live: (True, "content"), splitting: (False, "content")}
    assert sorted(scanner.scanned) == sorted([old_live, splitting])


def test_live_file_is_kept_while_the_window_is_open() -> None:
    quiet = live(START - 5 * HOUR)
    archived_quiet = archived(START - 10 * MINUTE)
    manifest, _ = select({quiet: [START - MINUTE], archived_quiet: [START - MINUTE]}, now=START)
    verdicts = by_path(manifest)
    assert verdicts[quiet] == (True, "content")
    assert verdicts[archived_quiet] == (False, "content")
    reasons = {item.path: item.reason for item in manifest.items}
    assert reasons[quiet] == "live file and the window is still open: it may receive edits"


def test_names_without_timestamp_go_to_the_content_stage() -> None:
    edits = "/hbase/data/default/t1/0123abcd/recovered.edits/0000000000000000042"
    other = "/hbase/oldWALs/something-else"
    manifest, scanner = select({edits: [START + 1], other: []})
    assert by_path(manifest) == {edits: (True, "content"), other: (False, "content")}
    assert {item.name_time for item in manifest.items} == {None}
    assert sorted(scanner.scanned) == sorted([edits, other])
    assert [i.reason for i in manifest.items if i.path == other] == ["no entries"]


def test_procedure_and_master_store_files_are_left_out_unread() -> None:
    pv2 = "/hbase/oldWALs/pv2-00000000000000000007.log"
    store = "/hbase/oldWALs/host%2C16000%2C1.1700000000000$masterlocalwal$"
    manifest, scanner = select({pv2: [START], store: [START]})
    assert by_path(manifest) == {pv2: (False, "name"), store: (False, "name")}
    assert scanner.scanned == []
    assert "procedure log" in manifest.items[1].reason  # sorted: /hbase/oldWALs/h < /p


def test_the_meta_wal_is_left_out_unread_even_when_gone() -> None:
    """hbase:meta's WAL holds only hbase:meta's edits (a provider of its own, HBase's
    WALFactory.getWAL): one the cleaner deleted before it was read is no gap."""
    meta = archived(START + 10 * MINUTE, meta=True)
    gone = archived(START + 20 * MINUTE, meta=True)
    manifest, scanner = select({meta: [START + 11 * MINUTE]},
                               broken={gone: FileNotFoundError(gone)})
    assert by_path(manifest) == {meta: (False, "name"), gone: (False, "name")}
    assert scanner.scanned == []
    assert all("hbase:meta WAL" in item.reason and item.error is None
               for item in manifest.items)


def test_unreadable_files_are_included_and_flagged() -> None:
    corrupt = archived(START + MINUTE)
    gone = live(START)
    errors: dict[str, Exception] = {
        corrupt: WalCorruptError(corrupt, 1234, 7, "bad WALKey"),
        gone: FileNotFoundError(2, "No such file", gone),
    }
    manifest, _ = select({}, broken=errors)
    assert len(manifest.items) == 2
    for item in manifest.items:
        assert item.included
        assert item.error
        assert item.reason.startswith("needs attention")
    assert {i.path for i in manifest.attention} == {corrupt, gone}
    flagged = {i.path: i.error for i in manifest.items}
    assert "byte offset 1234" in (flagged[corrupt] or "")
    assert "No such file" in (flagged[gone] or "")


def test_window_and_settings_are_checked() -> None:
    with pytest.raises(ConfigError, match="empty time window"):
        select_files([], END, START, roll_period=HOUR, margin=0)
    with pytest.raises(ConfigError, match="margin"):
        select_files([], START, END, roll_period=HOUR, margin=-1)


def test_manifest_json_is_stable_and_round_trips() -> None:
    a = archived(START - 30 * MINUTE)
    b = archived(START - 3 * HOUR)
    c = archived(START + 10 * MINUTE, meta=True)
    contents = {c: [START + 11 * MINUTE], a: [START - 30 * MINUTE, START + 5], b: [START - HOUR]}
    first, _ = select(contents)
    second, _ = select(dict(reversed(contents.items())))
    assert first.to_json() == second.to_json()  # independent of input order
    data = json.loads(first.to_json())
    assert data["window"] == {"start": START, "end": END}
    assert (data["roll_period"], data["margin"]) == (HOUR, 5 * MINUTE)
    assert data["summary"] == {"files": 3, "included": 1, "excluded": 2, "attention": 0}
    assert [item["path"] for item in data["items"]] == sorted(contents)
    item_a = next(item for item in data["items"] if item["path"] == a)
    assert item_a == {
        "path": a,
        "included": True,
        "stage": "content",
        "reason": item_a["reason"],
        "name_time": START - 30 * MINUTE,
        "first_write_time": START - 30 * MINUTE,
        "last_write_time": START + 5,
        "entries_in_window": 1,
        "kind": "wal",
        "state": "archived",
        "size": None,
        "error": None,
    }
    assert list(json.loads(first.to_json(indent=None))) == sorted(data)
    assert Manifest.from_json(first.to_json()) == first
    with pytest.raises(ConfigError, match="manifest"):
        Manifest.from_json('{"version": 99}')
    with pytest.raises(ConfigError, match="manifest"):
        Manifest.from_json("not json")


def test_text_rendering() -> None:
    kept = archived(START - 30 * MINUTE)
    dropped = archived(START - 3 * HOUR)
    broken = archived(START)
    manifest, _ = select(
        {kept: [START + 1], dropped: [START - 3 * HOUR]},
        broken={broken: WalCorruptError(broken, 99, 0, "bad")},
    )
    text = manifest.render_text()
    lines = text.splitlines()
    assert lines[0] == (
        "WAL selection for [2023-11-14T22:13:20.000Z, 2023-11-14T23:13:20.000Z) "
        "(roll period 1h, margin 5m)"
    )
    assert f"+ {kept}" in lines
    assert f"- {dropped}" in lines
    assert f"! {broken}" in lines
    assert lines[-1] == "3 files: 2 included (1 need attention), 1 excluded"


def test_file_refs_carry_size() -> None:
    path = archived(START)
    manifest = select_files(
        [FileRef(path, size=4096)],
        START,
        END,
        roll_period=HOUR,
        margin=0,
        scanner=FakeScanner({path: [START]}, {}),
        now=NOW,
    )
    assert manifest.items[0].size == 4096


# -- the default scanner, over files written with the project's writer -------------------------


def _entries(times: Sequence[int]) -> list[tuple[WalKey, list[Cell]]]:
    return [
        (
            WalKey(b"0123456789abcdef0123456789abcdef", b"t1", seq, t),
            [Cell(b"r%d" % seq, b"f", b"q", t, CellType.PUT, b"v")],
        )
        for seq, t in enumerate(times, start=1)
    ]


def test_default_scanner_reads_write_times(tmp_path: Path) -> None:
    from hbase_migrate.wal.writer import write_wal

    path = tmp_path / wal_file_name(SN, START - 30 * MINUTE)
    times = [START - 30 * MINUTE, START - 1, START, START + 10, END - 1, END, END + 1]
    write_wal(path, _entries(times))
    assert scan_wal_contents(str(path), START, END, END + MINUTE) == ContentScan(
        START - 30 * MINUTE, END + 1, 7, 3, complete=True
    )
    # stops at the first write time at or past stop_at
    assert scan_wal_contents(str(path), START, END, END) == ContentScan(
        START - 30 * MINUTE, END, 6, 3, complete=False
    )


def test_default_scanner_end_to_end_with_an_empty_and_a_corrupt_file(tmp_path: Path) -> None:
    from hbase_migrate.wal.reader import read_entries
    from hbase_migrate.wal.writer import write_wal

    old = tmp_path / "oldWALs"
    old.mkdir()
    early = old / wal_file_name(SN, START - 40 * MINUTE)
    write_wal(early, _entries([START - 40 * MINUTE, START + 20 * MINUTE]))
    before = old / wal_file_name(SN, START - 50 * MINUTE)
    write_wal(before, _entries([START - 50 * MINUTE, START - 10 * MINUTE]))
    empty = old / wal_file_name(SN, START + 1)
    empty.write_bytes(b"")
    corrupt = old / wal_file_name(SN, START + 2)
    write_wal(corrupt, _entries([START + 2, START + 3]))
    second = list(read_entries(str(corrupt)))[1].offset
    data = bytearray(corrupt.read_bytes())
    data[second : second + 4] = b"\x03\xff\xff\xff"  # a 3-byte WALKey that is no protobuf
    corrupt.write_bytes(bytes(data))

    paths = [str(p) for p in (early, before, empty, corrupt)]
    manifest = select_files(paths, START, END, roll_period=HOUR, margin=MINUTE, now=NOW)
    verdicts = {item.path: item for item in manifest.items}
    assert verdicts[str(early)].included
    assert verdicts[str(early)].entries_in_window == 1
    assert not verdicts[str(before)].included
    assert not verdicts[str(empty)].included
    assert verdicts[str(empty)].reason == "no entries"
    flagged = verdicts[str(corrupt)]
    assert flagged.included
    assert flagged.error is not None
    assert f"byte offset {second}" in flagged.error
    assert flagged.reason.startswith("needs attention")
