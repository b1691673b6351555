"""A length prefix damaged mid-file so that it points past the end is corruption, not a
cut-off tail: the reader names the entry's offset instead of ending quietly, `wal dump`
exits non-zero, and replay fails the file. A genuine cut-off stays a normal end."""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import (
    ALL_OPTIONS,
    OPTION_IDS,
    binary_pairs,
    options_st,
    pairs_of,
    pairs_st,
    read_all,
    simple_pairs,
    wal_bytes,
    widened_length_wal,
)
from hypothesis import HealthCheck, given, settings

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.commands.wal import wal
from hbase_migrate.errors import WalCorruptError
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.wal.model import Cell, Entry, WalKey
from hbase_migrate.wal.protobuf import bytes_field, decode_varint, encode_varint, varint_field
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

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


# --- every length prefix, binary data; reading stays bounded; long keys cut off ----------


def _past_the_end(data: bytes, entry: Entry, model: str, rng: random.Random) -> bytes | None:
    """``data`` with the length prefix of ``entry`` damaged so that it points past the end
    (None when this damage does not): ``overwrite`` writes a longer varint over the prefix
    and the key's first bytes, ``widen`` replaces the prefix alone by a longer varint (the
    key is intact after it), ``high-bits`` sets the high bit of the prefix byte and the
    next ones, as a burst of flipped bits would."""
    out = bytearray(data)
    start, rest = entry.offset, len(data) - entry.offset
    longer = encode_varint(rng.randint(rest + 1, rest * 50))
    if model == "overwrite":
        out[start : start + len(longer)] = longer
    elif model == "widen":
        out[start : decode_varint(data, start)[1]] = longer
    else:
        for i in range(start, start + rng.randint(1, 3)):
            out[i] |= 0x80
    declared, key_start = decode_varint(bytes(out), start)
    return bytes(out) if key_start + declared > len(out) else None


@pytest.mark.parametrize("options", ALL_OPTIONS, ids=OPTION_IDS)
def test_every_length_prefix_pointing_past_the_end_is_corruption(options: WalOptions) -> None:
    rng = random.Random(0)
    data = wal_bytes(binary_pairs(4, 120), options, trailer=False)
    entries, _ = read_all(data)
    checked = 0
    for entry in entries[:-1]:
        for model in ("overwrite", "widen", "high-bits"):
            damaged_data = _past_the_end(data, entry, model, rng)
            if damaged_data is None:
                continue
            reader = WalReader(io.BytesIO(damaged_data), name="bin.wal")
            read = []
            with pytest.raises(WalCorruptError) as failure:
                read.extend(reader)
            assert len(read) == entry.index, (model, entry.index)
            assert (failure.value.offset, failure.value.entry_index) == (entry.offset, entry.index)
            checked += 1
    assert checked > 2 * len(entries)


class _Counting(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.read_bytes += len(chunk)
        return chunk


def test_a_damaged_length_is_told_without_reading_the_rest_of_the_file() -> None:
    data = bytearray(wal_bytes(simple_pairs(12_000, cells_per_entry=6), trailer=False))
    entries, _ = read_all(bytes(data))
    entry = entries[100]
    declared = encode_varint(48 << 20)  # 48 MiB, far past the end of this ~2 MiB file
    data[entry.offset : entry.offset + len(declared)] = declared
    stream = _Counting(bytes(data))
    with pytest.raises(WalCorruptError, match="damaged length") as failure:
        list(WalReader(stream))
    assert failure.value.offset == entry.offset
    assert stream.read_bytes < 1_200_000 < len(data)


def test_a_cut_off_key_longer_than_64_mib_is_a_clean_end() -> None:
    """HBase reads a WALKey of any length that fits a Java int; a writer cut off inside a
    key with a 70 MiB attribute leaves a normal cut-off tail, not corruption."""
    value_len = 70 << 20
    attribute_head = bytes_field(1, b"blob") + b"\x12" + encode_varint(value_len)
    key_head = (
        bytes_field(1, b"a" * 32)
        + bytes_field(2, b"t1")
        + varint_field(3, 7)
        + varint_field(4, 1_700_000_000_000)
        + varint_field(7, 1)
        + b"\x62"
        + encode_varint(len(attribute_head) + value_len)
        + attribute_head
    )
    key_len = len(key_head) + value_len
    head = wal_bytes(simple_pairs(3), trailer=False)
    entries, reader = read_all(head + encode_varint(key_len) + key_head + b"x" * 5000)
    assert len(entries) == 3
    assert (reader.end_reason, reader.end_offset) == ("truncated", len(head))


def test_a_widened_length_before_an_intact_key_is_corruption(tmp_path: Path) -> None:
    """The key after the damaged prefix is whole; what follows it, the first cell's
    varints (key length 18, value length 400000), reads as a WALKey field 2 of 400000
    bytes, past the end, but field 2 cannot follow the key's later fields."""
    data, offset, index = widened_length_wal()
    reader = WalReader(io.BytesIO(data), name="gz.wal")
    read = []
    with pytest.raises(WalCorruptError, match="out of order") as failure:
        read.extend(reader)
    assert len(read) == index
    assert (failure.value.offset, failure.value.entry_index) == (offset, index)
    path = tmp_path / "gz.wal"
    path.write_bytes(data)
    only_other = ReplaySpec(ReplayFilter.build(["other=other"], {}))
    with pytest.raises(WalCorruptError, match=f"byte offset {offset} \\(entry #{index}\\)"):
        replay_file(path, only_other, _NoWrites())  # type: ignore[arg-type]


class _NoWrites:
    """A target for WALs whose tables the filter leaves out: nothing is ever written."""

    def describe(self, table: str) -> TableDescriptor:
        return TableDescriptor(table, (FamilyDescriptor(b"f"),))

    def apply(self, table: str, mutations: object) -> object:
        raise AssertionError("no mutation is sent")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs_st.filter(bool), options_st)
def test_any_wal_cut_inside_its_last_entry_is_a_clean_end(
    pairs: list[tuple[WalKey, tuple[Cell, ...]]], options: WalOptions
) -> None:
    """The stricter reading of a cut-off tail still takes every prefix of what a writer
    writes (any key shape: nonces, cluster ids, attributes, empty names)."""
    data = wal_bytes(pairs, options, trailer=False)
    entries, _ = read_all(data)
    last = entries[-1]
    for cut in range(last.offset + 1, last.offset + last.size):
        read, reader = read_all(data[:cut])
        assert len(read) == len(pairs) - 1
        assert (reader.end_reason, reader.end_offset) == ("truncated", last.offset), cut
