"""The docs site builds with ``mkdocs build --strict`` (a broken link, a missing page or an
anchor that does not exist fails), every page of the nav is there, and nothing is fetched
from the network when a page is read (no CDN, no web fonts)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parents[2]
MKDOCS = Path(sys.executable).parent / "mkdocs"

# mkdocs builds the site in a process of its own: embedded, not unit
pytestmark = pytest.mark.integration


def _nav_pages(nav: list[object]) -> list[str]:
    found: list[str] = []
    for item in nav:
        values = item.values() if isinstance(item, dict) else [item]
        for value in values:
            found += _nav_pages(value) if isinstance(value, list) else [str(value)]
    return found


def _build(folder: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MKDOCS), "build", "--strict", "--site-dir", str(out)],
                          cwd=folder, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = _build(REPO, out)
    assert done.returncode == 0, done.stderr[-4000:]
    return out


def test_every_page_of_the_nav_is_built(site: Path) -> None:
    config = yaml.load((REPO / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    pages = _nav_pages(config["nav"])
    assert len(pages) >= 20
    for page in pages:
        html = site / page.replace(".md", ".html")
        assert html.is_file(), page
        assert "<h1" in html.read_text("utf-8"), page


def test_pages_fetch_nothing_from_the_network(site: Path) -> None:
    external = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*(?:src|href)=["']?(?:https?:)?//""",
                          re.I)
    pages = list(site.rglob("*.html"))
    assert pages
    for page in pages:
        found = external.findall(page.read_text("utf-8"))
        assert not found, (page.relative_to(site), found)
    styles = "".join(p.read_text("utf-8") for p in site.rglob("*.css"))
    assert "fonts.googleapis" not in styles and "@import url(http" not in styles


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """The strict build is a real check: a page of a site with this site's settings (its
    nav and generated pages aside) that links to a page that does not exist is refused."""
    config = (REPO / "mkdocs.yml").read_text().split("\nnav:")[0]
    config = config.replace("hooks:\n  - scripts/mkdocs_hooks.py\n", "")
    assert "strict: true" in config and "not_found: warn" in config
    (tmp_path / "mkdocs.yml").write_text(config)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# A page\n\n[gone](no-such-page.md)\n")
    done = _build(tmp_path, tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stderr
    (tmp_path / "docs" / "index.md").write_text("# A page\n")
    assert _build(tmp_path, tmp_path / "site").returncode == 0
