"""Airflow's plugin scan leaves the hbase_migrate_airflow package alone: it would otherwise
import each of its files under the bare file name (``hooks/kafka.py`` as ``kafka``), which
hides installed packages of that name from every Airflow process (the GSSAPI CDC stream's
``kafka`` client among them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.airflow_home import REPO, configure

configure()

PROBE = """
import json, sys
from airflow import plugins_manager
plugins_manager.ensure_plugins_loaded()
import kafka
folder = sys.argv[1]
bare = sorted(name for name, module in list(sys.modules.items())
              if "." not in name and (getattr(module, "__file__", None) or "").startswith(folder))
print(json.dumps({"kafka": kafka.__file__, "bare": bare,
                  "errors": plugins_manager.get_import_errors()}))
"""


def test_the_plugin_scan_imports_no_file_of_the_package_under_its_bare_name() -> None:
    folder = str(REPO / "plugins")
    done = subprocess.run([sys.executable, "-c", PROBE, folder], capture_output=True,
                          text=True, timeout=300, check=False,
                          env=os.environ | {"PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["bare"] == [] and seen["errors"] == {}
    assert not seen["kafka"].startswith(folder)  # the Kafka client, not our hook module
