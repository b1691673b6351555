"""The CDC command's summary speaks of the stream: a CDC run's lag printed as replay's was
read by an operator as the target's replay lag (found in the crash harness's logs of killed
and rerun CDC runs, ``soak-crash --cdc --seed 76``)."""

from __future__ import annotations

from hbase_migrate.commands.cdc import _render
from hbase_migrate.replay.summary import RunSummary


def test_a_cdc_run_names_its_lag_the_stream_s() -> None:
    caught_up = RunSummary("orders", "catch-up", 1_700_000_000_000, None, False, lag=0)
    lines = _render(caught_up).splitlines()
    assert lines[0].startswith("CDC catch-up stream of migration orders from ")
    assert lines[1] == "cells sent: none"
    assert lines[-2:] == ["CDC lag: 0 ms (every edit of this run's WAL listing sent and "
                          "acknowledged)", "result: ok"]
    assert not [line for line in lines if "replay" in line]
    behind = RunSummary("orders", "catch-up", 1_700_000_000_000, None, False, lag=90_000)
    assert "CDC lag: 1 min 30 s" in _render(behind).splitlines()
