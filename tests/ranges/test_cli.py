"""``hbase-migrate snapshot`` and ``validate`` on the range engine (in-process): exit 0 when
every range matches, 1 when some differ (listed with hex bounds, ``--explain`` for one), 2 on
errors; ``--json``, ``--table``, ``--repair``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.wal.model import Cell, CellType
from tests.cli_util import fails, run
from tests.support.minicluster import EmbeddedClusters, compare, run_workload, t2
from tests.support.ranges import TABLE, configure, holding, planned

pytestmark = pytest.mark.integration


def test_exit_codes_listing_explain_and_repair(tmp_path: Path, make_embedded: EmbeddedClusters,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=51, ops=200)
    config = str(configure(tmp_path, src, dst, master="in-process"))
    assert run(["prepare", "--config", config], capsys)[0] == 0
    code, out = run(["snapshot", "--config", config, "--json"], capsys)
    assert code == 0 and json.loads(out)["ranges_copied"] > 1
    code, out = run(["validate", "--config", config], capsys)
    assert code == 0 and out.splitlines()[-2] == "verdict: match", out

    extra = Cell(b"row-00042-x", b"d", b"q", 9, CellType.PUT, b"extra")
    with t2(dst) as target:
        target.put_cells(TABLE, [extra])
    (bad,) = holding(planned(Path(config)), extra.row)
    code, out = run(["validate", "--config", config, "--table", TABLE,
                     "--recompare-wait", "0s"], capsys)
    assert code == 1
    assert f"(--explain {bad})" in out and "only in target: row=row-00042-x" in out, out
    code, out = run(["validate", "--config", config, "--explain", bad, "--json"], capsys)
    explained = json.loads(out)
    assert code == 1 and explained["only_in_target"] == 1
    assert explained["examples"] == ["only in target: row=row-00042-x column=d:q ts=9"]

    code, out = run(["validate", "--config", config, "--repair", "--json",
                     "--recompare-wait", "0s"], capsys)
    result = json.loads(out)
    assert code == 0 and result["verdict"] == "match"
    (repaired,) = result["tables"][0]["repaired"]
    assert (f"{repaired['table']}:{repaired['start']}-{repaired['stop']}",
            repaired["puts"], repaired["deletes"]) == (bad, 0, 1)
    assert compare(src, dst, TABLE).equal

    assert "has no table nope" in fails(["validate", "--config", config, "--table",
                                         "nope"], capsys)
    gateway = dst.endpoints.thrift2
    dst.stop()
    error = fails(["validate", "--config", config], capsys)  # its tables checked first
    assert f"gateway {gateway}: tableExists orders: unreachable" in error, error
