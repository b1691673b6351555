"""Both WAL stores list the same files, with the same sizes, times, states and servers, on
the same HBase root; status, archive moves and reads through each."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.storage import walstore
from hbase_migrate.cluster.storage.walstore import LocalWalStore, WalStore, WebHdfsWalStore
from minihbase.webhdfs import WebHdfsServer
from tests.cluster.walroot import LIVE, RS1, RS1_ENC, TREE, content

pytestmark = pytest.mark.integration


@pytest.fixture(params=["local", "webhdfs"])
def store(request: pytest.FixtureRequest, hbase_root: Path) -> WalStore:
    if request.param == "local":
        return LocalWalStore(hbase_root)
    server: WebHdfsServer = request.getfixturevalue("webhdfs")
    return WebHdfsWalStore(server.url, "/hbase", user="hbase")


def _expected() -> list[tuple[str, int, int, str, str | None]]:
    return sorted((f.relpath, f.size, f.mtime_ms, f.state, f.server)
                  for f in TREE if f.state is not None)


def test_lists_the_wal_files(store: WalStore) -> None:
    listed = store.list_wal_files()
    assert [(s.relpath, s.size, s.mtime_ms, s.state, s.server) for s in listed] == _expected()
    by_name = {s.name: s for s in listed}
    assert by_name[f"{RS1_ENC}.1700000100000"].timestamp == 1700000100000


def test_both_stores_agree(hbase_root: Path, webhdfs: WebHdfsServer) -> None:
    local = LocalWalStore(hbase_root).list_wal_files()
    remote = WebHdfsWalStore(webhdfs.url).list_wal_files()
    assert [s._replace(path="") for s in local] == [s._replace(path="") for s in remote]
    assert remote[0].path.startswith(f"webhdfs://127.0.0.1:{webhdfs.port}/hbase/")
    # the HDFS path verbatim, as HBase prints it: the file name keeps its literal %2C
    assert next(s.path for s in remote if s.state == "archived") == \
        f"webhdfs://127.0.0.1:{webhdfs.port}/hbase/oldWALs/{RS1_ENC}.1700000000000"


def test_status_archive_move_and_read(store: WalStore, hbase_root: Path) -> None:
    (live,) = [s for s in store.list_wal_files() if s.relpath == LIVE.relpath]
    assert store.status(live.path) == live
    archived = store.archived_path(live.path)
    assert archived == store.to_path(f"oldWALs/{live.name}")
    with store.open(live.path, offset=299_990) as handle:
        assert handle.read() == content(LIVE.relpath, LIVE.size)[299_990:]

    (hbase_root / LIVE.relpath).rename(hbase_root / "oldWALs" / live.name)  # archived
    with pytest.raises(FileNotFoundError):
        store.status(live.path)
    moved = store.status(archived)
    assert (moved.state, moved.size, moved.server) == ("archived", LIVE.size, LIVE.server)
    assert store.archived_path(live.path) == archived


def test_per_server_archive_dir(hbase_root: Path) -> None:
    flat = LocalWalStore(hbase_root)
    per_server = LocalWalStore(hbase_root, separate_oldlogdir_by_server=True)
    live = str(hbase_root / LIVE.relpath)
    assert flat.archived_path(live) == str(hbase_root / "oldWALs" / LIVE.relpath.split("/")[2])
    assert per_server.archived_path(live) == str(
        hbase_root / "oldWALs" / LIVE.server / LIVE.relpath.split("/")[2])
    # an existing per-server archive is found even without the flag
    existing = "rs3%2C16020%2C3.1700000000005"
    assert flat.archived_path(f"WALs/rs3,16020,3/{existing}") == str(
        hbase_root / "oldWALs" / "rs3,16020,3" / existing)


def test_a_file_listed_mid_archive_appears_once_as_archived(hbase_root: Path) -> None:
    """A rename between the listing of WALs/ and of oldWALs/ shows the file in both places;
    the store keeps the archived one, so a run never replays one file under two names."""
    name = LIVE.relpath.split("/")[2]
    (hbase_root / "oldWALs" / name).write_bytes((hbase_root / LIVE.relpath).read_bytes())
    listed = [s for s in LocalWalStore(hbase_root).list_wal_files() if s.name == name]
    assert [(s.state, s.relpath) for s in listed] == [("archived", f"oldWALs/{name}")]


def test_a_server_folder_renamed_to_splitting_while_listed_keeps_its_files(
        store: WalStore, hbase_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server dies between the listing of ``WALs/`` and that of its folder: its files are
    listed from the ``-splitting`` folder HBase renamed it to, none missed."""
    listing = store._list

    def renamed_after_wals(relpath: str) -> object:
        entries = listing(relpath)
        if relpath == "WALs" and (hbase_root / "WALs" / RS1).exists():
            (hbase_root / "WALs" / RS1).rename(hbase_root / "WALs" / f"{RS1}-splitting")
        return entries

    monkeypatch.setattr(store, "_list", renamed_after_wals)
    listed = {s.relpath: s.state for s in store.list_wal_files()}
    moved = {f.relpath.replace(RS1, f"{RS1}-splitting", 1): "splitting"
             for f in TREE if f.relpath.startswith(f"WALs/{RS1}/")}
    assert moved and all(listed.get(path) == state for path, state in moved.items())
    assert len(listed) == len(_expected())


