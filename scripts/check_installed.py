"""What ``make package-check`` asks of an installed wheel, run by the Python of a fresh venv
that holds the wheel (and its dependencies) alone, outside the checkout: the provider's
entry point names hooks that import, every DAG the package declares parses in Airflow's own
DagBag from the DAG files ``hbase-migrate airflow dags`` writes, Airflow's ``providers
list`` shows the provider, the Data Docs' web assets are there, and nothing was imported
from a checkout. Prints one line per
check; exits 1 on the first that fails.

Usage: VENV/bin/python scripts/check_installed.py [--airflow-version X.Y.Z]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path

PACKAGES = ("hbase_migrate", "hbase_migrate_airflow", "minihbase", "realstack")


def fail(message: str) -> None:
    sys.exit(f"package-check: {message}")


def installed(module: object) -> bool:
    """Whether ``module`` comes from this venv's site-packages."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    return Path(getattr(module, "__file__", "") or "/").resolve().is_relative_to(site)


def check_provider() -> list[str]:
    found = [e for e in entry_points(group="apache_airflow_provider")
             if e.value.startswith("hbase_migrate.")]
    if len(found) != 1:
        fail(f"the apache_airflow_provider entry point: {found}")
    info = found[0].load()()
    hooks = []
    for kind in info["connection-types"]:
        module, _, name = kind["hook-class-name"].rpartition(".")
        hook = getattr(importlib.import_module(module), name)
        if not installed(sys.modules[module]):
            fail(f"{module} not from the installed package")
        hooks.append(f"{kind['connection-type']}: {hook.__module__}.{hook.__name__}")
    return hooks


def check_dags(folder: Path) -> list[str]:
    from hbase_migrate.airflow_dags import DAGS, write_dag_files

    write_dag_files(folder)
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(folder), load_op_links=False)
    if bag.import_errors:
        fail(f"DAG import errors: {json.dumps(bag.import_errors, indent=1)[:4000]}")
    if sorted(bag.dags) != sorted(DAGS):
        fail(f"DAGs parsed: {sorted(bag.dags)}, expected {sorted(DAGS)}")
    return sorted(bag.dags)


def check_providers_list() -> str:
    done = subprocess.run([sys.executable, "-m", "airflow", "providers", "list", "-o", "json"],
                          capture_output=True, text=True, timeout=300, check=False)
    if done.returncode:
        fail(f"airflow providers list: {done.stderr[-2000:]}")
    listed = {p["package_name"]: p for p in json.loads(done.stdout[done.stdout.index("["):])}
    if "hbase-migrate" not in listed:
        fail(f"airflow providers list has no hbase-migrate: {sorted(listed)}")
    if "Traceback" in done.stderr or "ImportError" in done.stderr:
        fail(f"airflow providers list: {done.stderr[-2000:]}")
    return str(listed["hbase-migrate"].get("version"))


def spark_version() -> str:
    """pyspark's version, or that it is not installed (the Composer recipe's extras)."""
    try:
        return version("pyspark")
    except PackageNotFoundError:
        return "not installed"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--airflow-version", help="the Airflow release that must be installed")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="airflow-home-", dir=Path.cwd()))  # package-check's
    os.environ.update(AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
                      AIRFLOW__CORE__DAGS_FOLDER=str(home / "dags"),
                      AIRFLOW__DATABASE__SQL_ALCHEMY_CONN=f"sqlite:///{home}/airflow.db")
    airflow = version("apache-airflow")
    if args.airflow_version and airflow != args.airflow_version:
        fail(f"Airflow {airflow} installed, {args.airflow_version} expected (replaced?)")
    print(f"Airflow {airflow}, pyspark {spark_version()}, hbase-migrate "
          f"{version('hbase-migrate')}")
    for hook in check_provider():
        print(f"provider hook {hook}: imports")
    print(f"DAGs parsed with no error: {', '.join(check_dags(home / 'dags'))}")
    print(f"airflow providers list: hbase-migrate {check_providers_list()}")
    from hbase_migrate.validate.docs import ASSETS, assets_available

    if not assets_available():
        fail(f"the Data Docs' web assets are not in the wheel ({ASSETS})")
    print("the Data Docs' web assets are in the wheel (they render offline)")
    outside = sorted(name for name, module in list(sys.modules.items())
                     if name.split(".")[0] in PACKAGES and not installed(module))
    if outside:
        fail(f"imported from outside the venv: {outside[:10]}")
    print("every module of the project came from the installed wheel")


if __name__ == "__main__":
    main()
