"""``hbase-migrate hfile dump`` on the golden files, against HBase's printout."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hbase_migrate.commands.hfile import hfile
from tests.hfile.printout import GOLDEN, printed_cells


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


def test_refused_file_is_one_error_line() -> None:
    done = CliRunner().invoke(hfile, ["dump", str(GOLDEN / "small-fastdiff")])
    assert done.exit_code == 2
    assert done.output.count("\n") == 1 and "FAST_DIFF" in done.output
