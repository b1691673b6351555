"""MkDocs hooks of the docs site (``mkdocs.yml``: ``hooks``): the reference pages and the
troubleshooting page are generated from the code at each build (``scripts/gen_reference.py``),
in memory, so the site always describes the code it was built from."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    from scripts.gen_reference import generate

    for path, text in generate():
        files.append(File.generated(config, path, content=text))
    return files


@event_priority(-100)  # after the offline plugin, which adds a shim from a CDN
def on_config(config: Any) -> Any:
    """No script from the network: the site is read offline (search then needs the site
    served over HTTP, e.g. ``python -m http.server -d build/site``)."""
    polyfills = config.extra.get("polyfills", [])
    config.extra["polyfills"] = [url for url in polyfills if "://" not in url]
    return config
