"""What the wheel holds, read from pyproject.toml without building it (``make
package-check`` builds and installs it): every module an entry point, the provider's hooks
or a DAG file names is in one of its packages, the files it ships exist, and its build hook
compiles every hot path ``hbase-migrate --version`` reports on."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

from hbase_migrate.airflow_dags import DAGS, PACKAGE
from hbase_migrate.airflow_provider import provider_info
from hbase_migrate.compiled import HOT_PATHS

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
WHEEL = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]


def _named_modules() -> set[str]:
    project = PYPROJECT["project"]
    targets = [*project["scripts"].values()]
    for group in project["entry-points"].values():
        targets += group.values()
    modules = {t.partition(":")[0] for t in targets}
    modules |= {kind["hook-class-name"].rpartition(".")[0]
                for kind in provider_info()["connection-types"]}
    modules |= {f"{PACKAGE}.{name}" for name in DAGS.values()}
    return modules


def test_every_named_module_is_in_a_package_of_the_wheel() -> None:
    packages = set(WHEEL["packages"])
    named = _named_modules()
    assert "hbase_migrate_airflow.hooks.hbase" in named  # the provider's hook among them
    missing = sorted(m for m in named if m.split(".")[0] not in packages)
    assert missing == []
    for module in named:  # and each is a file of that package in the source tree
        path = REPO.joinpath(*module.split("."))
        assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), module


def test_the_files_the_wheel_ships_exist() -> None:
    for source, target in WHEEL["force-include"].items():
        assert (REPO / source).exists(), source
        assert target.split("/")[0] in WHEEL["packages"], target
    assert WHEEL["force-include"]["airflow.cfg"] == "hbase_migrate/_airflow/airflow.cfg"


def test_the_build_hook_compiles_every_hot_path() -> None:
    spec = importlib.util.spec_from_file_location("build_speedups",
                                                  REPO / "scripts" / "build-speedups.py")
    assert spec is not None and spec.loader is not None
    speedups = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speedups)
    compiled = {".".join(s.relative_to(REPO).with_suffix("").parts) for s in speedups.SOURCES}
    assert compiled == set(HOT_PATHS)
    assert "hbase_migrate" in WHEEL["packages"]
    assert WHEEL["hooks"]["custom"]["dependencies"] == ["cython==3.3.1"]
    assert (REPO / "hatch_build.py").exists()
