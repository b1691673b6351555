"""The Bigtable emulator for the Bigtable target's tests: started once per module from
Debian's package; the tests skip, naming the package, where it is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.bigtable.emulator import PACKAGE, Emulator, emulator_binary


@pytest.fixture(scope="module")
def bigtable_emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    pytest.importorskip("google.cloud.bigtable", reason="google-cloud-bigtable is not "
                        "installed (make setup)")
    if emulator_binary() is None:
        pytest.skip(f"cbtemulator is not installed (Debian package {PACKAGE}; "
                    "scripts/system-deps.sh bigtable)")
    from hbase_migrate.bigtable.emulator import start_emulator, stop_emulator

    folder: Path = tmp_path_factory.mktemp("bigtable-emulator")
    emulator = start_emulator(folder)
    try:
        yield emulator
    finally:
        stop_emulator(folder)
