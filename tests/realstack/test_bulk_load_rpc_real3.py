"""HBase 3.0.0-alpha-4, a stack apart (``make test-stacks``; the one
``test_hfile_writer_real3`` borrows), bulk-loads over its own RPC from Python as 2.6.1 does
(``test_bulk_load_rpc_real.py``): a window of WAL-like edits loaded beside the table's
earlier cells reads back by a raw scan cell for cell, and after a split between writing and
loading the spanning files are split and every cell arrives. About two minutes, most of it
the stack's start."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.hbase.connect import connect

from . import bulk_rpc as bulk
from .bulk_window import copy_cells, window_entries
from .fixtures import HBASE_3, native_cluster_json, skip_without_real_stack
from .stacks import Stacks

pytestmark = [pytest.mark.own_stack, pytest.mark.realstack, pytest.mark.integration]
TABLE = "bulk_rpc3"


@pytest.fixture(scope="module")
def described(real_stacks: Stacks, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[dict[str, Any]]:
    skip_without_real_stack()
    folder = tmp_path_factory.mktemp("bulk-rpc3")
    with real_stacks.lend(HBASE_3) as stack:
        yield {**stack.described, "folder": folder, "stack": stack,
               "endpoints": load_cluster_json(native_cluster_json(stack, folder))}


def test_window_loaded_over_rpc_reads_back_cell_for_cell(described: dict[str, Any]) -> None:
    endpoints, entries, before = described["endpoints"], window_entries(), copy_cells()
    with bulk.fresh_table(endpoints, TABLE):
        with connect(endpoints) as client:
            client.write_cells(TABLE, before)
        files = bulk.write_window(endpoints, TABLE, entries, described["folder"] / "loaded")
        report = bulk.load(endpoints, TABLE, files)
        assert (report.rounds, report.calls, len(report.loaded)) == (1, 2, 4)
        assert bulk.raw_scan(endpoints, TABLE) == bulk.expected_raw(before, entries)


def test_a_split_between_writing_and_loading_splits_the_file(described: dict[str, Any]
                                                              ) -> None:
    endpoints, entries = described["endpoints"], window_entries()
    with bulk.fresh_table(endpoints, TABLE):
        files = bulk.write_window(endpoints, TABLE, entries, described["folder"] / "split")
        assert bulk.split_first_region(described["stack"].cluster_json, TABLE) == 3
        report = bulk.load(endpoints, TABLE, files)
        assert (report.rounds, report.calls, len(report.split), len(report.loaded)) == (
            1, 3, 2, 6)
        assert bulk.raw_scan(endpoints, TABLE) == bulk.expected_raw([], entries)
