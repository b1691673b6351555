"""``hbase-migrate hfile dump`` on the golden files, against HBase's printout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.commands.hfile import hfile
from tests.hfile.printout import GOLDEN, printed_cells, printed_section
from tests.hfile.test_real_golden import READABLE
from tests.hfile.test_refused import edited


def test_json_dump_is_the_printed_cells() -> None:
    done = CliRunner().invoke(hfile, ["dump", "--json", str(GOLDEN / "multiblock-gz")])
    assert done.exit_code == 0, done.output
    dumped = [json.loads(line) for line in done.output.splitlines()]
    expected = printed_cells("multiblock-gz")
    for cell in expected:
        del cell["vlen"]
    assert dumped == expected


def test_text_dump_prints_tags_as_hbase() -> None:
    done = CliRunner().invoke(hfile, ["dump", str(GOLDEN / "small")])
    assert done.exit_code == 0, done.output
    printed = (GOLDEN / "small.hbase.txt").read_text(encoding="utf-8")
    line = next(x for x in done.output.splitlines() if "two-tags" in x)
    assert line.endswith(printed.split("two-tags", 1)[1].split("\n")[0].split(" V: ", 1)[1])


def test_refused_file_is_one_error_line(tmp_path: Path) -> None:
    lzo = edited(tmp_path, 0, b"\x60\x02", b"\x60\x00")  # compression NONE -> LZO
    done = CliRunner().invoke(hfile, ["dump", str(lzo)])
    assert done.exit_code == 2
    assert done.output.count("\n") == 1 and "LZO compression" in done.output
    assert str(lzo) in done.output


@pytest.mark.parametrize("name", READABLE)
def test_info_is_what_hbase_prints(name: str) -> None:
    done = CliRunner().invoke(hfile, ["info", "--json", str(GOLDEN / name)])
    assert done.exit_code == 0, done.output
    info = json.loads(done.output)
    trailer = printed_section(name, "Trailer")
    fileinfo = printed_section(name, "Fileinfo")
    assert [info["major_version"], info["minor_version"], info["entries"],
            info["data_index_levels"], info["data_index_count"], info["file_info_offset"],
            info["load_on_open_offset"], info["first_data_block_offset"],
            info["last_data_block_offset"], info["total_uncompressed_bytes"]] == [
        int(trailer[k]) for k in ("majorVersion", "minorVersion", "entryCount",
                                  "numDataIndexLevels", "dataIndexCount", "fileinfoOffset",
                                  "loadOnOpenDataOffset", "firstDataBlockOffset",
                                  "lastDataBlockOffset", "totalUncomressedBytes")]
    assert (info["compression"], info["comparator"]) == (
        trailer["compressionCodec"], trailer["comparatorClassName"])
    assert info["data_block_encoding"] == fileinfo.get("DATA_BLOCK_ENCODING", "NONE")
    assert str(info["max_seq_id"]) == fileinfo["MAX_SEQ_ID_KEY"]
    assert str(info["max_memstore_ts"]) == fileinfo["MAX_MEMSTORE_TS_KEY"]
    assert "{}....{}".format(*info["time_range"]) == fileinfo["TIMERANGE"]
    assert info["tags"] == ("hfile.MAX_TAGS_LEN" in fileinfo)
    assert info["mvcc"] == (fileinfo["KEY_VALUE_VERSION"] == "1")
