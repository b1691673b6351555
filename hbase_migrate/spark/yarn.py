"""Spark on YARN (``master = "yarn"``, client mode): what is checked on the driver before
the session starts, so that a bad set-up fails in one line naming the fix before any task
(:func:`check_yarn`: ``HADOOP_CONF_DIR``, the queue, an archive named in ``spark.archives``),
and which YARN containers ran a step's tasks (:func:`in_container`, :class:`Placement`).

The executors are YARN containers: their ``python3`` (``spark.pyspark.python``) with the
project's archive unpacked beside them (:mod:`hbase_migrate.spark.archive`) and pyspark from
the ``pyspark.zip`` Spark's YARN client ships from this driver's pyspark, so of its version.
While the session's JVM starts, this process's ``PYTHONPATH`` is left out of its
environment (:func:`driver_environment`): Spark's YARN client would add it to the
executors' ``PYTHONPATH``, and they cannot see the driver's folders.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tarfile
import urllib.request
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from xml.etree import ElementTree

from hbase_migrate.errors import ConfigError

CONF_VARS = ("HADOOP_CONF_DIR", "YARN_CONF_DIR")  # where Spark's YARN client reads them
QUEUE_KEY = "spark.yarn.queue"
DEFAULT_QUEUE = "default"
log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")


def is_yarn(master: str) -> bool:
    """Whether ``master`` is YARN's (Spark's ``--master yarn``)."""
    return master == "yarn"


def conf_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The Hadoop configuration folder Spark's YARN client reads (``HADOOP_CONF_DIR``, else
    ``YARN_CONF_DIR``), holding ``yarn-site.xml``; else a ConfigError naming the fix."""
    env = os.environ if environ is None else environ
    for var in CONF_VARS:
        if env.get(var):
            folder = Path(env[var])
            if not (folder / "yarn-site.xml").is_file():
                raise ConfigError(f"Spark master 'yarn': {var}={folder} holds no "
                                  "yarn-site.xml; point it at the cluster's Hadoop "
                                  "configuration folder (the one with yarn-site.xml and "
                                  "core-site.xml, e.g. /etc/hadoop/conf)")
            return folder
    raise ConfigError("Spark master 'yarn' needs the cluster's Hadoop configuration: export "
                      "HADOOP_CONF_DIR=/etc/hadoop/conf (the folder with yarn-site.xml and "
                      "core-site.xml) before running the step")


def site_properties(path: Path) -> dict[str, str]:
    """The properties of a Hadoop ``*-site.xml`` (name -> value, ``${name}`` expanded from
    the file's own properties)."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as exc:
        raise ConfigError(f"Spark master 'yarn': cannot read {path}: {exc}") from None
    found = {p.findtext("name", "").strip(): (p.findtext("value") or "").strip()
             for p in root.iter("property")}

    def expand(value: str) -> str:
        return re.sub(r"\$\{([^}]+)\}", lambda m: found.get(m.group(1), m.group(0)), value)
    return {name: expand(value) for name, value in found.items() if name}


def web_address(properties: Mapping[str, str]) -> str:
    """The ResourceManager's web address (``http://host:port``) from ``yarn-site.xml``."""
    address = properties.get("yarn.resourcemanager.webapp.address") or \
        f"{properties.get('yarn.resourcemanager.hostname', '0.0.0.0')}:8088"
    return f"http://{address}"


def leaf_queues(scheduler: Mapping[str, Any]) -> list[str]:
    """The leaf queues' names in the ResourceManager's ``/ws/v1/cluster/scheduler`` answer
    (the capacity and the fair scheduler's forms)."""
    info = scheduler.get("scheduler", {}).get("schedulerInfo", {})
    found: list[str] = []

    def walk(queue: Mapping[str, Any]) -> None:
        children = queue.get("queues") or queue.get("childQueues") or {}
        listed = children.get("queue", []) if isinstance(children, dict) else children
        if not listed:
            name = str(queue.get("queueName", ""))
            if name:
                found.append(name.removeprefix("root."))
            return
        for child in listed if isinstance(listed, list) else [listed]:
            walk(child)
    walk(info.get("rootQueue", info))
    return found


