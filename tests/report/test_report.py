"""The audit report from a ledger with known facts (written through the ledger's API): every
plot is there, the figures and names the ledger holds appear, the cutover verdict with its
reasons, artifact links relative to the report, and the command reads without writing."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import TableMapping, Verdict
from hbase_migrate.bytesutil import to_string_binary
from hbase_migrate.cli import cli
from hbase_migrate.report import build_report, model, page
from tests.cli_util import fails
from tests.report.synthetic import CUTOVER_HOST, NAME, PLOTS, Facts, build


class Page(HTMLParser):
    """The parts of the page the tests look at: plots, their marks' tooltips, links, text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.plots: dict[str, list[str]] = {}  # plot -> tooltips of its marks
        self.links: list[str] = []
        self.sources: list[str] = []  # anything that would be fetched
        self.text: list[str] = []
        self._plot: str | None = None
        self._in_title = False
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg" and a.get("data-plot"):
            self._plot = a["data-plot"]
            self.plots[self._plot or ""] = []
        if tag == "title" and self._plot:
            self._in_title = True
        if tag == "a" and a.get("href"):
            self.links.append(a["href"] or "")
        for key in ("src", "srcset"):
            if a.get(key):
                self.sources.append(a[key] or "")
        if tag == "link":
            self.sources.append(a.get("href") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg":
            self._plot = None
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title and self._plot:
            self.plots[self._plot].append(data)
        self.text.append(data)

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> Facts:
    return build(tmp_path_factory.mktemp("ledger"))


def render(facts: Facts, report_dir: Path) -> Page:
    with Ledger.open(facts.url, upgrade_schema=False) as ledger:
        return Page(build_report(ledger, NAME, now=facts.now, report_dir=report_dir))


def test_every_plot_shows_what_the_ledger_holds(facts: Facts) -> None:
    page = render(facts, Path(facts.gx_result).parents[1])
    assert set(page.plots) == PLOTS
    assert not page.sources  # nothing to fetch: styles and plots are inline
    # One bar per step in the timeline, named by who ran it.
    with Ledger.open(facts.url, upgrade_schema=False) as ledger:
        record = ledger.migration(NAME)
        assert record is not None
        steps = ledger.steps(record.id)
    bars = [t for t in page.plots["timeline"] if t.startswith("#")]
    assert len(bars) == len(steps)
    for step in steps:
        caller = step.dag_id or "command line"
        assert any(t.startswith(f"#{step.id} {step.kind} by {caller}") for t in bars)
    # One throughput bar per replay and backfill run.
    runs = [t for t in page.plots["throughput"] if re.match(r"#\d+ (replay|backfill):", t)]
    assert len(runs) == facts.replay_runs + facts.backfill_runs
    # WAL files: the counts by status add up; the failed file and the gap are named.
    counted = sum(int(t.rsplit(": ", 1)[1]) for t in page.plots["wal-status"] if ": " in t)
    assert counted == facts.files
    lanes = " ".join(page.plots["wal-lanes"])
    assert facts.failed_path in lanes and facts.gap_path in lanes
    assert "gap (missing)" in lanes and "gap (vanished)" in lanes
    # One tile per range of the newest validation; the one that still differs says so.
    tiles = page.plots["ranges"]
    assert len([t for t in tiles if t.startswith("orders [")]) == facts.ranges
    low, high = (to_string_binary(b) for b in facts.mismatched_range)
    assert any(t.startswith(f"orders [{low}, {high}): mismatch") for t in tiles)
    assert sum(": match after recompare" in t for t in tiles) == 1


def test_the_gate_the_findings_and_the_links(facts: Facts) -> None:
    report_dir = Path(facts.gx_result).parents[1]
    page = render(facts, report_dir)
    words = page.words
    assert "NO-GO: the target cannot take over yet" in words
    assert "2 open gap(s): edits lost for the target" in words
    assert "the last validation found 1 of 4 range(s) different" in words
    assert re.search(r"live scan; 2 ranges resumed from step #\d+ \(read from [^)]*\); 6 "
                     "requests sent to its region servers", words)
    assert "hbase_migrate_cutover" in words and "manual__c" in words
    assert f"on {CUTOVER_HOST}" in words  # the worker the check ran on
    assert "Bulk loads (1)" in words and facts.bulk_load_region in words
    assert f"Approximated deletes ({facts.approximated})" in words
    assert "Gaps: edits lost for the target (2 open)" in words
    # caught up: all but the gap, the failed file and the two live files read only in part
    assert f"WAL caught up {facts.files - 4} / {facts.files}" in words
    # GX results and Data Docs, linked relative to the report's folder.
    expected = {Path(p).relative_to(report_dir).as_posix()
                for p in (facts.gx_result, facts.data_docs)}
    assert expected <= set(page.links)
    assert all((report_dir / link).exists() for link in expected)


def test_a_new_migration_renders_with_placeholders(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    with Ledger.open(url) as ledger:
        ledger.ensure_migration("fresh", "a", "b", [TableMapping("t", "t")])
        page = Page(build_report(ledger, "fresh", now=1_780_000_000_000))
    assert set(page.plots) == PLOTS
    assert "No cutover check recorded yet." in page.words
    assert "No replay run recorded yet." in page.words


@dataclass(frozen=True)
class Repair:
    """A repaired range as a ledger that keeps repairs records it."""

    step_id: int | None
    table_name: str
    range_start: bytes
    range_end: bytes
    reason: str
    puts: int
    deletes: int
    verdict: Verdict | None
    repaired_at: int


def test_repaired_ranges_are_listed_with_their_verdict(facts: Facts) -> None:
    with Ledger.open(facts.url, upgrade_schema=False) as ledger:
        data = model.load(ledger, NAME, facts.now)
    low, high = facts.mismatched_range
    repaired = replace(data, repairs=[
        Repair(None, "orders", low, high, "mismatch", 3, 1, Verdict.MATCH, facts.now),
        Repair(None, "orders", b"", b"row-2", "bulk_load", 7, 0, None, facts.now)])
    words = Page(page.render(repaired)).words
    assert "Repairs (2)" in words
    assert f"orders [{to_string_binary(low)}, {to_string_binary(high)}) mismatch 3 1 match" \
        in words
    assert "orders [first row, row-2) bulk load 7 0 not compared" in words
    assert "No repair recorded." in Page(page.render(data)).words


def _config(folder: Path, url: str, name: str = NAME) -> Path:
    path = folder / "m.toml"
    path.write_text(f'[migration]\nname = "{name}"\nledger = "{url}"\n'
                    '[source]\nthrift = "127.0.0.1:1"\n[target]\nthrift = "127.0.0.1:2"\n'
                    '[[tables]]\nsource = "orders"\n', encoding="utf-8")
    return path


def test_the_command_writes_the_file_and_changes_nothing(facts: Facts, tmp_path: Path) -> None:
    ledger_file = Path(facts.url.removeprefix("sqlite:///"))
    before = ledger_file.read_bytes()
    out = tmp_path / "out" / "audit.html"
    result = CliRunner().invoke(cli, ["report", "--config", str(_config(tmp_path, facts.url)),
                                      "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"report written to {out}" in result.output
    assert "cutover verdict: no-go" in result.output
    assert set(Page(out.read_text("utf-8")).plots) == PLOTS
    assert ledger_file.read_bytes() == before  # read-only
    assert not list(out.parent.glob(".*partial"))
    # default: beside the config
    result = CliRunner().invoke(cli, ["report", "--config", str(tmp_path / "m.toml")])
    assert result.exit_code == 0 and (tmp_path / "report.html").exists()


def test_the_command_names_an_unknown_migration(facts: Facts, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path, facts.url, name="nope")
    error = fails(["report", "--config", str(config)], capsys)
    assert error.endswith(f"holds no migration 'nope' (it holds: {NAME})")
