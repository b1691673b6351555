"""A typo in an endpoint is not an outage (issue 44.7): a one-shot ``replay`` whose source
WebHDFS has never answered gives up after a short bound, naming the endpoint, the setting
that named it and what was tried, while ``--follow`` still waits; ``status`` shows the
follow's waiting only while its process lives (here: killed)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.replay.run import FIRST_ANSWER_MS
from minihbase.regionserver import WalSettings
from tests.support.minicluster import EmbeddedClusters, run_workload, set_watermark, write_migration
from tests.support.replay_child import REPO, follow

pytestmark = pytest.mark.integration
TABLE = "orders"


def waiting(config: Path) -> Any:
    """What ``status`` says the migration's replay waits for (None: nothing)."""
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", "status", "--config",
                           str(config), "--json"], cwd=REPO, capture_output=True, text=True,
                          check=True, timeout=60)
    streams = json.loads(done.stdout)["migrations"][0]["streams"]
    return streams.get("source", {}).get("waiting")


def test_a_wrong_webhdfs_port_fails_a_one_shot_replay_soon_and_a_follow_waits(
        tmp_path: Path, make_embedded: EmbeddedClusters, closed_port: int) -> None:
    src, dst = make_embedded.pair(wal=WalSettings(region_servers=1, roll_period=3600))
    run_workload(src, TABLE, seed=9, ops=20)
    (tmp_path / "once").mkdir()
    (tmp_path / "follow").mkdir()
    once = write_migration(tmp_path / "once", src, dst, TABLE, name="once")
    followed = write_migration(tmp_path / "follow", src, dst, TABLE, name="followed")
    set_watermark(once)
    set_watermark(followed)
    cluster_json = src.write_cluster_json()
    described = json.loads(cluster_json.read_text())
    wrong = f"http://127.0.0.1:{closed_port}"
    cluster_json.write_text(json.dumps({**described, "webhdfs": wrong}))  # the typo

    proc, _, err = follow(followed)
    try:
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "hbase_migrate", "replay", "--config",
                               str(once)], cwd=REPO, capture_output=True, text=True,
                              timeout=300, check=False)
        took = time.monotonic() - began
        assert done.returncode == 2, done.stderr[-3000:]
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith(f"hbase-migrate: error: the source WebHDFS {wrong} has not "
                               "answered once since this run started ("), line
        assert "Connection refused" in line and "tries over" in line, line
        assert (f"check webhdfs in {cluster_json} ([source] cluster_json): a wrong host "
                "or port?") in line, line
        bound = FIRST_ANSWER_MS / 1000
        assert bound - 1 <= took < bound + 60, took  # not [replay] outage_tolerance (1h)

        # the follow rides it out: still running past the bound, and status says so
        assert proc.poll() is None, err.text[-3000:]
        said = waiting(followed)
        assert said and (said["service"], said["endpoint"]) == ("source WebHDFS", wrong), \
            said
        assert waiting(once) is None  # the one-shot closed its wait
    finally:
        proc.kill()  # as a user's kill -9: no chance to close its outage step
        proc.wait(60)
    assert waiting(followed) is None  # its process is gone