def check_queue(queue: str, web: str, opener: Callable[..., Any] = urllib.request.urlopen
                ) -> None:
    """A ConfigError naming the queues there are when ``queue`` is none of the
    ResourceManager's leaf queues; a warning only when its web address does not answer."""
    request = urllib.request.Request(f"{web}/ws/v1/cluster/scheduler",
                                     headers={"Accept": "application/json"})
    try:
        with opener(request, timeout=20) as answer:
            queues = leaf_queues(json.loads(answer.read()))
    except (OSError, ValueError) as exc:
        log.warning("YARN: the ResourceManager's web address %s did not answer (%s); queue "
                    "%r not checked before the session", web, exc, queue)
        return
    if queues and queue.removeprefix("root.") not in queues:
        raise ConfigError(f"Spark master 'yarn': queue {queue!r} does not exist on the "
                          f"ResourceManager at {web} (its queues: {', '.join(queues)}); set "
                          f"--conf {QUEUE_KEY}=NAME or \"{QUEUE_KEY}\" in [spark] conf to "
                          "one of them")


def archive_contents(path: Path) -> tuple[str | None, str | None]:
    """(Python minor version, pyspark version) a packed environment holds
    (``lib/python3.X/site-packages``, ``pyspark-V.dist-info``), None where it holds none."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as packed:
            names = packed.namelist()
    else:
        with tarfile.open(path) as packed:
            names = packed.getnames()
    python = pyspark = None
    for name in names:
        found = re.search(r"(?:^|/)lib/python(3\.\d+)/site-packages/", name)
        python = python or (found.group(1) if found else None)
        found = re.search(r"(?:^|/)pyspark-([^/]+?)\.dist-info/", name)
        pyspark = pyspark or (found.group(1) if found else None)
    return python, pyspark


def check_archives(archives: str, shipped: str = "") -> None:
    """A ConfigError for an archive named in ``spark.archives`` (a file on this machine;
    ``shipped``: the project's own, not checked) whose Python or pyspark is not the
    driver's: its executors' tasks would fail, or worse, differ."""
    import pyspark

    driver_python = "{}.{}".format(*sys.version_info[:2])
    for entry in (a.strip() for a in archives.split(",")):
        local = entry.split("#", 1)[0].removeprefix("file://").removeprefix("file:")
        if not entry or entry == shipped or "://" in local or not Path(local).is_file():
            continue  # (a remote archive is not read here)
        try:
            python, found = archive_contents(Path(local))
        except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
            raise ConfigError(f"spark.archives: cannot read {local}: {exc}") from None
        if (python and python != driver_python) or (found and found != pyspark.__version__):
            raise ConfigError(
                f"spark.archives: {local} holds Python {python or '?'} with pyspark "
                f"{found or '(none)'}, but the driver runs Python {driver_python} with pyspark "
                f"{pyspark.__version__}: pack it from an environment of Python {driver_python}"
                f" and pyspark {pyspark.__version__} (venv-pack), or run the step from one "
                "like the archive's")


def check_yarn(conf: Mapping[str, str], shipped: str = "") -> str:
    """The checks of a YARN session's set-up on the driver (raising a ConfigError that names
    the fix); the queue its application goes to."""
    properties = site_properties(conf_dir() / "yarn-site.xml")
    queue = conf.get(QUEUE_KEY, DEFAULT_QUEUE)
    check_queue(queue, web_address(properties))
    check_archives(conf.get("spark.archives", ""), shipped)
    return queue


@contextmanager
def driver_environment(master: str) -> Iterator[None]:
    """On YARN, this process's environment without ``PYTHONPATH`` while the session's JVM
    starts (Spark's YARN client would hand it to the executors), then as it was."""
    if not is_yarn(master):
        yield
        return
    before = os.environ.pop("PYTHONPATH", None)
    try:
        yield
    finally:
        if before is not None:
            os.environ["PYTHONPATH"] = before


def in_container(task: Callable[[T], R], item: T) -> tuple[R, str]:
    """``task(item)`` and the YARN container it ran in (``CONTAINER_ID``; ``""`` elsewhere)."""
    return task(item), os.environ.get("CONTAINER_ID", "")


@dataclass
class Placement:
    """Where a YARN application's tasks ran: its id, queue, and tasks per container."""

    application: str
    queue: str
    containers: Counter[str] = field(default_factory=Counter)

    def to_metrics(self) -> dict[str, Any]:
        return {"application": self.application, "queue": self.queue,
                "containers": dict(sorted(self.containers.items()))}
