"""What the pre-flight job runs on each executor: standard library only, sent by value
(:mod:`hbase_migrate.spark.preflight`), so that it runs and reports on an executor that
cannot import the project. Each answer is a dict of plain values; ``problems`` lists what
the executor lacks, each one line."""

from __future__ import annotations

import importlib
import os
import socket
import sys
from importlib import metadata
from typing import Any


def where() -> str:
    """This executor as its logs know it: the host, and the folder Spark gave it (standalone:
    ``work/<app>/<executor id>``; YARN: the container)."""
    folder = os.environ.get("CONTAINER_ID") or os.path.basename(os.getcwd())
    return f"executor {folder} on host {socket.gethostname()}"


def imported_version(name: str) -> str | None:
    """The version of distribution ``name`` here: pyspark's as imported (on YARN it comes
    from the pyspark.zip Spark ships, which has no metadata), the others' installed."""
    if name == "pyspark":
        try:
            return str(importlib.import_module("pyspark").__version__)
        except Exception:  # no pyspark, or a broken one: reported as none
            return None
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def probe(wanted: dict[str, Any], _partition: Any = None) -> dict[str, Any]:
    """Check this executor against ``wanted``: ``python`` (``"3.11"`` or None), ``modules``
    to import, ``versions`` (distribution -> version), ``paths`` (what -> a folder it must
    see) and ``reach`` (``[what, host, port]`` to connect to)."""
    problems: list[str] = []
    python = "{}.{}".format(*sys.version_info[:2])
    if wanted.get("python") and python != wanted["python"]:
        problems.append(f"runs Python {python} ({sys.executable}) where the shipped project "
                        f"is built for Python {wanted['python']}")
    for module in wanted.get("modules", ()):
        try:
            importlib.import_module(module)
        except Exception as exc:  # any failure to import: reported in one line
            problems.append(f"cannot import {module} ({type(exc).__name__}: {exc}) with "
                            f"{sys.executable}")
            break
    for name, version in wanted.get("versions", {}).items():
        found = imported_version(name)
        if found != version:
            problems.append(f"has {name} {found or '(none)'} where the driver has {version}")
    for what, folder in wanted.get("paths", {}).items():
        if not os.path.isdir(folder):
            problems.append(f"cannot see {what} {folder}")
    for what, host, port in wanted.get("reach", ()):
        try:
            socket.create_connection((host, int(port)), timeout=10).close()
        except OSError as exc:
            problems.append(f"cannot reach {what} at {host}:{port} ({exc})")
    compiled = None
    if not problems:
        from hbase_migrate.wal import hotloops

        compiled = hotloops.COMPILED is not None
    return {"executor": where(), "python": f"{python} ({sys.executable})",
            "problems": problems, "compiled": compiled}
