"""A whole ``hbase-migrate replay`` on the embedded stack opens its ledger once: the run, the
migration's lock and the run's lease (leases in the ledger: the source has no ZooKeeper) and
the move to ``replaying`` share one connection, handed down."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import MigrationState
from hbase_migrate.cli import cli
from tests.support.replay import RS1, START, Clusters, Setup, T, puts

pytestmark = pytest.mark.integration


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The URL of every ``Ledger.open`` while the test runs."""
    seen: list[str] = []
    real = Ledger.open.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Ledger], /, url: str, **kwargs: Any) -> Ledger:
        seen.append(url)
        opened: Ledger = real(cls, url, **kwargs)
        return opened

    monkeypatch.setattr(Ledger, "open", classmethod(counted))
    yield seen


def test_a_replay_run_opens_its_ledger_once(clusters: Clusters, table: str, tmp_path: Path,
                                            opens: list[str]) -> None:
    setup = Setup(clusters, table, tmp_path)
    calls = puts("o", 0, 3)
    setup.root.write(RS1, T, table, calls)
    setup.source_writes(calls)
    opens.clear()
    result = CliRunner().invoke(cli, ["replay", "--config", str(setup.config), "--start",
                                      str(START)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "cells written: Put 3" in result.output
    assert opens == [setup.spec.ledger_url]
    assert setup.equal()
    with Ledger.open(setup.spec.ledger_url) as ledger:  # the run's records are all there
        record = ledger.migration(setup.spec.name)
        assert record is not None and record.state == MigrationState.REPLAYING.value
        assert ledger.counts(record.id) == {"replayed": 1}  # its every entry applied
