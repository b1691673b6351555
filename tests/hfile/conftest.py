"""Fixtures of the HFile tests: the compiled data block decoders and their references."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hbase_migrate.hfile.decoders import CELLS
from hbase_migrate.hfile.visible import VISIBLE


@pytest.fixture(params=["python", "compiled"])
def both_decoders(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python data block decoders, then the compiled ones (``make setup`` builds
    them; ``test_compiled_cells`` fails when they are not)."""
    if request.param == "compiled" and CELLS.module is None:
        pytest.skip("the compiled cell decoders are not built (make setup)")
    before = CELLS.implementation()
    CELLS.use(request.param)
    yield request.param
    CELLS.use(before)


@pytest.fixture(params=["python", "compiled"])
def both_matchers(request: pytest.FixtureRequest) -> Iterator[str]:
    """The pure-Python scan matcher (``visible.py``), then the compiled one."""
    if request.param == "compiled" and VISIBLE.module is None:
        pytest.skip("the compiled scan matcher is not built (make setup)")
    before = VISIBLE.implementation()
    VISIBLE.use(request.param)
    yield request.param
    VISIBLE.use(before)
