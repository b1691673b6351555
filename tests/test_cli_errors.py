"""Clear errors instead of tracebacks: each bad input below ends with exit code 2 and one
line naming the thing, through the real command line (``main``)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from hbase_migrate.cli import main
from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.timeutil import parse_duration
from minihbase.process import EmbeddedStackError
from minihbase.server import MiniHBase


def fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI; it must exit 2 with exactly one line on stderr, which is returned."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hbase-migrate: error: "), err
    return lines[0]


def config_text(tmp_path: Path, target: str = 'thrift = "127.0.0.1:1"') -> Path:
    path = tmp_path / "m.toml"
    path.write_text(f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path}/ledger.db"\n'
                    f'[source]\nthrift = "127.0.0.1:1"\nhbase_root = "{tmp_path}"\n'
                    f'[target]\n{target}\n[[tables]]\nsource = "t"\n', encoding="utf-8")
    return path


def test_a_config_with_bytes_that_are_not_utf8(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.toml"
    path.write_bytes(b'[migration]\nname = "caf\xe9"\n')
    line = fails(["replay", "--config", str(path)], capsys)
    assert f"{path}: not UTF-8 text: byte 0xe9 at offset 23" in line


def test_an_empty_target_table_name_is_refused(tmp_path: Path) -> None:
    path = config_text(tmp_path)
    path.write_text(path.read_text() + 'target = ""\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[tables #1\] target: expected a table name"):
        load_config(path)


@pytest.mark.parametrize("value", ["-5", "nan", "inf", "soon"])
def test_lock_timeouts_that_are_no_duration(value: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    line = fails(["replay", "--config", str(config_text(tmp_path)), "--lock-timeout", value],
                 capsys)
    assert "--lock-timeout" in line and repr(value) in line


def test_a_start_in_the_future_records_nothing(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    line = fails(["replay", "--config", str(config_text(tmp_path)), "--start", "2099-01-01"],
                 capsys)
    assert "--start 2099-01-01: in the future" in line
    assert not (tmp_path / "ledger.db").exists()


def test_fractional_durations_are_read_like_whole_ones() -> None:
    assert parse_duration("0.5s") == parse_duration("500ms") == 500
    assert parse_duration("1.5h") == 5_400_000
    with pytest.raises(ConfigError, match="not a whole number of milliseconds"):
        parse_duration("0.5ms")


def test_wal_dump_and_select_agree_on_an_empty_window(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    wal = tmp_path / "host%2C1%2C1.1"
    wal.write_bytes(b"PWAL")
    window = ["--start", "2026-11-22T11:00", "--end", "2026-11-22T10:00", str(wal)]
    dumped = fails(["wal", "dump", *window], capsys)
    selected = fails(["wal", "select", *window], capsys)
    reason = "empty time window: start 2026-11-22T11:00:00.000Z is not before end"
    assert reason in dumped and reason in selected


@pytest.mark.integration
def test_workload_and_minicluster_errors_are_one_line(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with MiniHBase(tmp_path / "c", "c") as cluster:
        cluster_json = str(cluster.write_cluster_json())
        line = fails(["workload", "--cluster", cluster_json, "--table", "hbase:meta"], capsys)
        assert "'hbase:meta': a system table" in line
        line = fails(["minicluster", "kill", "no-such-server", "--cluster", cluster_json],
                     capsys)
        assert "minicluster kill" in line and "no-such-server" in line
        line = fails(["minicluster", "move", "no-such-region", "--cluster", cluster_json],
                     capsys)
        assert "minicluster move" in line and "no-such-region" in line
    for argv in (["workload", "--cluster", cluster_json, "--table", "t", "--ops", "1"],
                 ["minicluster", "info", "--cluster", cluster_json]):
        assert "is the cluster running?" in fails(argv, capsys)  # the cluster is gone now


@pytest.mark.integration
def test_a_second_cluster_on_the_same_znode_parent_is_refused(tmp_path: Path,
                                                              zookeeper) -> None:  # type: ignore[no-untyped-def]
    parent = f"/hbase-{uuid.uuid4().hex[:8]}"
    with MiniHBase(tmp_path / "a", "a", zookeeper=zookeeper.address, znode_parent=parent):
        second = MiniHBase(tmp_path / "b", "b", zookeeper=zookeeper.address,
                           znode_parent=parent)
        with pytest.raises(EmbeddedStackError, match=f"znode parent {parent} on ZooKeeper "
                                                     ".* already has an active master"):
            second.start()
        second.stop()
    # once the first is gone, the parent is free again
    with MiniHBase(tmp_path / "b", "b", zookeeper=zookeeper.address, znode_parent=parent):
        pass
