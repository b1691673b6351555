"""What a failed soak prints: its problems, its seed, the whole chaos schedule with each
action's outcome, and the command that runs the same soak again."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from minihbase.cli import soak as command
from minihbase.soak import SoakResult, SoakSpec


def test_a_failed_soak_prints_its_seed_and_schedule(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def failing(spec: SoakSpec, say: object, airflow: object) -> SoakResult:
        events = spec.events()
        return SoakResult(events, actions=[{"index": 2, "error": "OSError: gone"}],
                          problems=["verify: the target holds REFERENCED=9 (the source 10)"])

    monkeypatch.setattr(command, "run_soak", failing)
    done = CliRunner().invoke(command.soak, ["--minutes", "2", "--seed", "41", "--cli",
                                             "--dir", str(tmp_path / "s")])
    assert done.exit_code == 1
    planned = SoakSpec(tmp_path / "s", 2, 41, airflow=False).events()
    lines = done.output.splitlines()
    assert "FAILED: verify: the target holds REFERENCED=9 (the source 10)" in lines
    assert f"seed 41; the chaos schedule ({len(planned)} actions):" in lines
    for event in planned:
        assert any(line.strip().startswith(event.line()) for line in lines), event
    assert any(event.line() in line and "[OSError: gone]" in line for line in lines
               for event in planned if event.index == 2)
    assert lines[-1] == ("repeat: hbase-migrate soak --minutes 2 --seed 41 --cli --stack "
                         "embedded --client native")
