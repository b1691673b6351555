"""Fixtures of the HFile tests: the compiled data block decoders, scan matcher and writer
loop, and their pure-Python references."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hbase_migrate.compiled import Choice
from hbase_migrate.hfile.decoders import CELLS
from hbase_migrate.hfile.visible import VISIBLE
from hbase_migrate.hfile.writer import WRITER


def _each(choice: Choice, request: pytest.FixtureRequest) -> Iterator[str]:
    """``choice`` set to the fixture's parameter for the test, then back."""
    if request.param == "compiled" and choice.module is None:
        pytest.skip(f"{choice.what} not built (make setup)")
    before = choice.implementation()
    choice.use(request.param)
    yield request.param
    choice.use(before)


@pytest.fixture(params=["python", "compiled"])
def both_decoders(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python data block decoders, then the compiled ones (``make setup`` builds
    them; ``test_compiled_cells`` fails when they are not)."""
    yield from _each(CELLS, request)


@pytest.fixture(params=["python", "compiled"])
def both_matchers(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python scan matcher (``visible.py``), then the compiled one."""
    yield from _each(VISIBLE, request)


@pytest.fixture(params=["python", "compiled"])
def both_writers(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python writer loop (``HFileWriter.append_reference``), then the compiled
    one (``_writer.pyx``), for the writers opened in the test."""
    yield from _each(WRITER, request)
