"""``hbase-migrate hfile dump`` on the golden files, against HBase's printout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.commands.hfile import hfile
from minihbase.webhdfs import WebHdfsServer
from tests.hfile.golden_files import CASES, GOLDEN_1, READABLE, edited
from tests.hfile.printout import GOLDEN, printed_cells, printed_section


def test_json_dump_is_the_printed_cells() -> None:
    done = CliRunner().invoke(hfile, ["dump", "--json", str(GOLDEN / "multiblock-gz")])
    assert done.exit_code == 0, done.output
    dumped = [json.loads(line) for line in done.output.splitlines()]
    expected = printed_cells("multiblock-gz")
    for cell in expected:
        del cell["vlen"]
    assert dumped == expected


# HBase 2.x's and 3.x's printer (1.x prints tags with no type: not the format printed here)
HBASE_2_AND_3 = [(f, n) for f, n in CASES if f != GOLDEN_1]
IDS_2_AND_3 = [f"{folder.name}/{name}" for folder, name in HBASE_2_AND_3]


@pytest.mark.parametrize(("folder", "name"), HBASE_2_AND_3, ids=IDS_2_AND_3)
def test_text_dump_is_hbases_printout(folder: Path, name: str) -> None:
    """Every ``K:`` line HFilePrettyPrinter -p -v printed, in its order, is the dump's."""
    done = CliRunner().invoke(hfile, ["dump", str(folder / name)])
    assert done.exit_code == 0, done.output
    printed = (folder / f"{name}.hbase.txt").read_text(encoding="utf-8").splitlines()
    expected = [line for line in printed if line.startswith("K: ")]
    assert done.output.splitlines() == expected


def test_dump_into_a_closed_pipe_ends_quietly() -> None:
    """``hfile dump FILE | head -1``: the dump stops when head has gone, with no error."""
    command = [str(Path(sys.executable).with_name("hbase-migrate")), "hfile", "dump",
               str(GOLDEN / "tagged-fastdiff")]  # 108 KB of text: more than a pipe holds
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as dump:
        assert dump.stdout is not None and dump.stderr is not None
        first = dump.stdout.readline()
        dump.stdout.close()
        errors = dump.stderr.read()
        code = dump.wait(timeout=60)
    assert first.startswith(b"K: t00000/f:acl/")
    assert errors == b"" and code == 1


def test_webhdfs_url_dumps_as_the_local_file(tmp_path: Path) -> None:
    """A store file given as a ``webhdfs://`` URL (its place under the HBase root) reads as
    the same file given as a path, ``dump`` and ``info``."""
    store = tmp_path / "hbase" / "data" / "default" / "t1" / "0123abcd" / "f"
    store.mkdir(parents=True)
    shutil.copyfile(GOLDEN / "tagged-multiblock-fastdiff", store / "5f3c0a1b2c3d")
    local = [CliRunner().invoke(hfile, [command, str(store / "5f3c0a1b2c3d")])
             for command in ("dump", "info")]
    with WebHdfsServer(tmp_path / "hbase") as server:
        url = f"webhdfs://127.0.0.1:{server.port}/hbase/data/default/t1/0123abcd/f/5f3c0a1b2c3d"
        remote = [CliRunner().invoke(hfile, [command, url]) for command in ("dump", "info")]
        missing = CliRunner().invoke(hfile, ["dump", url + "-gone"])
    assert [r.exit_code for r in remote] == [0, 0], remote[0].output
    assert remote[0].output == local[0].output and remote[0].output.count("\n") == 714
    assert remote[1].output == local[1].output.replace(str(store / "5f3c0a1b2c3d"), url)
    assert missing.exit_code == 2 and url + "-gone" in missing.output


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
    assert info["tags_compressed"] == (fileinfo.get("hfile.TAGS_COMPRESSED") == "true")
    assert info["mvcc"] == (fileinfo["KEY_VALUE_VERSION"] == "1")
    assert info["bloom_type"] == fileinfo.get("BLOOM_FILTER_TYPE", "NONE")  # absent: none
    assert str(info["earliest_put_ts"]) == fileinfo.get("EARLIEST_PUT_TS", "None")


@pytest.mark.parametrize(("folder", "name"), HBASE_2_AND_3, ids=IDS_2_AND_3)
def test_info_prints_the_file_info_and_keys_as_hbase(folder: Path, name: str) -> None:
    """The file info map, entry for entry in HBase's order, and the first and last key, as
    HFilePrettyPrinter -m printed them (``firstKey=``, ``lastKey=`` of its reader line)."""
    done = CliRunner().invoke(hfile, ["info", "--json", str(folder / name)])
    assert done.exit_code == 0, done.output
    info = json.loads(done.output)
    assert list(info["file_info"].items()) == list(printed_section(name, "Fileinfo",
                                                                   folder).items())
    printed = (folder / f"{name}.hbase.txt").read_text(encoding="utf-8")
    assert f"    firstKey=Optional[{info['first_key']}/seqid=0],\n" in printed
    assert f"    lastKey=Optional[{info['last_key']}/seqid=0],\n" in printed
    text = CliRunner().invoke(hfile, ["info", str(folder / name)]).output.splitlines()
    at = text.index("file_info:")
    assert text[at + 1 :] == [f"    {k} = {v}" for k, v in info["file_info"].items()]
