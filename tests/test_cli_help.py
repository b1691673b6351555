"""Every command's ``--help`` ends with examples that name the command and only options it
has, and every TIME option states the formats it reads."""

from __future__ import annotations

import shlex
from pathlib import Path

import click
import pytest

from hbase_migrate.cli import cli, main
from hbase_migrate.config import load_config
from tests.support.config_files import MINIMAL, write


def _commands() -> list[tuple[list[str], click.Command]]:
    ctx = click.Context(cli)
    found: list[tuple[list[str], click.Command]] = []

    def walk(command: click.Command, path: list[str]) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, [*path, name])

    walk(cli, [])
    return found


COMMANDS = _commands()


@pytest.mark.parametrize(("path", "command"), COMMANDS,
                         ids=[" ".join(p) or "hbase-migrate" for p, _ in COMMANDS])
def test_help_has_examples_of_this_command(path: list[str], command: click.Command,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    assert "\n  Examples:\n" in text, text
    examples = [line.strip() for line in text.split("\n  Examples:\n")[1].splitlines()
                if line.strip()]
    assert examples
    options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
    for example in examples:
        words = shlex.split(example)
        assert words[:1 + len(path)] == ["hbase-migrate", *path], example
        if not isinstance(command, click.Group):
            unknown = {w.split("=")[0] for w in words if w.startswith("--")} - options
            assert not unknown, (example, unknown)


def test_every_time_option_states_its_formats() -> None:
    times = [(path, p) for path, c in COMMANDS for p in c.params
             if isinstance(p, click.Option) and (p.metavar == "TIME" or p.name in (
                 "start", "end", "watermark"))]
    assert len(times) >= 9
    for path, option in times:
        assert option.metavar == "TIME", (path, option.name)
        assert "ISO-8601" in (option.help or "") and "epoch" in (option.help or ""), (
            path, option.name)


def _option_help(path: list[str], option: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The help of ``option`` in ``hbase-migrate PATH --help``, on one line."""
    with pytest.raises(SystemExit):
        main([*path, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    return text.split(f" {option} ", 1)[1].split(" --", 1)[0]


@pytest.mark.parametrize("command", ["snapshot", "validate", "replay"])
def test_master_help_names_the_default_a_config_without_one_gets(
        command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = load_config(write(tmp_path, MINIMAL))  # no [spark] section
    said = _option_help([command], "--master URL", capsys)
    assert said.endswith(f"default: the config's [spark] master, else "
                         f"\"{spec.engine.spark_master}\"."), said
    assert f"{spec.engine.auto_cells:,}" in said and "in-process" in said, said


def test_snapshot_method_help_names_both_clients_of_the_scan_copy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The scan copy reads and writes over HBase's own RPC (client = "native") as well as a
    Thrift2 gateway (docs/guides/copy-methods.md)."""
    spec = load_config(write(tmp_path, MINIMAL))
    said = _option_help(["snapshot"], "--method [auto|scan|hbase|bulk]", capsys)
    assert "native" in said and "HBase's own RPC" in said and "Thrift2" in said, said
    assert said.startswith("auto: hbase when both clusters allow the file copy, else bulk "
                           "when [snapshot] auto_bulk is on and the target takes a bulk "
                           "load, else scan")
    assert "bulk: the scan copy's ranges written as HFiles and bulk-loaded" in said, said
    assert said.endswith(f"else {spec.snapshot.method}).")
