"""``make run ARGS="--target bigtable"`` (``hbase-migrate demo --target bigtable``, no
``--dir``) works in a folder of its own, ``state/demo-bigtable``: the HBase demo's
``state/demo`` (its report, its ledger) is left as it was (issue 71)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hbase_migrate.bigtable.emulator import PACKAGE, emulator_binary
from hbase_migrate.workdir import claim_workdir

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_bigtable_demo_leaves_the_hbase_demos_folder_alone(tmp_path: Path) -> None:
    pytest.importorskip("google.cloud.bigtable", reason="google-cloud-bigtable is not "
                        "installed (make setup)")
    if emulator_binary() is None:
        pytest.skip(f"cbtemulator is not installed (Debian package {PACKAGE})")
    hbase_demo = tmp_path / "state" / "demo"
    with claim_workdir(hbase_demo, "demo"):  # what an earlier `make run` left
        (hbase_demo / "report.html").write_text("<html>the HBase demo's report</html>")
        (hbase_demo / "ledger.db").write_bytes(b"the HBase demo's ledger")
    before = {p.relative_to(hbase_demo): p.read_bytes()
              for p in hbase_demo.rglob("*") if p.is_file()}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "hbase-migrate"), "demo", "--target", "bigtable",
         "--ops", "200", "--seed", "5"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "OK: Bigtable equals the source" in done.stdout
    assert {p.relative_to(hbase_demo): p.read_bytes()
            for p in hbase_demo.rglob("*") if p.is_file()} == before
    assert (tmp_path / "state" / "demo-bigtable" / "report.html").stat().st_size > 0
