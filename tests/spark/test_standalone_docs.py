"""The guide's way to a standalone cluster from pip's pyspark (docs/guides/spark-cluster.md,
"A master and workers from pip's pyspark"): its ``spark-class`` lines, run as written but for
the host and ports, with this environment's ``bin/`` first on PATH (activated, as the guide
says) and no SPARK_HOME, start a master and a worker that joins it with the cores and memory
the line gives."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from stackprocs.process import free_port

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow]
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "spark-cluster.md"
HEADING = "### A master and workers from pip's pyspark"


def guide_lines() -> list[str]:
    """The ``spark-class`` lines of the section's shell blocks."""
    text = GUIDE.read_text("utf-8")
    assert HEADING in text, f"{GUIDE}: no section {HEADING!r}"
    section = text.split(HEADING, 1)[1].split("\n#", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", section, re.M | re.S)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip().startswith("spark-class ")]


def master_state(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/", timeout=5) as reply:
        found: dict[str, Any] = json.loads(reply.read())
        return found


def test_the_guides_spark_class_lines_start_a_master_and_a_worker_that_joins(
        tmp_path: Path) -> None:
    lines = guide_lines()
    master = next((line for line in lines if ".deploy.master.Master" in line), None)
    worker = next((line for line in lines if ".deploy.worker.Worker" in line), None)
    assert master and worker, f"{GUIDE}: no spark-class line of a Master and a Worker: {lines}"
    port, ui, worker_ui = free_port(), free_port(), free_port()
    master = master.replace("spark-master", "127.0.0.1").replace("7077", str(port)).replace(
        "8080", str(ui))
    worker = worker.replace("spark-master", "127.0.0.1").replace("7077", str(port))
    words = shlex.split(worker)
    cores = int(words[words.index("--cores") + 1])
    memory = words[words.index("--memory") + 1]  # e.g. 8g
    mib = int(memory[:-1]) * {"g": 1024, "m": 1}[memory[-1].lower()]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
    env.update(PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               SPARK_LOCAL_IP="127.0.0.1", SPARK_LOG_DIR=str(tmp_path / "logs"))
    procs = []
    try:
        for n, (line, extra) in enumerate([
                (master, []), (worker, ["--host", "127.0.0.1", "--webui-port", str(worker_ui),
                                        "--work-dir", str(tmp_path / "work")])]):
            procs.append(subprocess.Popen(
                [*shlex.split(line), *extra], env=env, cwd=tmp_path,
                stdout=(tmp_path / f"{n}.log").open("wb"), stderr=subprocess.STDOUT))
        deadline, state = time.monotonic() + 120, dict[str, Any]()
        while time.monotonic() < deadline and not state.get("aliveworkers"):
            time.sleep(1)
            with contextlib.suppress(OSError):  # (not answering yet)
                state = master_state(ui)
        logs = {p.name: p.read_text(errors="replace")[-2000:] for p in tmp_path.glob("*.log")}
        assert state.get("status") == "ALIVE" and state.get("aliveworkers") == 1, (state, logs)
        (joined,) = state["workers"]
        assert (joined["cores"], joined["memory"], joined["state"]) == (cores, mib, "ALIVE")
        assert state["url"] == f"spark://127.0.0.1:{port}"
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
