"""The suite's time accounting (tests/support/durations.py) and its check: a run of three small
tests in a pytest of its own records each one's category, wall and CPU time as they were
spent (one burns CPU, one sleeps; one on a fixture named ``zookeeper`` is embedded, unmarked),
and scripts/check_budgets.py fails on a test over budget."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.durations import BUDGETS, over_budget

REPO = Path(__file__).resolve().parents[1]

SPENT = 0.5  # seconds each test of the small run spends, one on CPU, one asleep
SMALL_RUN = f'''
import time
import pytest

def test_burns_cpu():
    began = time.process_time()
    while time.process_time() - began < {SPENT}:
        pass

@pytest.mark.integration
def test_sleeps():
    time.sleep({SPENT})

@pytest.fixture
def zookeeper():  # named as the suite's: what the embedded clusters stand on
    return None

def test_on_zookeeper(zookeeper):
    pass
'''


def test_a_run_records_each_tests_category_wall_and_cpu_time(tmp_path: Path) -> None:
    (tmp_path / "test_small.py").write_text(SMALL_RUN)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "tests.support.durations", "--rootdir", str(tmp_path),
                    "test_small.py"], cwd=tmp_path, env=env, check=True, capture_output=True)
    (written,) = (tmp_path / "build").glob("test-durations-*.json")
    assert written.name == "test-durations-all-test_small-py.json"  # marks, then the paths
    record = json.loads(written.read_text())
    burns, sleeps = (record["tests"][f"test_small.py::{name}"]
                     for name in ("test_burns_cpu", "test_sleeps"))
    assert burns["category"] == "unit" and sleeps["category"] == "embedded"
    assert record["tests"]["test_small.py::test_on_zookeeper"]["category"] == "embedded"
    assert burns["cpu"] >= SPENT and burns["seconds"] >= SPENT
    assert sleeps["seconds"] >= SPENT and sleeps["cpu"] < SPENT / 2
    assert record["modules"]["test_small.py"] >= 2 * SPENT
    assert record["over"] == [] and record["budgets"] == BUDGETS


def test_over_budget_judges_a_unit_test_on_cpu_and_the_others_on_wall_time() -> None:
    unit, embedded = BUDGETS["unit"], BUDGETS["embedded"]
    tests = {
        "a::slow_but_idle": {"category": "unit", "seconds": unit * 3, "cpu": unit / 2},
        "a::busy": {"category": "unit", "seconds": unit + 1, "cpu": unit + 1},
        "b::long": {"category": "embedded", "seconds": embedded + 1, "cpu": 1.0},
        "b::within": {"category": "embedded", "seconds": embedded - 1, "cpu": embedded},
    }
    over = over_budget(tests)
    assert [line.split(": ")[0] for line in over] == ["a::busy", "b::long"]
    assert "of CPU" in over[0] and "of CPU" not in over[1]


def test_the_check_fails_naming_the_tests_over_budget(tmp_path: Path) -> None:
    within, over = tmp_path / "test-durations-all.json", tmp_path / "test-durations-x.json"
    for path, lines in ((within, []), (over, ["a::busy: 11 s of CPU, over the unit budget"])):
        path.write_text(json.dumps({"budgets": BUDGETS, "over": lines, "tests": {}}))
    check = [sys.executable, str(REPO / "scripts" / "check_budgets.py")]
    assert subprocess.run([*check, str(within)], check=False, capture_output=True
                          ).returncode == 0
    failed = subprocess.run([*check, str(within), str(over)], check=False,
                            capture_output=True, text=True)
    assert failed.returncode == 1 and "a::busy" in failed.stderr
