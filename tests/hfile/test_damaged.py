"""Golden HFiles cut short or with one byte flipped: the reader fails with the byte offset,
or (a flip in bytes it does not read, such as the trailer's padding or a bloom chunk) reads
every cell as before; it never hands out a wrong cell."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.errors import HFileCorruptError, HFileError
from hbase_migrate.hfile.keyvalue import StoreCell
from hbase_migrate.hfile.reader import HFileReader
from tests.hfile.printout import GOLDEN, printed_section


def read(path: Path) -> list[StoreCell]:
    with HFileReader(path) as reader:
        return list(reader.cells())


def outcome(path: Path) -> tuple[list[StoreCell], HFileError | None]:
    """The cells handed out before the reader stopped, and what stopped it."""
    cells: list[StoreCell] = []
    try:
        with HFileReader(path) as reader:
            for cell in reader.cells():
                cells.append(cell)
    except HFileError as exc:
        return cells, exc
    return cells, None


@pytest.mark.usefixtures("both_decoders")
@pytest.mark.parametrize("name", ["small", "multiblock-gz", "multiblock-fastdiff"])
def test_truncated_file_fails_with_an_offset(name: str, tmp_path: Path) -> None:
    data = (GOLDEN / name).read_bytes()
    good = read(GOLDEN / name)
    for size in [0, 3, 100, len(data) // 2, len(data) - 4097, len(data) - 1]:
        cut = tmp_path / "cut"
        cut.write_bytes(data[:size])
        cells, error = outcome(cut)
        assert isinstance(error, HFileCorruptError), size
        assert 0 <= error.offset <= size and name not in str(error)  # named by its path
        assert str(cut) in str(error)
        assert cells == good[: len(cells)]


@pytest.mark.parametrize(("name", "step"),
                         [("small", 1), ("multiblock", 29), ("multiblock-gz", 13),
                          ("multiblock-crc32", 17), ("multiblock-3level", 31),
                          ("multiblock-snappy", 37), ("multiblock-zstd", 37),
                          ("small-rowindex", 3), ("multiblock-rowindex", 37),
                          ("small-prefix", 3), ("multiblock-prefix", 37),
                          ("small-fastdiff", 3), ("multiblock-fastdiff", 37),
                          ("small-diff", 3), ("multiblock-diff", 37)])
def test_flipped_byte_fails_or_changes_nothing(name: str, step: int, tmp_path: Path) -> None:
    data = bytearray((GOLDEN / name).read_bytes())
    good = read(GOLDEN / name)
    load_on_open = int(printed_section(name, "Trailer")["loadOnOpenDataOffset"])
    damaged = tmp_path / "flipped"
    before_trailer = len(data) - 4096  # the v3 trailer: mostly padding HBase skips too
    failures = 0
    for at in [*range(0, before_trailer + 200, step), len(data) - 1]:  # protobuf, version
        data[at] ^= 0x10
        damaged.write_bytes(data)
        data[at] ^= 0x10
        cells, error = outcome(damaged)
        if error is None:
            assert cells == good, at
            continue
        failures += at < before_trailer
        assert cells == good[: len(cells)], at  # no wrong cell before the failure
        assert 0 <= error.offset < len(data), at
        if at < load_on_open and isinstance(error, HFileCorruptError):
            assert error.offset <= at, (at, str(error))  # the block holding the byte
    assert failures > before_trailer // step * 3 // 4  # most bytes before it are checked


@pytest.mark.usefixtures("both_decoders")
def test_small_flip_in_data_names_block_zero(tmp_path: Path) -> None:
    data = bytearray((GOLDEN / "small").read_bytes())
    data[100] ^= 1  # inside the one data block (offset 0)
    damaged = tmp_path / "small"
    damaged.write_bytes(data)
    with pytest.raises(HFileCorruptError, match="byte offset 0: DATABLK\\* block fails its CRC32C"):
        read(damaged)
