"""The report in a real headless Chromium: it renders without a single request beyond its own
file, every plot is laid out and painted, and the page has the width of the window (nothing
overflows) and the height of its content."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.report import build_report
from tests.browser import Browser, colours, find_chromium, png_size
from tests.report.synthetic import NAME, PLOTS, build

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(find_chromium() is None, reason="Chromium is not installed")]
WIDTH = 1280


@pytest.fixture(scope="module")
def opened(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Browser, Path]]:
    folder = tmp_path_factory.mktemp("report")
    facts = build(folder)
    page = folder / "report.html"
    with Ledger.open(facts.url, upgrade_schema=False) as ledger:
        page.write_text(build_report(ledger, NAME, now=facts.now, report_dir=folder),
                        encoding="utf-8")
    with Browser(width=WIDTH, height=900) as browser:
        browser.open(page.as_uri())
        yield browser, page


def test_nothing_is_fetched_but_the_page_itself(opened: tuple[Browser, Path]) -> None:
    browser, page = opened
    assert browser.requests == [page.as_uri()]
    assert browser.failed == []


def test_every_plot_is_laid_out_and_painted(opened: tuple[Browser, Path]) -> None:
    browser, _ = opened
    boxes = browser.evaluate(
        "Object.fromEntries([...document.querySelectorAll('svg[data-plot]')].map(e => {"
        " const r = e.getBoundingClientRect();"
        " return [e.dataset.plot, {x: r.left + scrollX, y: r.top + scrollY, width: r.width,"
        " height: r.height, marks: e.querySelectorAll('rect,polyline,circle').length}]; }))")
    assert set(boxes) == PLOTS
    for name, box in boxes.items():
        assert box["width"] > 600 and box["height"] > 20, (name, box)
        assert box["marks"] > 2, name
        shot = browser.screenshot(scale=0.5, clip={k: box[k] for k in ("x", "y", "width",
                                                                        "height")})
        found = colours(shot)
        background, most = max(found.items(), key=lambda item: item[1])
        painted = sum(found.values()) - most
        assert len(found) >= 4, f"{name}: {len(found)} colour(s) only"
        assert painted / sum(found.values()) > 0.02, f"{name}: almost blank ({background})"


def test_the_page_fits_the_window_and_holds_its_content(opened: tuple[Browser, Path]) -> None:
    browser, _ = opened
    content_height = browser.evaluate("document.documentElement.scrollHeight")
    png = browser.screenshot(full_page=True)
    width, height = png_size(png)
    assert width == WIDTH  # no table or plot wider than the window
    assert height == content_height > 3000  # six sections, all rendered
    top = browser.screenshot(scale=0.25, clip={"x": 0, "y": 0, "width": WIDTH,
                                               "height": 900})
    assert len(colours(top)) > 20  # header, cards, the verdict: not a blank page


def test_closing_the_browser_leaves_no_process() -> None:
    with Browser(width=400, height=300) as browser:
        browser.open("about:blank")
        group = browser.pid
        assert group is not None
        members = [p for p in Path("/proc").glob("[0-9]*/stat") if _group_of(p) == group]
        assert len(members) > 1  # the browser and its helpers
    assert not [p for p in Path("/proc").glob("[0-9]*/stat") if _group_of(p) == group]


def _group_of(stat: Path) -> int | None:
    try:
        fields = stat.read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[2]) if fields[0] != "Z" else None