def test_a_roll_between_a_folders_read_and_its_stat_is_read_again(
        store: WalStore, hbase_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HDFS lists a folder at one moment. A roll that archives the live file between a
    folder's read and the stat of its names must not make the server's folder look empty:
    the roll's new file is there now, and a listing that left both out would say the chain
    had no live file at all."""
    new = f"WALs/{RS1}/{RS1_ENC}.1700000400000"
    rolled: list[str] = []

    def roll() -> None:
        rolled.append(new)
        (hbase_root / new).write_bytes(b"")
        (hbase_root / LIVE.relpath).rename(hbase_root / "oldWALs" / Path(LIVE.relpath).name)

    if isinstance(store, LocalWalStore):
        real_scandir = walstore.os.scandir

        class Racing:
            def __init__(self, item: os.DirEntry[str]) -> None:
                self.item, self.name = item, item.name

            def is_dir(self) -> bool:
                return self.item.is_dir()

            def stat(self) -> os.stat_result:
                if self.name == Path(LIVE.relpath).name and not rolled:
                    roll()
                return self.item.stat()

        monkeypatch.setattr(walstore.os, "scandir",
                            lambda path: [Racing(i) for i in real_scandir(path)])
    else:
        real_status = WebHdfsServer.file_status

        def racing(server: WebHdfsServer, hdfs_path: str, suffix: str = "") -> dict[str, Any]:
            if hdfs_path.endswith(Path(LIVE.relpath).name) and not rolled:
                roll()
            return real_status(server, hdfs_path, suffix)

        monkeypatch.setattr(WebHdfsServer, "file_status", racing)
    live = [s.relpath for s in store.list_wal_files() if s.state == "live" and s.server == RS1]
    assert rolled and new in live  # not an empty folder
    assert LIVE.relpath not in live


def test_a_file_archived_while_the_listing_runs_is_listed_once_and_kept_as_live(
        store: WalStore, hbase_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Archived between the read of its server's folder and the read of ``oldWALs/``: one
    file, archived, in ``files``; and the newest live file of its server in ``live``, which
    is what the listing proves a chain's head by."""
    real_list = store._list

    def archiving(relpath: str) -> Any:
        if relpath == "oldWALs" and (hbase_root / LIVE.relpath).exists():
            (hbase_root / LIVE.relpath).rename(hbase_root / "oldWALs" / Path(LIVE.relpath).name)
        return real_list(relpath)

    monkeypatch.setattr(store, "_list", archiving)
    listing = store.listing()
    name = Path(LIVE.relpath).name
    assert [(f.state, f.relpath) for f in listing.files if f.name == name] == [
        ("archived", f"oldWALs/{name}")]
    assert [f.relpath for f in listing.live if f.server == RS1 and not f.name.endswith(
        ".meta")] == [LIVE.relpath]
