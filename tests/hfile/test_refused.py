"""What the reader does not read is refused in one line naming the file, the byte offset and
what was found: the golden ``small`` with its trailer edited by hand (the protobuf message
after ``TRABLK"$``: a varint length, then fields; ``compression_codec`` = 12 is its last)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.errors import HFileUnsupportedError
from hbase_migrate.hfile.reader import HFileReader
from tests.hfile.golden_files import TRAILER_SIZE, edited
from tests.hfile.printout import printed_section


def test_lzo_compression_is_refused_at_the_first_block(tmp_path: Path) -> None:
    path = edited(tmp_path, 0, b"\x60\x02", b"\x60\x00")  # NONE (2) -> LZO (0)
    with pytest.raises(HFileUnsupportedError) as caught:
        HFileReader(path)
    load_on_open = int(printed_section("small", "Trailer")["loadOnOpenDataOffset"])
    assert caught.value.offset == load_on_open
    assert str(caught.value).startswith(f"{path}: not readable here at byte offset {load_on_open}")
    assert "LZO compression" in str(caught.value) and "\n" not in str(caught.value)


def test_encrypted_file_is_refused_at_the_trailer(tmp_path: Path) -> None:
    # encryption_key (13, bytes) of one byte added after the last field
    path = edited(tmp_path, 3, b"\x60\x02", b"\x60\x02\x6a\x01\x00")
    with pytest.raises(HFileUnsupportedError, match="encrypted") as caught:
        HFileReader(path)
    assert caught.value.offset == path.stat().st_size - TRAILER_SIZE
