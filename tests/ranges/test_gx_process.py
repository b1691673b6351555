"""Great Expectations judging in a process of its own: the same verdicts as in-process,
several comparisons per process, and a clear error when it fails or dies."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import RangeStats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.validate.gx_process import GxProcess
from hbase_migrate.validate.verdict import judge

A, B, C = KeyRange("t", b"", b"g"), KeyRange("t", b"g", b"p"), KeyRange("t", b"p", b"")

# GX in a process of its own, started by each test: embedded, not unit
pytestmark = pytest.mark.integration


def pair(r: KeyRange, source: tuple[int, int, str], target: tuple[int, int, str]) -> RangePair:
    return RangePair(RangeStats(r, *source), RangeStats(r, *target))


def test_the_process_judges_as_the_function_does(tmp_path: Path) -> None:
    pairs = [pair(A, (2, 5, "x"), (2, 5, "x")), pair(B, (2, 5, "x"), (2, 5, "y"))]
    local = judge(pairs, [A, B, C], tmp_path / "here", "run-1")
    with GxProcess() as gx:
        remote = gx.judge(pairs, [A, B, C], tmp_path / "there", "run-1")
        again = gx.judge(pairs[:1], [A], tmp_path / "there", "run-2")  # the same process
    assert (remote.success, remote.mismatched, remote.missing) == (False, {B.id}, [C.id])
    assert (remote.success, remote.mismatched, remote.missing) == (
        local.success, local.mismatched, local.missing)
    assert remote.statistics == local.statistics
    assert remote.result_path == tmp_path / "there" / "validations" / "run-1.json"
    def outcomes(path: Path) -> list[tuple[str, bool, object]]:  # without GX's random ids
        return [(r["expectation_config"]["type"], r["success"], r["result"])
                for r in json.loads(path.read_text())["results"]]
    assert outcomes(remote.result_path) == outcomes(local.result_path)
    assert again.success and again.missing == [] and again.result_path.exists()


def test_cached_templates_render_the_pages_the_templates_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process gives GX's Data Docs a Jinja bytecode cache: written by the first
    process, read by the next; the pages are those of GX's own templates (made here, in
    this process, without the cache), but for the run's time and random element ids."""
    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    pairs = [pair(A, (2, 5, "x"), (2, 5, "x")), pair(B, (2, 5, "x"), (2, 5, "y"))]
    local = judge(pairs, [A, B], tmp_path / "here", "run-1")
    with GxProcess() as gx:
        first = gx.judge(pairs, [A, B], tmp_path / "first", "run-1")
    cached = sorted((tmp_path / "cache" / "jinja").rglob("*.cache"))
    written = [p.stat().st_mtime_ns for p in cached]
    with GxProcess() as gx:
        second = gx.judge(pairs, [A, B], tmp_path / "second", "run-1")
    assert cached and [p.stat().st_mtime_ns for p in cached] == written

    def page(path: Path | None) -> str:
        assert path is not None
        text = re.sub(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", "ID", path.read_text())
        return re.sub(r"\d{8}T\d{6}\.\d{6}Z|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
    assert page(first.docs_path) == page(second.docs_path) == page(local.docs_path)


def test_a_failure_inside_gx_is_one_error_naming_the_comparison(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "artifacts"
    blocker.write_text("a file where the artifact folder should be")
    with GxProcess() as gx, pytest.raises(RuntimeError) as caught:
        gx.judge([pair(A, (1, 1, "x"), (1, 1, "x"))], [A], blocker, "run-9")
    assert str(caught.value).startswith("Great Expectations failed judging run-9: ")
    assert "Traceback" in caplog.text  # the process's traceback is logged, not lost


def test_a_killed_process_is_an_error_with_its_exit_code(tmp_path: Path) -> None:
    gx = GxProcess()
    try:
        os.kill(gx._process.pid, signal.SIGKILL)
        gx._process.wait()
        with pytest.raises(RuntimeError, match=r"pid \d+\) ended with exit code -9 before "
                                               r"judging run-3"):
            gx.judge([pair(A, (1, 1, "x"), (1, 1, "x"))], [A], tmp_path, "run-3")
    finally:
        gx.close()


def test_the_step_process_does_not_import_gx(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from hbase_migrate.validate.gx_process import GxProcess\n"
        "from hbase_migrate.ranges.keyrange import KeyRange\n"
        "from hbase_migrate.ranges.stats import RangeStats\n"
        "from hbase_migrate.ranges.tasks import RangePair\n"
        "r = KeyRange('t', b'', b'')\n"
        "with GxProcess() as gx:\n"
        f"    v = gx.judge([RangePair(RangeStats(r, 1, 1, 'x'), RangeStats(r, 1, 1, 'x'))], "
        f"[r], __import__('pathlib').Path({str(tmp_path)!r}), 'run-1')\n"
        "print(v.success, 'great_expectations' in sys.modules, 'pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, cwd=Path(__file__).resolve().parents[2])
    assert done.stdout.split() == ["True", "False", "False"]


def test_the_process_prints_no_info_line_of_gx(tmp_path: Path,
                                               capfd: pytest.CaptureFixture[str]) -> None:
    """GX sets some of its loggers to INFO itself ("Created temporary directory ... for
    ephemeral docs site"): none of it reaches a ``validate``'s output."""
    with GxProcess() as gx:
        verdict = gx.judge([pair(A, (1, 1, "x"), (1, 1, "x"))], [A], tmp_path, "run-3")
    assert verdict.success
    err = capfd.readouterr().err
    assert not [line for line in err.splitlines() if "great_expectations" in line], err


def test_validations_of_one_process_judge_with_one_gx_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A validation leaves its process for the next of this process (GX loaded once), unless
    the next runs with another environment or the process broke; a forked child starts its
    own (the parent's pipes are not its to use)."""
    pairs = [pair(A, (2, 5, "x"), (2, 5, "x")), pair(B, (2, 5, "x"), (2, 5, "y"))]
    with GxProcess.reused() as gx:
        first = gx.judge(pairs, [A, B], tmp_path / "one", "run-1")
        kept = gx.pid
    assert os.path.exists(f"/proc/{kept}")  # left running for the next validation
    with GxProcess.reused() as gx:
        assert gx.pid == kept
        second = gx.judge(pairs, [A, B], tmp_path / "two", "run-2")
    assert (first.success, first.mismatched) == (second.success, second.mismatched) == (
        False, {B.id})

    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: a process of its own, stopped when the child ends
        try:
            with GxProcess.reused() as gx:
                os.write(writer, str(gx.pid).encode())
        finally:
            os._exit(0)
    os.close(writer)
    forked = int(os.read(reader, 32))
    os.waitpid(child, 0)
    assert forked != kept

    monkeypatch.setenv("HBASE_MIGRATE_CACHE", str(tmp_path / "cache"))
    with GxProcess.reused() as gx:  # started with another environment: a new one
        assert gx.pid != kept
        renewed = gx.pid
    assert not os.path.exists(f"/proc/{kept}")  # the old one was stopped (and reaped)

    gx = GxProcess.reused()
    assert gx.pid == renewed
    os.kill(gx.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError):
        gx.judge(pairs, [A], tmp_path / "three", "run-3")
    gx.close()
    with GxProcess.reused() as gx:  # a broken exchange is not left for the next
        assert gx.pid != renewed
