"""Resuming at a saved offset gives the same remaining entries as a full read."""

from __future__ import annotations

import io

import pytest
from conftest import ALL_OPTIONS, OPTION_IDS, read_all, simple_pairs, wal_bytes

from hbase_migrate.errors import WalCorruptError
from hbase_migrate.wal.reader import WalReader, read_entries
from hbase_migrate.wal.writer import WalOptions

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops


@pytest.mark.parametrize("trailer", [True, False], ids=["trailer", "no-trailer"])
@pytest.mark.parametrize("options", ALL_OPTIONS, ids=OPTION_IDS)
def test_resume_at_every_boundary(options: WalOptions, trailer: bool) -> None:
    data = wal_bytes(simple_pairs(15, tags=True), options, trailer=trailer)
    full, reader = read_all(data, recovered_edits=options.recovered_edits)
    starts = [e.offset for e in full] + [reader.end_offset]
    for k, start in enumerate(starts):
        rest, resumed = read_all(data, start_offset=start, recovered_edits=options.recovered_edits)
        assert rest == full[k:]
        assert resumed.end_offset == reader.end_offset
        assert resumed.end_reason == reader.end_reason
        if not options.compression:  # a direct seek with a known index
            direct, _ = read_all(data, start_offset=start, start_index=k)
            assert direct == full[k:]


@pytest.mark.parametrize("compression", [False, True])
def test_offset_inside_an_entry_is_refused(compression: bool) -> None:
    data = wal_bytes(simple_pairs(6), WalOptions(compression=compression))
    full, _ = read_all(data)
    bad = full[2].offset + 3
    with pytest.raises(WalCorruptError, match="not an entry boundary") as info:
        read_all(data, start_offset=bad)
    assert info.value.offset == bad
    with pytest.raises(WalCorruptError):
        read_all(data, start_offset=len(data) + 10)


def test_resume_a_growing_file() -> None:
    data = wal_bytes(simple_pairs(10), WalOptions(compression=True), trailer=False)
    full, _ = read_all(data)
    cut = full[5].offset + 7
    first, reader = read_all(data[:cut])
    assert reader.end_reason == "truncated" and reader.end_offset == full[5].offset
    later = list(read_entries(io.BytesIO(data), start_offset=reader.end_offset))  # type: ignore[arg-type]
    assert first + later == full


def test_path_source_and_read_entries(tmp_path: object) -> None:
    import pathlib

    path = pathlib.Path(str(tmp_path)) / "wal.1"
    path.write_bytes(wal_bytes(simple_pairs(4)))
    with WalReader(path) as reader:
        assert reader.name == str(path) and reader.file_size == path.stat().st_size
        assert len(list(reader)) == 4
    assert len(list(read_entries(str(path)))) == 4
