"""A ZooKeeper quorum that never answered fails a command at once, in one line: no master
wait of minutes, no kazoo warnings before the line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hbase_migrate.cluster.zk.zookeeper import quorum_addresses
from stackprocs.process import free_port


def test_quorum_addresses() -> None:
    assert quorum_addresses("zk1:2182, zk2,[::1]:2183/hbase-chroot") == [
        ("zk1", 2182), ("zk2", 2181), ("::1", 2183)]


@pytest.mark.parametrize("command", [["prepare"], ["cluster", "info"], ["replay"]])
def test_a_quorum_that_never_answered_is_one_line_at_once(
        tmp_path: Path, command: list[str]) -> None:
    quorum = f"127.0.0.1:{free_port()}"  # nobody listens there
    config = tmp_path / "m.toml"
    config.write_text(
        f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\nclient = "native"\nzookeeper = "{quorum}"\nhbase_root = "{tmp_path}"\n'
        f'[target]\nclient = "native"\nzookeeper = "{quorum}"\n'
        '[[tables]]\nsource = "t"\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", *command, "--config",
                           str(config)], check=False, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"hbase-migrate: error: ZooKeeper quorum {quorum} (cluster 'source') has never "
        f"answered ({quorum}: Connection refused); is the quorum address right (host, port) "
        "and ZooKeeper running?\n")
