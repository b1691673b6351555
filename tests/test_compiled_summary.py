"""``hbase-migrate --version`` says which hot paths run compiled, the compiled modules the
project lists are its Cython sources, and an install missing one says so once in the log."""

from __future__ import annotations

import logging
import sysconfig
from pathlib import Path

import pytest

from hbase_migrate import compiled
from hbase_migrate.cli import main
from hbase_migrate.compiled import HOT_PATHS, Choice, summary

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted((REPO / "hbase_migrate").rglob("*.pyx"))


def _module(source: Path) -> str:
    return ".".join(source.relative_to(REPO).with_suffix("").parts)


def test_the_hot_paths_are_the_cython_sources() -> None:
    assert sorted(HOT_PATHS) == sorted(map(_module, SOURCES))


def test_version_names_the_compiled_ones(capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HBASE_MIGRATE_PURE_PYTHON", raising=False)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = [HOT_PATHS[_module(s)] for s in SOURCES if s.with_name(s.stem + suffix).exists()]
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first == "hbase-migrate, version 0.1.0"
    if len(built) == len(SOURCES):  # a checkout after make setup
        head, _, names = second.partition(" (")
        assert head == f"hot paths: all {len(built)} compiled"
        assert sorted(names.rstrip(")").split(", ")) == sorted(built)
    else:
        assert all(name in second for name in built), second


def test_a_missing_module_is_named_as_pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HBASE_MIGRATE_PURE_PYTHON", raising=False)
    monkeypatch.setattr(compiled, "HOT_PATHS", {"hbase_migrate.no_such_module": "nothing"})
    assert summary() == ("hot paths: all 1 in pure Python, none compiled in this install "
                         "(the same results, slower)")
    monkeypatch.setattr(compiled, "HOT_PATHS", {"hbase_migrate.no_such_module": "nothing",
                                                "hbase_migrate.compiled": "this module"})
    assert summary() == ("hot paths: 1 of 2 compiled (this module); in pure Python: "
                         "nothing")
    monkeypatch.setenv("HBASE_MIGRATE_PURE_PYTHON", "1")
    assert "all in pure Python" in summary()


def test_a_missing_module_is_logged_once(monkeypatch: pytest.MonkeyPatch,
                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(compiled, "_said", [])
    with caplog.at_level(logging.INFO, logger="hbase_migrate.compiled"):
        first = Choice("hbase_migrate.no_such_module", "nothing is")
        Choice("hbase_migrate.no_such_module_either", "nothing is")
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert first.implementation() == "python" and len(infos) == 1
    assert "pure Python" in infos[0].getMessage()
