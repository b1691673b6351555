"""Running the real command line (``main``) in tests."""

from __future__ import annotations

import pytest

from hbase_migrate.cli import main


def fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the command line: it must exit 2 with exactly one line on stderr, which is
    returned without its ``hbase-migrate: error:`` prefix."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hbase-migrate: error: "), err
    return lines[0].removeprefix("hbase-migrate: error: ")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Run the command line to its exit: its exit code and what it wrote on stdout."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    out, _ = capsys.readouterr()
    return int(exit_info.value.code or 0), out
