"""Working folders: the demo and the soak clear only a folder the project made, refuse any
other in one line (deleting nothing), and refuse a folder another run holds."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.workdir import MARKER, WorkFolderError, claim_workdir
from tests.cli_util import fails


@pytest.fixture(autouse=True)
def _signals() -> Iterator[None]:
    """The demo and soak commands install their own SIGINT/SIGTERM handlers."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def _users_folder(root: Path) -> dict[str, bytes]:
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_bytes(b"my notes\n")
    (root / "sub" / "data.bin").write_bytes(bytes(range(256)))
    return _contents(root)


def _contents(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


COMMANDS = [["demo", "--no-airflow"], ["demo"], ["soak", "--cli", "--minutes", "1"],
            ["soak-crash", "--kills", "1"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_users_folder_is_refused_and_kept(tmp_path: Path, command: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "mine"
    before = _users_folder(root)
    line = fails([*command, "--dir", str(root)], capsys)
    assert str(root.absolute()) in line and "did not write" in line, line
    assert "notes.txt" in line and "--dir" in line, line
    assert _contents(root) == before
    assert not (root / MARKER).exists()


def test_the_current_folder_of_a_checkout_is_refused(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    (checkout / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (checkout / "README.md").write_text("# a project\n")
    before = _contents(checkout)
    monkeypatch.chdir(checkout)
    line = fails(["demo", "--no-airflow", "--dir", "."], capsys)
    assert str(checkout) in line and ".git" in line, line
    assert _contents(checkout) == before


def test_a_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("mine")
    with pytest.raises(WorkFolderError, match="is not a folder"), claim_workdir(path, "demo"):
        pass
    assert path.read_text() == "mine"


def test_a_missing_or_empty_folder_is_taken_and_marked(tmp_path: Path) -> None:
    for root in (tmp_path / "new" / "deeper", tmp_path / "empty"):
        if root.name == "empty":
            root.mkdir()
        with claim_workdir(root, "demo") as held:
            assert held == root.absolute()
            assert sorted(p.name for p in root.iterdir()) == [MARKER]


def test_a_folder_the_project_made_is_cleared_on_a_rerun(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    outside = tmp_path / "outside"
    kept = _users_folder(outside)
    with claim_workdir(root, "demo"):
        (root / "ledger.db").write_bytes(b"old run")
        (root / "source" / "WALs").mkdir(parents=True)
        (root / "source" / "WALs" / "wal.1").write_bytes(b"PWAL")
        (root / "link").symlink_to(outside, target_is_directory=True)
    with claim_workdir(root, "demo"):
        assert sorted(p.name for p in root.iterdir()) == [MARKER]
    assert _contents(outside) == kept  # a link in the folder is removed, never followed


def test_a_second_run_on_a_held_folder_is_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "demo"
    with claim_workdir(root, "demo"):
        (root / "ledger.db").write_bytes(b"in use")
        line = fails(["demo", "--no-airflow", "--dir", str(root)], capsys)
        assert f"{root} is in use by another run (pid {os.getpid()})" in line, line
        assert (root / "ledger.db").read_bytes() == b"in use"
    with claim_workdir(root, "demo"):  # released at the end of the first
        assert not (root / "ledger.db").exists()


def test_what_a_user_added_to_a_demos_folder_is_kept(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "demo"
    with claim_workdir(root, "demo"):  # what a demo writes
        (root / "orders" / "wal").mkdir(parents=True)
        (root / "orders" / "ledger.db").write_bytes(b"old run")
        (root / "orders" / "wal" / "wal.1").write_bytes(b"PWAL")
        (root / "report.html").write_text("<html>")
    (root / "my-notes.txt").write_text("mine\n")  # what the user adds afterwards
    (root / "orders" / "mine").mkdir()
    (root / "orders" / "mine" / "k.txt").write_text("keep me\n")
    with claim_workdir(root, "demo"):
        assert _contents(root).keys() - {MARKER} == {"my-notes.txt", "orders/mine/k.txt"}
        assert (root / "orders" / "mine" / "k.txt").read_text() == "keep me\n"
    assert "kept in" in caplog.text and "my-notes.txt, orders/mine/k.txt" in caplog.text


def test_a_folder_another_kind_of_run_made_is_refused_and_kept(tmp_path: Path) -> None:
    """The Bigtable demo given the HBase demo's folder (issue 71): refused in one line
    naming both, and the HBase demo's report and ledger are still there."""
    root = tmp_path / "demo"
    with claim_workdir(root, "demo"):
        (root / "report.html").write_text("<html>hbase</html>")
        (root / "ledger.db").write_bytes(b"ledger")
    before = _contents(root)
    with pytest.raises(WorkFolderError) as refused, claim_workdir(root, "demo-bigtable"):
        pass
    assert str(refused.value) == (
        f"demo-bigtable: refusing to use {root} as its working folder: a demo run made it "
        "and this run would clear what that run wrote; give another folder with --dir")
    assert _contents(root) == before
    with claim_workdir(root, "demo"):  # its own kind still clears it
        assert sorted(p.name for p in root.iterdir()) == [MARKER]
