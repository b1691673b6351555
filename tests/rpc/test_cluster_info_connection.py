"""``cluster info`` on an embedded cluster reached over HBase's own RPC: the connection part
says the transport, TLS, SASL and protection observed on the connection to the active
master (the one ZooKeeper names), in the JSON and in one line of the terminal's report; and
which hot paths this install runs compiled, as ``--version`` says it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from hbase_migrate.cli import cli
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import clusters_over_rpc, write_migration


def test_cluster_info_shows_the_connections_security(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        config = write_migration(tmp_path, src, dst, "t")
        runner = CliRunner()
        shown = runner.invoke(cli, ["cluster", "info", "--config", str(config), "--side",
                                    "target", "--json"])
        assert shown.exit_code == 0, shown.output
        text = runner.invoke(cli, ["cluster", "info", "--config", str(config), "--side",
                                   "target"], env={"COLUMNS": "300"})
        assert text.exit_code == 0, text.output
    report = json.loads(shown.output)
    master = report["zookeeper"]["master"]  # ZooKeeper's word, read apart from the RPC
    assert master and report["status"]["master"] == master
    assert report["connection"] == {"transport": "native", "observed": True,
                                    "server": master, "tls": None, "sasl": "SIMPLE",
                                    "protection": None}
    assert f"connection: native, TLS off, SASL SIMPLE (negotiated with {master})" \
        in text.output
    version = runner.invoke(cli, ["--version"])
    hot_paths = version.output.splitlines()[1]
    assert hot_paths.startswith("hot paths: ") and report["hot_paths"] == hot_paths
    assert f"this install's {hot_paths}" in text.output
