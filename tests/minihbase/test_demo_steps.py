"""The demo's step lines: one clock for the whole run (it once restarted at 0.00s with
every step), then how long the step took."""

from __future__ import annotations

import re
import time
from typing import Any

from minihbase.cli.demo import step_line
from minihbase.demo import DemoResult, _step


def _busy(seconds: float) -> None:
    """A step that takes at least ``seconds`` of the monotonic clock."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        pass


def test_the_step_clock_runs_on_across_the_run() -> None:
    lines: list[str] = []
    seen: list[dict[str, Any]] = []

    def report(step: str, facts: dict[str, Any]) -> None:
        seen.append(dict(facts))
        lines.append(step_line(step, facts))

    result = DemoResult()
    for name in ("first", "second", "third"):
        with _step(result, name, report) as facts:
            _busy(0.05)
            facts["n"] = name
    clock = [float(re.match(r"\[\s*(\d+\.\d\d)s\] ", line)[1]) for line in lines]  # type: ignore[index]
    assert clock == [f["at"] for f in seen]
    assert clock[0] >= 0.04 and clock[1] >= clock[0] + 0.04 and clock[2] >= clock[1] + 0.04
    assert all(f["seconds"] >= 0.04 for f in seen)  # (rounded to hundredths)
    assert re.fullmatch(r"\[\s*\d+\.\d\ds\] second \(took \d+ ms\): n=second", lines[1]), lines
    assert [s["step"] for s in result.steps] == ["first", "second", "third"]
