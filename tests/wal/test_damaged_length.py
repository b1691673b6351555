"""A length prefix damaged mid-file so that it points past the end is corruption, not a
cut-off tail: the reader names the entry's offset instead of ending quietly, `wal dump`
exits non-zero, and replay fails the file. A genuine cut-off stays a normal end."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ALL_OPTIONS, OPTION_IDS, pairs_of, read_all, simple_pairs, wal_bytes

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.commands.wal import wal
from hbase_migrate.errors import WalCorruptError
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions

ENTRIES, DAMAGED = 624, 300


def damaged(options: WalOptions) -> tuple[bytes, int, int]:
    """A live WAL (no trailer) of 624 entries whose entry #300 declares a WALKey of about
    256 KiB: past the end of the file. Returns the bytes, that entry's offset, and the
    number of bytes after it."""
    data = bytearray(wal_bytes(simple_pairs(ENTRIES, tags=True), options, trailer=False))
    with WalReader(io.BytesIO(bytes(data))) as reader:
        offset = next(e.offset for e in reader if e.index == DAMAGED)
    data[offset : offset + 3] = b"\xff\xff\x0f"  # varint 262143
    assert len(data) - offset < 262_143
    return bytes(data), offset, len(data) - offset


@pytest.mark.parametrize("options", ALL_OPTIONS[:5], ids=OPTION_IDS[:5])
def test_a_length_pointing_past_the_end_mid_file_is_corruption(options: WalOptions) -> None:
    data, offset, _ = damaged(options)
    reader = WalReader(io.BytesIO(data), name="live.wal")
    read = []
    with pytest.raises(WalCorruptError) as failure:
        read.extend(reader)
    assert len(read) == DAMAGED  # everything before it was read
    assert failure.value.offset == offset and failure.value.entry_index == DAMAGED
    assert "damaged length, not a cut-off tail" in str(failure.value)


@pytest.mark.parametrize("options", ALL_OPTIONS[:5], ids=OPTION_IDS[:5])
def test_a_file_cut_inside_that_entry_is_still_a_clean_end(options: WalOptions) -> None:
    pairs = simple_pairs(ENTRIES, tags=True)
    data = wal_bytes(pairs, options, trailer=False)
    full, _ = read_all(data)
    entry = full[DAMAGED]
    for cut in range(entry.offset + 1, entry.offset + entry.size):
        entries, reader = read_all(data[:cut])
        assert pairs_of(entries) == pairs[:DAMAGED]
        assert (reader.end_reason, reader.end_offset) == ("truncated", entry.offset)


def test_wal_dump_fails_naming_the_offset_and_replay_fails_the_file(tmp_path: Path) -> None:
    data, offset, _ = damaged(WalOptions(compression=True))
    path = tmp_path / "live.wal"
    path.write_bytes(data)
    result = CliRunner().invoke(wal, ["dump", "--json", str(path)])
    assert result.exit_code != 0
    assert len(result.stdout.splitlines()) == DAMAGED
    assert f"byte offset {offset} (entry #{DAMAGED})" in result.stderr

    class Target:  # the WAL's tables are filtered out: nothing is ever written
        def describe(self, table: str) -> TableDescriptor:
            return TableDescriptor(table, (FamilyDescriptor(b"f"),))

        def apply(self, table: str, mutations: object) -> object:
            raise AssertionError("no mutation is sent")

    only_other = ReplaySpec(ReplayFilter.build(["other=other"], {}))
    with pytest.raises(WalCorruptError, match=f"byte offset {offset}"):
        replay_file(path, only_other, Target())  # type: ignore[arg-type]
