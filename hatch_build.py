"""The wheel's compiled hot loops: hatchling's build hook compiles the project's Cython
modules (``scripts/build-speedups.py``, the list ``make setup`` builds in a checkout) for the
interpreter and platform building the wheel, which is then tagged for them
(``cp311-cp311-linux_x86_64``). Where that fails (no C compiler, no Python headers) or
``HBASE_MIGRATE_PURE_WHEEL=1`` asks for it, the wheel is pure Python: the same results,
slower, and ``hbase-migrate --version`` says so. An editable install compiles nothing
(``make setup`` builds the modules beside their sources). The web assets the validation's
Data Docs load (``hbase_migrate/validate/docs_assets``, fetched by ``make setup``, kept out
of git) go into the wheel where they are: the files ``validate/docs.py`` names, not the
whole npm packages."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ROOT = Path(__file__).resolve().parent
DOCS = ROOT / "hbase_migrate" / "validate" / "docs.py"
ASSETS = DOCS.with_name("docs_assets")


def _speedups() -> ModuleType:
    """scripts/build-speedups.py, as a module."""
    spec = importlib.util.spec_from_file_location("build_speedups",
                                                  ROOT / "scripts" / "build-speedups.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses, if any, look their module up
    spec.loader.exec_module(module)
    return module


def docs_assets() -> dict[str, str]:
    """Each web asset file docs.py copies beside Data Docs (its CDN_FILES and CDN_FOLDERS,
    read from its source: the build does not import the package) -> its place in the
    wheel; nothing where the assets were not fetched."""
    if not ASSETS.is_dir():
        return {}
    names: dict[str, object] = {}
    for node in ast.parse(DOCS.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], ast.Name) and node.targets[0].id in ("CDN_FILES",
                                                                      "CDN_FOLDERS"):
            names[node.targets[0].id] = ast.literal_eval(node.value)
    cdn_files, cdn_folders = names.get("CDN_FILES", {}), names.get("CDN_FOLDERS", ())
    assert isinstance(cdn_files, dict) and isinstance(cdn_folders, tuple), DOCS
    files = {Path(f) for f in cdn_files.values()}
    for folder in cdn_folders:
        files |= {p.relative_to(ASSETS) for p in (ASSETS / folder).rglob("*") if p.is_file()}
    return {str(ASSETS / f): f"hbase_migrate/validate/docs_assets/{f.as_posix()}"
            for f in sorted(files) if (ASSETS / f).is_file()}


class SpeedupsHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        build_data["force_include"].update(docs_assets())
        if os.environ.get("HBASE_MIGRATE_PURE_WHEEL") == "1":
            self.app.display_warning("hbase-migrate: a pure-Python wheel "
                                     "(HBASE_MIGRATE_PURE_WHEEL=1)")
            return
        speedups = _speedups()
        self.work = work = Path(tempfile.mkdtemp(prefix="hbase-migrate-speedups-"))
        built: dict[str, str] = {}
        try:
            for source in speedups.SOURCES:
                name = speedups.target(source).name
                out = work / name
                speedups.compile_module(source, out, work / "c")
                built[str(out)] = source.parent.relative_to(ROOT).joinpath(name).as_posix()
        except speedups.BuildError as exc:
            self.app.display_warning(f"hbase-migrate: the hot loops could not be compiled, "
                                     f"the wheel is pure Python (same results, slower): {exc}")
            return
        build_data["force_include"].update(built)
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"hbase-migrate: {len(built)} compiled modules in the wheel")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        work = getattr(self, "work", None)
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
