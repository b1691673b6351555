"""The synthetic HBase root of the run tests (:class:`tests.support.replay.HBaseRoot`) is
what the WAL stores list."""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.cluster.storage.walstore import LocalWalStore
from tests.support.replay import RS1, RS2, HBaseRoot, T, puts


def test_the_tree_is_what_the_store_lists(tmp_path: Path) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    a = root.write(RS1, T, "t", puts("a", 0, 2))
    b = root.write(RS1, T + 10, "t", puts("b", 0, 2), state="live", trailer=False)
    c = root.write(RS2, T + 20, "t", puts("c", 0, 2), state="splitting")
    listed = {f.path: (f.state, f.server, f.timestamp)
              for f in LocalWalStore(root.root).list_wal_files()}
    assert listed == {str(a): ("archived", str(RS1), T), str(b): ("live", str(RS1), T + 10),
                      str(c): ("splitting", str(RS2), T + 20)}
