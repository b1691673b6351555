"""Great Expectations' verdict on a table of ranges, and its Data Docs rendered offline in
headless Chromium (every request the page makes must be for a file of the site folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import RangeStats
from hbase_migrate.ranges.tasks import RangePair
from hbase_migrate.validate.docs import assets_available
from hbase_migrate.validate.verdict import judge
from tests.browser import Browser, find_chromium, png_size

A, B, C, D = (KeyRange("t", b"", b"g"), KeyRange("t", b"g", b"p"), KeyRange("t", b"p", b"x"),
              KeyRange("t", b"x", b""))


def pair(r: KeyRange, source: tuple[int, int, str], target: tuple[int, int, str]) -> RangePair:
    return RangePair(RangeStats(r, *source), RangeStats(r, *target))


def test_gx_names_the_ranges_that_differ_and_the_page_renders_offline(tmp_path: Path) -> None:
    if not assets_available():
        pytest.skip("the Data Docs web assets are not fetched (make docs-assets)")
    pairs = [pair(A, (2, 5, "x"), (2, 5, "x")),
             pair(B, (2, 5, "x"), (2, 5, "y")),  # digests differ
             pair(C, (3, 6, "z"), (3, 7, "z"))]  # cell counts differ; D is missing
    verdict = judge(pairs, [A, B, C, D], tmp_path, "run-1")
    assert not verdict.success and verdict.offline
    assert verdict.mismatched == {B.id, C.id} and verdict.missing == [D.id]
    saved = json.loads(verdict.result_path.read_text())
    assert saved["success"] is False and saved["statistics"]["evaluated_expectations"] == 6

    page = verdict.docs_path
    assert page is not None and page.is_relative_to(tmp_path / "data_docs")
    html = page.read_text()
    assert "unpkg.com" not in html and "cdnjs" not in html and "cdn.jsdelivr" not in html
    if find_chromium() is None:
        pytest.skip("headless Chromium is not installed")
    with Browser(width=1280, height=900) as browser:
        browser.open(page.as_uri())
        # jQuery, Bootstrap and bootstrap-table ran from the local copies: the tables are wrapped
        wrapped = browser.wait_until(
            "document.querySelectorAll('.bootstrap-table.bootstrap4').length")
        png = browser.screenshot(full_page=False)
        requested, failed = browser.requests, browser.failed
    assert wrapped >= 1
    assert [url for url in requested if not url.startswith(("file:", "data:"))] == []
    # Great Expectations links its favicon one folder too high from validation pages
    assert [f for f in failed if "/favicon.ico:" not in f] == [], failed
    assert png_size(png) == (1280, 900)

    again = judge(pairs[:1], [A], tmp_path, "run-2")  # a second run adds to the same site
    assert again.success and again.docs_path != page and page.exists()
