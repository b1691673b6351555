"""The commands of the quickstart and the runbooks cannot rot: every `hbase-migrate` line of
their shell blocks names a command that exists with options it has (and its ``--help``
runs), every `make` line a target of the Makefile, and the migration files they show are
accepted by the config reader; the runbook's first commands run on its own migration file."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from hbase_migrate.cli import cli, main
from hbase_migrate.config import parse_config

REPO = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/quickstart.md", "docs/runbook.md", "docs/airflow.md"]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def _blocks(page: str, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall((REPO / page).read_text("utf-8"))
            if lang == language]


def _command_lines(language: str = "sh") -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for block in _blocks(page, language):
            for text in block.splitlines():
                line = re.split(r"\s+#\s", text)[0].strip()
                if line:
                    found.append((page, line))
    return found


def _inline_commands() -> list[tuple[str, str]]:
    """`hbase-migrate ...` code spans in the pages' prose (options in brackets unwrapped)."""
    found = []
    for page in PAGES:
        prose = FENCE.sub("", (REPO / page).read_text("utf-8"))
        for span in re.findall(r"`(hbase-migrate [^`]+)`", prose.replace("\n", " ")):
            found.append((page, re.sub(r"[\[\]]", "", span.split(" > ")[0])))
    return found


LINES = _command_lines()
CLI_LINES = [(p, line) for p, line in LINES + _inline_commands()
             if line.startswith("hbase-migrate ") and "COMMAND" not in line]


def _resolve(words: list[str]) -> tuple[list[str], click.Command]:
    ctx = click.Context(cli)
    command: click.Command = cli
    path: list[str] = []
    for word in words:
        if not isinstance(command, click.Group) or word.startswith("-"):
            break
        sub = command.get_command(ctx, word)
        if sub is None:
            break
        command, path = sub, [*path, word]
    return path, command


def test_the_pages_show_commands() -> None:
    assert len(CLI_LINES) >= 25
    assert ("docs/quickstart.md", "make run") in LINES
    assert ("docs/quickstart.md", "make test") in LINES


@pytest.mark.parametrize(("page", "line"), CLI_LINES, ids=[line for _, line in CLI_LINES])
def test_a_command_of_the_pages_exists_with_its_options(
        page: str, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    words = shlex.split(line)[1:]
    path, command = _resolve(words)
    rest = words[len(path):]
    assert not isinstance(command, click.Group) or rest == ["--help"], (
        f"{page}: {line}: no such command")
    options = {o for p in command.params for o in [*p.opts, *p.secondary_opts]}
    unknown = {w.split("=")[0] for w in rest if w.startswith("--")} - options - {"--help"}
    assert not unknown, f"{page}: {line}: {unknown}"
    with pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("Usage: hbase-migrate " + " ".join(path))


def test_make_lines_name_targets_of_the_makefile() -> None:
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    for page, line in LINES:
        if line.startswith("make "):
            assert shlex.split(line)[1] in targets, (page, line)


def _migration_files() -> list[str]:
    return [b for page in PAGES for b in _blocks(page, "toml") if "[migration]" in b]


def test_the_runbook_s_migration_files_are_accepted(tmp_path: Path) -> None:
    files = _migration_files()
    assert files
    for text in files:
        parse_config(tomllib.loads(text), tmp_path / "M.toml")
    # a block that shows one section (a secured source) fits into a whole file
    whole = tomllib.loads(files[0])
    for block in _blocks("docs/runbook.md", "toml"):
        part = tomllib.loads(block)
        if "migration" not in part:
            parse_config({**whole, **part}, tmp_path / "M.toml")


def test_every_pages_toml_is_a_part_of_a_migration_file_as_written(tmp_path: Path) -> None:
    """Each ``toml`` block of every page (the guides too) parses as written, and put into the
    runbook's migration file in place of its sections is accepted: a reader copies them."""
    pages = sorted({*PAGES, *(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))})
    whole = tomllib.loads(_migration_files()[0])
    checked = 0
    for page in pages:
        for block in _blocks(page, "toml"):
            try:
                part = tomllib.loads(block)
            except tomllib.TOMLDecodeError as exc:
                pytest.fail(f"{page}: a toml block does not parse ({exc}):\n{block}")
            parse_config({**whole, **part}, tmp_path / "M.toml")
            checked += 1
    assert checked > len(_migration_files())


def test_the_runbook_s_first_commands_run_on_its_migration_file(tmp_path: Path) -> None:
    """`ledger upgrade` and `ledger info` as the runbook gives them, on its own M.toml: the
    file is read, the ledger made, and the migration's ledger answers."""
    (tmp_path / "M.toml").write_text(_migration_files()[0])
    (tmp_path / "ledger").mkdir()
    tool = str(Path(sys.executable).parent / "hbase-migrate")
    runbook = [line for page, line in CLI_LINES
               if page == "docs/runbook.md" and line.startswith("hbase-migrate ledger ")]
    assert len(runbook) == 2
    for line in runbook:
        done = subprocess.run([tool, *shlex.split(line)[1:]], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    assert (tmp_path / "ledger" / "orders.db").is_file()
