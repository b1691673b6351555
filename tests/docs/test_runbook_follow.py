"""The runbook followed as written on the embedded stack: the clusters of its "Try it
without a production cluster" section (the ZooKeeper given by the session's, on its port),
its M.toml, then every `--config M.toml` command of the page in the page's order, each
exiting 0, ending in GO. Left out: what needs real HBase (`--method hbase`), runs until
stopped (`--follow`), copies in parts on several machines, or names a range of the page's
own migration (`--explain`)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from minihbase.zookeeper import ZooKeeperServer

pytestmark = [pytest.mark.integration, pytest.mark.e2e]

RUNBOOK = Path(__file__).resolve().parents[2] / "docs" / "runbook.md"
TRY_IT = "## Try it without a production cluster"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
LEFT_OUT = ("--follow", "--method hbase", "--plan", "--part", "--finish", "--explain")
TOOL = str(Path(sys.executable).parent / "hbase-migrate")


def _sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """Each ``##`` section of the runbook with its fenced blocks (language, body)."""
    text = RUNBOOK.read_text("utf-8")
    parts = re.split(r"^(## .*)$", text, flags=re.M)
    return [(parts[i], FENCE.findall(parts[i + 1])) for i in range(1, len(parts), 2)]


def _lines(body: str) -> list[str]:
    return [line for line in (re.split(r"\s+#\s", t)[0].strip() for t in body.splitlines())
            if line.startswith("hbase-migrate ")]


def _run(line: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([TOOL, *shlex.split(line)[1:]], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, (line, done.stdout, done.stderr)
    return done


@pytest.fixture
def stack(tmp_path: Path, zookeeper: ZooKeeperServer) -> Iterator[list[str]]:
    """The section's clusters started as it says, its workload written; yields the
    section's other lines."""
    blocks = dict(_sections())[TRY_IT]
    lines = [line.replace("127.0.0.1:2181", zookeeper.address)
             for lang, body in blocks if lang == "sh" for line in _lines(body)]
    starts = [line for line in lines if " minicluster start " in line]
    assert len(starts) == 2 and any(" zookeeper start " in line for line in lines)
    servers: list[subprocess.Popen[str]] = []
    try:
        for line in starts:  # one terminal after the other: each when the last is ready
            servers.append(subprocess.Popen([TOOL, *shlex.split(line)[1:]], cwd=tmp_path,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                            text=True))
            assert servers[-1].stdout is not None
            ready = json.loads(servers[-1].stdout.readline() or "null")
            assert ready is not None, servers[-1].communicate(timeout=30)[1]
        (tmp_path / "M.toml").write_text(
            next(body for lang, body in blocks if lang == "toml"), encoding="utf-8")
        (tmp_path / "ledger").mkdir()
        yield [line for line in lines if " start " not in line]
    finally:
        for server in servers:
            server.terminate()
            server.wait(60)


def test_the_runbook_runs_as_written(stack: list[str], tmp_path: Path) -> None:
    for line in stack:  # the first workload
        _run(line, tmp_path)
    ran = []
    for heading, blocks in _sections():
        if heading == TRY_IT:
            continue
        if heading.startswith("## 10."):  # step 2 of the cutover: roll, one more run
            _run("hbase-migrate minicluster roll --cluster state/src/cluster.json", tmp_path)
        for lang, body in blocks:
            for line in _lines(body) if lang == "sh" else []:
                if "--config M.toml" in line and not any(o in line for o in LEFT_OUT):
                    ran.append((line, _run(line, tmp_path).stdout))
    assert [line for line, _ in ran][-1] == "hbase-migrate cutover check --config M.toml " \
                                            "--max-lag 1m"
    assert ran[-1][1].splitlines()[-1] == "verdict: GO"
    assert len(ran) >= 15, [line for line, _ in ran]
