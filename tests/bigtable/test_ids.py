"""The ``[target]`` section's ``project`` and ``instance`` of a Bigtable target are checked
against Google Cloud's rules for its ids (a project's 6 to 30 characters, an instance's 6 to
33; lowercase letters, digits and hyphens, starting with a letter, not ending with a hyphen),
the refusal naming the rule broken; the emulator takes any length. The guide states the same
rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hbase_migrate.config import load_config
from hbase_migrate.errors import ConfigError

GUIDE = Path(__file__).parents[2] / "docs" / "guides" / "bigtable.md"
HEAD = '[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n[[tables]]\nsource = "t"\n'


def load(tmp_path: Path, project: str, instance: str = "hbase-copy",
         emulator: bool = False) -> str | None:
    """The refusal of a target section with these ids, None when it is taken."""
    path = tmp_path / "m.toml"
    at = 'emulator_host = "127.0.0.1:8086"\n' if emulator else ""
    path.write_text(f'{HEAD}[target]\nkind = "bigtable"\nproject = "{project}"\n'
                    f'instance = "{instance}"\n{at}', encoding="utf-8")
    try:
        load_config(path)
    except ConfigError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize(("project", "broken"), [
    ("p", "it has 1 character, not 6 to 30"),
    ("pro-j", "it has 5 characters, not 6 to 30"),
    ("p" * 31, "it has 31 characters, not 6 to 30"),
    ("My-project", "'M' is not a lowercase letter, a digit or a hyphen"),
    ("my_project", "'_' is not a lowercase letter, a digit or a hyphen"),
    ("1-project", "it starts with '1', not a letter"),
    ("my-project-", "it ends with a hyphen"),
])
def test_a_project_id_breaking_a_rule_is_refused_naming_it(
        tmp_path: Path, project: str, broken: str) -> None:
    refused = load(tmp_path, project)
    assert refused is not None
    assert refused.startswith(f"{tmp_path / 'm.toml'}: [target] project: expected a Google "
                              "Cloud project id (6 to 30 characters, lowercase letters, "
                              "digits and hyphens, starting with a letter, not ending with a "
                              "hyphen; any length on the emulator)")
    assert f"but {broken}, got {project!r}" in refused
    assert len(refused.splitlines()) == 1


@pytest.mark.parametrize(("project", "instance", "taken"), [
    ("a" * 6, "b" * 6, True), ("a" * 30, "b" * 33, True), ("my-project", "a1-b2-c3", True),
    ("a" * 30, "b" * 34, False), ("a" * 5, "b" * 6, False),
])
def test_the_lengths_are_googles_own(tmp_path: Path, project: str, instance: str,
                                     taken: bool) -> None:
    refused = load(tmp_path, project, instance)
    assert (refused is None) == taken, refused
    if instance == "b" * 34:
        assert refused is not None and "[target] instance: expected a Google Cloud instance " \
            "id (6 to 33 characters" in refused and "it has 34 characters, not 6 to 33" in refused


def test_the_emulator_takes_any_length_but_not_any_shape(tmp_path: Path) -> None:
    assert load(tmp_path, "p", "i", emulator=True) is None  # as the emulator takes them
    refused = load(tmp_path, "p", "I", emulator=True)
    assert refused is not None and "[target] instance:" in refused
    assert "but 'I' is not a lowercase letter, a digit or a hyphen, got 'I'" in refused


def test_the_guide_states_googles_rules() -> None:
    text = " ".join(GUIDE.read_text("utf-8").split())
    assert re.search(r"a project id has 6 to 30 characters, an instance id 6 to 33; both are "
                     r"lowercase letters, digits and hyphens, start with a letter and do not "
                     r"end with a hyphen", text)
    assert "On the emulator (`emulator_host`) any length is taken" in text
