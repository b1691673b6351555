"""Great Expectations judges the per-range comparison table.

One row per compared range (bounds, rows, cells and digest on each side) is validated in an
ephemeral GX context, made inside the call (GX is imported here, never at module import;
a validation step calls it in a process of its own, :mod:`hbase_migrate.validate.gx_process`):
every planned range present exactly once, rows equal, cells equal, digests equal. The
validation result is written as JSON, and a Data Docs site is built for the run and
made to render offline (:mod:`hbase_migrate.validate.docs`); both paths are returned for
the ledger (one Data Docs site per run, ``data_docs/<label>/``, sharing ``data_docs/vendor``).
Which ranges mismatch is read from GX's own unexpected rows.

A part of a validation run (:func:`by_digests`) compares its ranges' counts and digests
plainly, without GX: the run's judge validates every part's ranges with GX once.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate.heavy_imports import import_heavy
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.validate.docs import make_offline

PAIRS = (("source_rows", "target_rows"), ("source_cells", "target_cells"),
         ("source_digest", "target_digest"))
SITE = "data_docs"


@dataclass
class GxVerdict:
    """What GX said of one comparison table."""

    success: bool
    mismatched: set[str]  # ids of ranges some pair expectation flagged
    missing: list[str]  # ids of planned ranges without a row
    result_path: Path | None  # None: no GX (a part; the run's judge keeps the artifacts)
    docs_path: Path | None
    offline: bool
    statistics: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"success": self.success,
                "result": str(self.result_path) if self.result_path else None,
                "data_docs": str(self.docs_path) if self.docs_path else None,
                "offline": self.offline, "statistics": self.statistics,
                "missing_ranges": self.missing}


def by_digests(pairs: Sequence[RangePair], planned: Sequence[KeyRange]) -> GxVerdict:
    """What one part of a validation run says of its ranges before the run is judged: the
    comparisons GX makes (rows, cells, digests; every planned range present), made plainly
    and leaving no artifacts; the run's judge validates them all with GX once."""
    read = {p.range.id for p in pairs}
    mismatched = {p.range.id for p in pairs if not p.equal}
    missing = [r.id for r in planned if r.id not in read]
    return GxVerdict(success=not mismatched and not missing, mismatched=mismatched,
                     missing=missing, result_path=None, docs_path=None, offline=False,
                     statistics={"judged_by": "the validation run's judge"})


def comparison_rows(pairs: Sequence[RangePair]) -> list[dict[str, Any]]:
    return [{"range": p.range.id, "table": p.range.table, "start": p.range.start.hex(),
             "stop": p.range.stop.hex(), "source_rows": p.source.rows,
             "target_rows": p.target.rows, "source_cells": p.source.cells,
             "target_cells": p.target.cells, "source_digest": p.source.digest,
             "target_digest": p.target.digest} for p in pairs]


def _quiet_gx() -> None:
    """GX's own chatter off: some of its modules set their logger to INFO themselves
    (``data_context.types.base``: "Created temporary directory ..."), so every GX logger
    made so far is set, not only the package's."""
    names = [n for n in logging.root.manager.loggerDict if n.startswith("great_expectations.")]
    for name in ("great_expectations", *names):
        logging.getLogger(name).setLevel(logging.ERROR)


def judge(pairs: Sequence[RangePair], planned: Sequence[KeyRange], artifacts: Path,
          label: str) -> GxVerdict:
    """Validate the comparison of ``pairs`` against the ``planned`` ranges; artifacts go
    under ``artifacts`` (``validations/<label>.json`` and the ``data_docs`` site)."""
    gx: Any = import_heavy("great_expectations")
    pd: Any = import_heavy("pandas")
    base: Any = importlib.import_module("great_expectations.data_context.types.base")

    _quiet_gx()
    rows = comparison_rows(pairs)
    frame = pd.DataFrame(rows, columns=["range", "table", "start", "stop",
                                        *(c for pair in PAIRS for c in pair)])
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = base.ProgressBarsConfig(globally=False)
    site = artifacts / SITE / label  # GX rebuilds a site from its (ephemeral) stores
    context.add_data_docs_site(site_name="migration", site_config={
        "class_name": "SiteBuilder",
        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                          "base_directory": str(site)},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}})
    batch = (context.data_sources.add_pandas("ranges").add_dataframe_asset(label)
             .add_batch_definition_whole_dataframe("comparison"))
    suite = context.suites.add(gx.ExpectationSuite(name="ranges_match"))
    planned_ids = [r.id for r in planned]
    suite.add_expectation(gx.expectations.ExpectTableRowCountToEqual(value=len(planned_ids)))
    suite.add_expectation(gx.expectations.ExpectColumnValuesToBeUnique(column="range"))
    suite.add_expectation(gx.expectations.ExpectColumnValuesToBeInSet(
        column="range", value_set=planned_ids))
    for left, right in PAIRS:
        suite.add_expectation(gx.expectations.ExpectColumnPairValuesToBeEqual(
            column_A=left, column_B=right))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=label, data=batch, suite=suite))
    checkpoint = context.checkpoints.add(gx.Checkpoint(
        name=label, validation_definitions=[definition],
        actions=[gx.checkpoint.UpdateDataDocsAction(name="docs", site_names=["migration"])],
        result_format={"result_format": "COMPLETE"}))
    outcome = checkpoint.run(batch_parameters={"dataframe": frame})
    (result,) = outcome.run_results.values()
    data: dict[str, Any] = result.to_json_dict()
    mismatched: set[str] = set()
    for item in data["results"]:
        config = item["expectation_config"]
        if config["type"] == "expect_column_pair_values_to_be_equal":
            for index in item["result"].get("unexpected_index_list") or ():
                mismatched.add(rows[int(index)]["range"])
    present = {r["range"] for r in rows}
    result_path = artifacts / "validations" / f"{label}.json"
    result_path.parent.mkdir(parents=True, exist_ok=True)
    result_path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
    pages = sorted(p for p in site.rglob("*.html") if "validations" in p.relative_to(site).parts)
    offline = make_offline(site, artifacts / SITE / "vendor")
    return GxVerdict(success=bool(data["success"]), mismatched=mismatched,
                     missing=[r for r in planned_ids if r not in present],
                     result_path=result_path, docs_path=pages[-1] if pages else None,
                     offline=offline, statistics=dict(data.get("statistics", {})))
