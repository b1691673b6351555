"""What a step's command imports before it starts: not the packages of a transport, a
ledger database or a step it does not use (each costs start-up time of every run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# a gateway's client, the Thrift2 IDL, PostgreSQL's dialect, replay's engine, GX
UNUSED = ("happybase", "hbase_migrate.thrift.thrift1",
          "hbase_migrate.thrift.thrift2", "sqlalchemy.dialects.postgresql",
          "hbase_migrate.replay.run", "hbase_migrate.replay.in_process",
          "hbase_migrate.replay.run_books", "hbase_migrate.replay.job_target",
          "great_expectations", "pandas")


def imported(args: list[str]) -> tuple[int, set[str], list[str]]:
    """Exit code, the modules ``python -m hbase_migrate ARGS`` imported (``-X importtime``'s
    list), and the other lines of its stderr."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "hbase_migrate", *args],
                          check=False, capture_output=True, text=True, cwd=ROOT, timeout=120)
    lines = done.stderr.splitlines()
    return (done.returncode,
            {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")},
            [line for line in lines if not line.startswith("import time:")])


@pytest.mark.parametrize("command", ["validate", "snapshot"])
def test_a_native_step_imports_only_what_it_uses(command: str, tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text(  # both clusters over HBase's RPC; the run stops at the missing files
        f'[migration]\nname = "m"\nledger = "sqlite:///{tmp_path}/l.db"\n'
        '[source]\ncluster_json = "none/s.json"\nclient = "native"\n'
        '[target]\ncluster_json = "none/t.json"\nclient = "native"\n'
        '[[tables]]\nsource = "a"\ntarget = "b"\n', encoding="utf-8")
    code, modules, errors = imported([command, "--config", str(config)])
    assert (code, errors) == (2, [f"hbase-migrate: error: {tmp_path}/none/s.json: cannot read "
                                  "cluster endpoints: [Errno 2] No such file or directory: "
                                  f"'{tmp_path}/none/s.json'"])
    assert f"hbase_migrate.lifecycle.{command}" in modules  # the step was reached
    assert sorted(m for m in UNUSED if m in modules) == []
