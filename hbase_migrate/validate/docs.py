"""Data Docs that render offline: the web assets Great Expectations' pages load from CDNs
are copied from the npm packages ``scripts/docs-assets.sh`` fetched at set-up time (into
``docs_assets/`` beside this module) into a vendor folder beside the pages, and the pages'
links rewritten to them (relative links: the folder can be moved or archived whole), without
the CDN's integrity and CORS attributes (a page opened from a file has no origin: a browser
refuses CORS loads of its local copies); remote logo images become an inline blank image.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from functools import partial
from pathlib import Path

log = logging.getLogger(__name__)

ASSETS = Path(__file__).with_name("docs_assets")
VENDOR = Path("static") / "vendor"
# CDN address -> file inside the npm package folders (package/path)
CDN_FILES = {
    "https://maxcdn.bootstrapcdn.com/bootstrap/4.3.1/css/bootstrap.min.css":
        "bootstrap/dist/css/bootstrap.min.css",
    "https://stackpath.bootstrapcdn.com/bootstrap/4.3.1/js/bootstrap.min.js":
        "bootstrap/dist/js/bootstrap.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.css":
        "bootstrap-table/dist/bootstrap-table.min.css",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/bootstrap-table.min.js":
        "bootstrap-table/dist/bootstrap-table.min.js",
    "https://unpkg.com/bootstrap-table@1.19.1/dist/extensions/filter-control/"
    "bootstrap-table-filter-control.min.js":
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.min.js",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/"
    "bootstrap-table-filter-control.css":
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.css",
    "https://unpkg.com/bootstrap-table@1.19.0/dist/extensions/filter-control/"
    "bootstrap-table-filter-control.min.css":
        "bootstrap-table/dist/extensions/filter-control/bootstrap-table-filter-control.min.css",
    "https://code.jquery.com/jquery-3.7.1.min.js": "jquery/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/popper.js/1.12.9/umd/popper.min.js":
        "popper.js/dist/umd/popper.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/font-awesome/6.6.0/css/all.min.css":
        "@fortawesome/fontawesome-free/css/all.min.css",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/js/"
    "bootstrap-datepicker.min.js": "bootstrap-datepicker/dist/js/bootstrap-datepicker.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/bootstrap-datepicker/1.9.0/css/"
    "bootstrap-datepicker.min.css":
        "bootstrap-datepicker/dist/css/bootstrap-datepicker.min.css",
    "https://cdn.jsdelivr.net/npm/vega@5": "vega/build/vega.min.js",
    "https://cdn.jsdelivr.net/npm/vega-lite@5": "vega-lite/build/vega-lite.min.js",
    "https://cdn.jsdelivr.net/npm/vega-embed@6": "vega-embed/build/vega-embed.min.js",
    "https://cdn.jsdelivr.net/npm/@forevolve/bootstrap-dark@1.1.0/dist/css/"
    "bootstrap-prefers-dark.css": "@forevolve/bootstrap-dark/dist/css/bootstrap-prefers-dark.css",
}
CDN_FOLDERS = ("@fortawesome/fontawesome-free/webfonts",)  # what all.min.css loads by url()
BLANK_IMAGE = ("data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
_REMOTE_IMAGE = re.compile(r"https://great-expectations-web-assets\.s3[^\"' )]*")
_URL = re.compile("|".join(re.escape(u) for u in sorted(CDN_FILES, key=len, reverse=True))
                  + r"(?![\w.@/-])")
_TAG = re.compile(r"<(?:script|link)\b[^>]*>")
_CDN_ONLY = re.compile(r"\s(?:integrity|crossorigin)=\"[^\"]*\"")


def _local(up: str, match: re.Match[str]) -> str:
    return f"{up}/{CDN_FILES[match.group(0)]}"


def _unpin(up: str, match: re.Match[str]) -> str:
    tag = match.group(0)
    return _CDN_ONLY.sub("", tag) if f'="{up}/' in tag else tag


def assets_available(assets: Path = ASSETS) -> bool:
    return all((assets / f).is_file() for f in CDN_FILES.values())


def make_offline(site: Path, vendor: Path | None = None, assets: Path = ASSETS) -> bool:
    """Rewrite every page of the Data Docs ``site`` to local copies of its CDN assets,
    kept in ``vendor`` (default: the site's ``static/vendor``; sites may share one).
    Returns False (pages left as they are, logged) when the assets were not fetched."""
    if not assets_available(assets):
        log.warning("Data Docs in %s keep their CDN links: the web assets are missing from "
                    "%s (run `make docs-assets`)", site, assets)
        return False
    vendor = vendor or site / VENDOR
    for relative in [*CDN_FILES.values(), *CDN_FOLDERS]:
        source, copy = assets / relative, vendor / relative
        if copy.exists():
            continue
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, copy)
        else:
            shutil.copyfile(source, copy)
    for page in site.rglob("*.html"):
        if vendor in page.parents:
            continue
        up = Path(os.path.relpath(vendor, page.parent)).as_posix()
        text = page.read_text(encoding="utf-8")
        new = _TAG.sub(partial(_unpin, up), _URL.sub(partial(_local, up), text))
        new = _REMOTE_IMAGE.sub(BLANK_IMAGE, new)
        if new != text:
            page.write_text(new, encoding="utf-8")
    return True
