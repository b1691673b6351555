"""Golden HFiles made afresh (``make golden-hfiles``): real HBase 2.6.1 writes and prints them,
the reader must agree with the printer cell for cell, and the cells must be those of the
committed files in tests/data/real-hfile/."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.hfile.golden_files import READABLE, read_cells
from tests.hfile.printout import printed_cells

from .fixtures import skip_without_real_stack
from .hfile_golden import generate

pytestmark = [pytest.mark.realstack, pytest.mark.integration]


def test_fresh_golden_hfiles_agree_with_hfileprettyprinter(tmp_path: Path) -> None:
    skip_without_real_stack()
    written = {path.name for path in generate(tmp_path)}
    for name in READABLE:
        assert {name, f"{name}.hbase.txt"} <= written
        fresh = printed_cells(name, tmp_path)
        assert read_cells(name, tmp_path) == fresh
        assert fresh == printed_cells(name)  # the committed files hold the same cells
