"""Bad input fails loudly and at the right place: a corrupt WAL after applying what came
before it, a missing target table or family before any write, an unknown cell type, a
write the target refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.errors import WalCorruptError
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.errors import (
    MissingTargetError,
    ReplayWriteError,
    UnknownCellTypeError,
)
from hbase_migrate.replay.file_replay import FileProgress, ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import decode_varint32
from hbase_migrate.wal.reader import WalReader
from tests.support.replay import Clusters, T, entries_for, make_wal, scan_all

pytestmark = pytest.mark.integration


def calls(n: int) -> list[list[Cell]]:
    return [[Cell(b"row%02d" % i, b"d", b"q", T + i, CellType.PUT, b"v%d" % i)] for i in range(n)]


def test_a_corrupt_wal_fails_with_file_and_offset_after_applying_what_precedes(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    clusters.create(table, source=False)
    wal = make_wal(tmp_path / "wal.c", entries_for(table, calls(10)))
    with WalReader(wal) as reader:
        bad = list(reader)[6]
    data = bytearray(wal.read_bytes())
    _, key_start = decode_varint32(bytes(data), bad.offset)
    data[key_start] = 0xFF  # field 31 with wire type 7: not protobuf, not a cut-off tail
    wal.write_bytes(bytes(data))
    reported: list[FileProgress] = []
    with pytest.raises(WalCorruptError) as info:
        replay_file(wal, ReplaySpec(batch_cells=100), ClientTarget(clusters.dst),
                    on_progress=reported.append)
    assert str(wal) in str(info.value) and info.value.entry_index == 6
    assert bad.offset <= info.value.offset < bad.offset + bad.size
    assert reported[-1].offset == bad.offset and reported[-1].next_index == 6
    assert [r[0] for r in scan_all(clusters.dst, table)] == [b"row%02d" % i for i in range(6)]


def test_a_mapping_to_a_missing_table_fails_before_any_write(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    clusters.create(table, source=False)
    entries = entries_for(table, calls(3)) + entries_for("other", calls(2))
    wal = make_wal(tmp_path / "wal.m", entries)
    flt = ReplayFilter.build([table, f"other={table}_missing"])
    with pytest.raises(MissingTargetError, match=f"target table '{table}_missing' does not "
                       f"exist on the target at {clusters.dst.endpoint}: run prepare"):
        replay_file(wal, ReplaySpec(flt), ClientTarget(clusters.dst))
    assert scan_all(clusters.dst, table) == []


def test_a_missing_family_fails_before_any_write(clusters: Clusters, table: str,
                                                 tmp_path: Path) -> None:
    clusters.create(table, source=False)
    wal = make_wal(tmp_path / "wal.f", entries_for(table, calls(3)))
    flt = ReplayFilter.build([table], {table: ["d", "nope"]})
    with pytest.raises(MissingTargetError, match="no column family nope"):
        replay_file(wal, ReplaySpec(flt), ClientTarget(clusters.dst))
    # a family met only in the WAL: checked before the batch holding it is written
    entries = entries_for(table, [[Cell(b"r", b"d", b"q", T, CellType.PUT, b"v"),
                                   Cell(b"r", b"zz", b"q", T, CellType.PUT, b"v")]])
    wal2 = make_wal(tmp_path / "wal.f2", entries)
    with pytest.raises(MissingTargetError, match=r"no column family zz \(written by .*wal\.f2"):
        replay_file(wal2, ReplaySpec(), ClientTarget(clusters.dst))
    assert scan_all(clusters.dst, table) == []


def test_an_unknown_cell_type_fails_after_applying_earlier_entries(
        clusters: Clusters, table: str, tmp_path: Path) -> None:
    clusters.create(table, source=False)
    bad = [Cell(b"x", b"d", b"q", T, 6, b"")]
    wal = make_wal(tmp_path / "wal.u", entries_for(table, [*calls(2), bad]))
    reported: list[FileProgress] = []
    with pytest.raises(UnknownCellTypeError, match=r"entry #2.*type code 6"):
        replay_file(wal, ReplaySpec(), ClientTarget(clusters.dst),
                    on_progress=reported.append)
    assert len(scan_all(clusters.dst, table)) == 2
    assert reported[-1].next_index == 2


def test_a_refused_write_names_table_row_and_position(clusters: Clusters, table: str,
                                                      tmp_path: Path) -> None:
    clusters.create(table, source=False)
    wal = make_wal(tmp_path / "wal.w", entries_for(table, calls(3)))
    target = ClientTarget(clusters.dst)
    target.describe(table)
    clusters.dst.disable_table(table)
    reported: list[FileProgress] = []
    try:
        with pytest.raises(ReplayWriteError) as info:
            replay_file(wal, ReplaySpec(), target, on_progress=reported.append)
    finally:
        clusters.dst.enable_table(table)
    text = str(info.value)
    assert f"table {table}" in text and "row row00" in text and "entry #0" in text
    assert reported == []


@pytest.mark.parametrize("in_flight", [0, 2])
def test_a_target_failing_mid_file_keeps_the_acknowledged_offset(
        clusters: Clusters, table: str, tmp_path: Path, in_flight: int) -> None:
    clusters.create(table, source=False)
    wal = make_wal(tmp_path / "wal.mid", entries_for(table, calls(60)))
    with WalReader(wal) as reader:
        boundaries = {e.offset + e.size for e in reader}
    reported: list[FileProgress] = []
    target = ClientTarget(Thrift2Client(clusters.dst_endpoints.thrift2 or ""))

    def progress(p: FileProgress) -> None:
        reported.append(p)
        if len(reported) == 1:  # the target refuses every write from now on
            clusters.dst.disable_table(table)

    try:
        with pytest.raises(ReplayWriteError, match=f"table {table}"):
            replay_file(wal, ReplaySpec(batch_cells=5, in_flight=in_flight), target,
                        on_progress=progress)
    finally:
        clusters.dst.enable_table(table)
        target.close()
    offsets = [p.offset for p in reported]
    assert offsets == sorted(set(offsets)) and set(offsets) <= boundaries
    last = reported[-1]
    assert last.next_index is not None and 5 <= last.next_index < 60
    # exactly the acknowledged entries are on the target: every one before the last offset
    assert [r[0] for r in scan_all(clusters.dst, table)] == [
        b"row%02d" % i for i in range(last.next_index)]
