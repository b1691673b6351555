"""The report and ``status`` read the newest validation the same way: a validation made in
parts is one run of every planned range (the report once took its last part for the run,
and listed each part as a run of its own)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.status import compute_status
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import judge_validation, prepare, snapshot, validate
from hbase_migrate.lifecycle.validate import validation_parts
from hbase_migrate.report import model, sections
from hbase_migrate.report.validation_sections import validation
from hbase_migrate.wal.model import Cell, CellType
from tests.support.minicluster import EmbeddedClusters, run_workload, t2
from tests.support.ranges import TABLE, configure, planned


@pytest.mark.integration
def test_a_validation_in_parts_is_one_run_in_the_report_and_in_status(
        tmp_path: Path, make_embedded: EmbeddedClusters) -> None:
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=44, ops=300)
    config = configure(tmp_path, src, dst, master="in-process")
    spec = load_config(config)
    prepare(spec)
    snapshot(spec)
    ranges = planned(config)
    with t2(dst) as target:  # one range of the target differs from the source
        target.put_cells(TABLE, [Cell(b"row-00042-x", b"d", b"q", 9, CellType.PUT, b"x")])
    parts = validation_parts(spec, parts=3)
    for i, n in parts:
        validate(spec, part=(i, n), run="r1", recompare_wait=0)
    assert not judge_validation(spec, "r1").passed

    with Ledger.open(spec.ledger_url) as ledger:
        status = compute_status(ledger, now=now_ms()).migrations[0].last_validation
        data = model.load(ledger, spec.name, now_ms())
    assert len(parts) == 3 and len(ranges) > 3
    assert status is not None and (status.ranges, status.mismatched) == (len(ranges), 1)
    facts = {label: value for label, value, _ in sections.facts_of(data)}
    assert facts["ranges matching"] == f"{len(ranges) - 1} / {len(ranges)}"
    html = validation(data, None)
    assert (f"The newest validation compared {len(ranges)} key range(s) of 1 table(s): "
            f"{len(ranges) - 1} match, 1 differ.") in html
    runs = html.split("<h3>Validation runs</h3>")[1].split("</table>")[0]
    assert len(re.findall(r"<tr><td>", runs)) == 1, runs  # the three parts: one run
