"""``hbase-migrate replay`` / ``backfill`` as an operator runs them: summaries, manifests,
JSON, exit codes (0 ok, 1 failures, 3 gaps, 2 errors) and the lock message; and
``cluster info`` over a faked ZooKeeper layout and a synthetic WAL root."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.cli import cli, main
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.replay.discovery import SOURCE
from hbase_migrate.replay.job import ReplayJob
from hbase_migrate.replay.lock import migration_lock
from hbase_migrate.wal.names import ServerName as ZkServer
from minihbase.zkregistry import ZkRegistrar
from minihbase.zookeeper import ZooKeeperServer
from tests.cli_util import fails
from tests.support.replay import (
    RS1,
    RS2,
    Clusters,
    HBaseRoot,
    Setup,
    T,
    corrupt_entry,
    puts,
    source_endpoints,
    write_config,
)

pytestmark = pytest.mark.integration


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def setup(clusters: Clusters, table: str, tmp_path: Path) -> Setup:
    return Setup(clusters, table, tmp_path)


def test_replay_since_the_watermark_prints_a_summary_and_json(setup: Setup) -> None:
    calls = puts("w", 0, 4)
    setup.root.write(RS1, T, setup.table, calls)
    setup.source_writes(calls)
    config = str(setup.config)
    missing = CliRunner().invoke(cli, ["replay", "--config", config])  # main() exits 2
    assert isinstance(missing.exception, ConfigError)
    assert "has no watermark" in str(missing.exception)
    with Ledger.open(setup.spec.ledger_url) as ledger:
        migration = ledger.ensure_spec(setup.spec)
        ledger.update_migration(migration.id, watermark=T)
    result = run("replay", "--config", config, "--since-watermark")
    assert result.exit_code == 0, result.output
    assert "cells written: Put 4" in result.output and "result: ok" in result.output
    # every listed edit replayed: the lag a follow prints after each run
    assert "\nreplay lag: 0 ms (every edit of this run's WAL listing replayed)\nresult: ok" \
        in result.output
    assert setup.equal()
    again = json.loads(run("replay", "--config", config, "--json").output)
    assert (again["exit_code"], again["files_listed"], again["files_read"]) == (0, 1, 0)
    assert run("status", "--config", config).exit_code == 0


def test_backfill_dry_run_lists_every_file_with_its_reason(setup: Setup) -> None:
    inside = setup.root.write(RS1, T, setup.table, puts("i", 0, 2))
    outside = setup.root.write(RS2, T - 10 * 3_600_000, setup.table, puts("o", 0, 2))
    window = ["--start", str(T), "--end", str(T + 60_000)]
    result = run("backfill", "--config", str(setup.config), "--table", setup.table,
                 *window, "--dry-run")
    assert result.exit_code == 0, result.output
    assert f"+ {inside}" in result.output and f"- {outside}" in result.output
    assert "2 entries with write_time in the window" in result.output
    assert "rolled by" in result.output
    manifest = json.loads(run("backfill", "--config", str(setup.config), "--table",
                              setup.table, *window, "--dry-run", "--json").output)
    assert {i["path"]: i["included"] for i in manifest["items"]} == {
        str(inside): True, str(outside): False}
    with Ledger.open(setup.spec.ledger_url) as ledger:
        assert ledger.migration(setup.spec.name) is None  # a dry run records nothing


def test_exit_codes_for_gaps_and_failures(setup: Setup) -> None:
    config, start = str(setup.config), str(T - 60_000)
    bad = setup.root.write(RS1, T, setup.table, puts("b", 0, 5))
    offset = corrupt_entry(bad, 2)
    failed = run("replay", "--config", config, "--start", start)
    assert failed.exit_code == 1
    assert f"FAILED {bad}: " in failed.output and f"byte offset {offset}" in failed.output

    lost = setup.root.write(RS2, T, setup.table, puts("l", 0, 1))
    with Ledger.open(setup.spec.ledger_url) as ledger:
        migration = ledger.ensure_spec(setup.spec)
        ledger.record_wal_seen(migration.id, SOURCE, str(RS2), str(lost), 1, T)
    lost.unlink()
    gap = run("replay", "--config", config, "--start", start)
    assert gap.exit_code == 3
    assert f"gap: WAL file {lost} of server {RS2}" in gap.output
    assert "re-copy the affected key ranges" in gap.output
    assert run("status", "--config", config).exit_code == 3


def test_master_auto_replays_a_small_run_here_and_says_so(setup: Setup) -> None:
    """``--master auto`` sends a one-shot run to Spark only when its WAL bytes left come to
    ``[spark] auto_cells`` cells (about 100 bytes each): this one replays in-process."""
    wal = setup.root.write(RS1, T, setup.table, puts("m", 0, 6))
    setup.source_writes(puts("m", 0, 6))
    result = run("replay", "--config", str(setup.config), "--start", str(T - 60_000),
                 "--master", "auto")
    assert result.exit_code == 0, result.output
    estimate = wal.stat().st_size // 100
    assert (f"engine: in-process (auto: about {estimate} cells, under auto_cells = "
            f"{setup.spec.engine.auto_cells}: in-process)") in result.output, result.output
    assert setup.equal()
    follow = run("replay", "--config", str(setup.config), "--follow", "--master", "auto")
    assert follow.exit_code == 2 and "--master is for a one-shot run" in follow.output


def test_usage_errors_exit_2(setup: Setup) -> None:
    both = run("replay", "--config", str(setup.config), "--since-watermark", "--start", "1")
    assert both.exit_code == 2 and "either --since-watermark or --start" in both.output



def offline_config(tmp_path: Path) -> Path:
    """A config whose clusters are never contacted by the checks below."""
    path = tmp_path / "offline.toml"
    path.write_text(f'[migration]\nname = "offline"\nledger = "sqlite:///{tmp_path}/l.db"\n'
                    f'[source]\nthrift = "127.0.0.1:1"\nhbase_root = "{tmp_path}"\n'
                    '[target]\nthrift = "127.0.0.1:1"\n[[tables]]\nsource = "t"\n',
                    encoding="utf-8")
    return path


def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.toml"
    path.write_bytes(b'[migration]\nname = "caf\xe9"\n')
    assert fails(["replay", "--config", str(path)], capsys) == (
        f"{path}: not UTF-8 text: byte 0xe9 at offset 23 (TOML files are UTF-8)")


@pytest.mark.parametrize(("value", "problem"), [
    ("-5", "expected a finite number of seconds >= 0, got '-5'"),
    ("nan", "expected a finite number of seconds >= 0, got 'nan'"),
    ("inf", "expected a finite number of seconds >= 0, got 'inf'"),
    ("soon", "cannot read 'soon' as a number of seconds"),
])
@pytest.mark.parametrize("command", ["replay", "backfill"])
def test_a_lock_timeout_that_is_no_number_of_seconds_is_one_line(
        command: str, value: str, problem: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = [command, "--config", str(offline_config(tmp_path)), "--lock-timeout", value]
    if command == "backfill":
        argv += ["--table", "t", "--start", str(T), "--end", str(T + 1)]
    assert fails(argv, capsys) == f"--lock-timeout: {problem}"
    assert not (tmp_path / "l.db").exists()


def test_a_job_refuses_a_lock_timeout_that_is_no_number_of_seconds(tmp_path: Path) -> None:
    spec = load_config(offline_config(tmp_path))
    for bad in (-5.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="migration 'offline': lock timeout: expected a "
                                              "finite number of seconds >= 0"):
            ReplayJob.from_spec(spec, start=T, lock_timeout=bad)


@pytest.mark.parametrize(("given", "seconds"), [("0.5s", 0.5), ("500ms", 0.5), ("1.5m", 90.0),
                                                ("250", 0.25)])
def test_follow_intervals_with_decimals_mean_what_they_say(
        given: str, seconds: float, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hbase_migrate.commands.replay as command

    paused: list[float] = []

    def follow(job: ReplayJob, interval: float, as_json: bool, force: bool,
               metrics: tuple[str, int] | None = None) -> int:
        paused.append(interval)
        return 0

    monkeypatch.setattr(command, "_follow", follow)
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "--config", str(offline_config(tmp_path)), "--start", str(T),
              "--follow", "--interval", given])
    assert (exit_info.value.code, paused) == (0, [seconds])


def test_a_follow_interval_below_a_millisecond_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert fails(["replay", "--config", str(offline_config(tmp_path)), "--follow",
                  "--interval", "0.5ms"], capsys) == (
        "--interval: '0.5ms' is not a whole number of milliseconds")


def test_a_start_in_the_future_fails_before_anything_is_recorded(
        setup: Setup, capsys: pytest.CaptureFixture[str]) -> None:
    config = str(setup.config)
    future = (f"migration '{setup.spec.name}': start 2099-01-01T00:00:00.000Z is in the "
              "future (now ")
    assert fails(["replay", "--config", config, "--start", "2099-01-01"],
                 capsys).startswith(future)
    with Ledger.open(setup.spec.ledger_url) as ledger:  # no migration row either
        assert ledger.migration(setup.spec.name) is None
        migration = ledger.ensure_spec(setup.spec)
        ledger.update_migration(migration.id, watermark=T)
    for argv in (["replay", "--config", config, "--start", "2099-01-01"],
                 ["backfill", "--config", config, "--table", setup.table, "--start",
                  "2099-01-01", "--end", "2099-01-02"]):
        assert fails(argv, capsys).startswith(future)
    with Ledger.open(setup.spec.ledger_url) as ledger:
        after = ledger.migration(setup.spec.name)
        assert after is not None and (after.state, after.watermark) == ("created", T)
        assert ledger.steps(migration.id) == []


def test_a_locked_migration_exits_2_naming_the_holder(
        clusters: Clusters, table: str, tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    root = HBaseRoot(tmp_path / "hbase")
    root.write(RS1, T, table, puts("x", 0, 1))
    source = source_endpoints("localhost:9090", root=root.root, zookeeper=zookeeper.address)
    config = write_config(tmp_path, source=source, target=clusters.dst_endpoints,
                          tables=[table], name=f"cli-lock-{table}")
    job = ReplayJob.from_spec(load_config(config), start=T)
    with migration_lock(job) as lock:
        done = subprocess.run(
            [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(config),
             "--start", str(T), "--lock-timeout", "0.5"],
            capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert f"migration 'cli-lock-{table}' is locked (held by '{lock.identifier}'" in done.stderr


def test_cluster_info_reads_zookeeper_and_the_wal_root(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    parent = f"/hbase-info-{tmp_path.name}"
    rs1 = RS1
    root = HBaseRoot(tmp_path / "hbase")
    live = root.write(RS1, T, "t", puts("a", 0, 3), state="live", trailer=False)
    archived = root.write(RS2, T - 1000, "t", puts("b", 0, 1))
    with ZkRegistrar(zookeeper.address, parent) as zk:
        zk.set_cluster_id("5c5e0a7e-0000-4000-8000-000000000001")
        zk.set_master(ZkServer("master.example.com", 16000, 1))
        zk.register_server(rs1)
        zk.add_replication_peer("1", "peer-zk:2181:/hbase")
        zk.set_queue_position(rs1, "1", live.name, 123)
        source = ClusterEndpoints(name="src", thrift="localhost:9090",
                                  zookeeper=zookeeper.address, znode_parent=parent,
                                  hbase_root=str(root.root))
        config = write_config(tmp_path, source=source, target=source, tables=["t"])
        # read through its gateways: cluster info then asks no master (a native client
        # would wait 10 s a run for master.example.com, a name only) and reads all the same
        # ZooKeeper and the WAL root, what this test is about
        config.write_text(config.read_text().replace("[source]\n",
                                                     '[source]\nclient = "thrift"\n'))
        result = run("cluster", "info", "--config", str(config), "--json")
        assert result.exit_code == 0, result.output
        report = json.loads(result.output)
        wide = {"COLUMNS": "300"}
        text = CliRunner().invoke(cli, ["cluster", "info", "--config", str(config)],
                                  env=wide).output
        zk.client.delete(f"{parent}/replication/rs", recursive=True)  # the 3.x layout
        v3 = CliRunner().invoke(cli, ["cluster", "info", "--config", str(config)],
                                env=wide).output
    assert (report["client"], report["status"]) == ("thrift", None)
    info = report["zookeeper"]
    assert (info["cluster_id"], info["master"]) == (
        "5c5e0a7e-0000-4000-8000-000000000001", "master.example.com,16000,1")
    assert info["live_servers"] == [str(RS1)]
    assert info["replication"]["peers"][0]["cluster_key"] == "peer-zk:2181:/hbase"
    (queue,) = info["replication"]["queues"]
    assert (queue["server"], queue["peer_id"], queue["wals"]) == (str(RS1), "1",
                                                                  {live.name: 123})
    servers = {s["server"]: [(f["name"], f["state"], f["size"]) for f in s["files"]]
               for s in report["wal_store"]["servers"]}
    assert servers == {str(RS1): [(live.name, "live", live.stat().st_size)],
                       str(RS2): [(archived.name, "archived", archived.stat().st_size)]}
    assert live.name in text and "master.example.com,16000,1" in text
    # the live file's age: an hour plus however long the session has run since T was taken
    assert re.search(r"\b1h\d+m\b", text), text
    assert "table hbase:replication" in v3
