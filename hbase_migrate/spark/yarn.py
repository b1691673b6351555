"""Spark on YARN (``master = "yarn"``, client mode): what is checked on the driver before
the session starts, so that a bad set-up fails in one line naming the fix before any task
(:func:`check_yarn`: ``HADOOP_CONF_DIR``, the queue, an archive named in ``spark.archives``),
which YARN containers ran a step's tasks (:func:`in_container`, :class:`Placement`), and
Spark's own jars staged once on the cluster (:func:`staged_jars`).

The executors are YARN containers: their ``python3`` (``spark.pyspark.python``) with the
project's archive unpacked beside them (:mod:`hbase_migrate.spark.archive`) and pyspark from
the ``pyspark.zip`` Spark's YARN client ships from this driver's pyspark, so of its version.
While the session's JVM starts, this process's ``PYTHONPATH`` is left out of its
environment (:func:`driver_environment`): Spark's YARN client would add it to the
executors' ``PYTHONPATH``, and they cannot see the driver's folders.

Unless ``spark.yarn.archive`` or ``spark.yarn.jars`` is set, Spark's YARN client zips its
jars (pip's pyspark: about 460 MB) and uploads them to the staging folder for every
application, and each NodeManager unpacks them again. :func:`staged_jars` packs them once per
pyspark version (stored, not compressed: they are jars), uploads that archive once to the
user's home folder on the cluster's file system (``.hbase-migrate/``) and names it as
``spark.yarn.archive``, so that later applications ship nothing but their own files and the
NodeManagers reuse what they unpacked.
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
from hbase_migrate.spark.archive import cache_dir

CONF_VARS = ("HADOOP_CONF_DIR", "YARN_CONF_DIR")  # where Spark's YARN client reads them
QUEUE_KEY = "spark.yarn.queue"
JARS_KEYS = ("spark.yarn.archive", "spark.yarn.jars")  # set: Spark's jars are the user's
STAGED = ".hbase-migrate"  # the folder of the user's home on the cluster's file system
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


def yarn_line(yarn: Mapping[str, Any]) -> str:
    """A step's YARN application (:meth:`Placement.to_metrics`), its queue and the
    containers its tasks ran in (with how many each), in one line of its output."""
    containers = yarn.get("containers", {})
    ran = ", ".join(f"{c} ({n})" for c, n in sorted(containers.items()))
    return (f"yarn: application {yarn['application']} in queue {yarn['queue']}; tasks ran "
            f"in {len(containers)} container{'' if len(containers) == 1 else 's'}: "
            f"{ran or 'none'}")


def jars_archive(folder: Path | None = None) -> Path:
    """pyspark's jars as one zip in the cache (``spark/``), built once per pyspark version."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    folder = folder or cache_dir() / "spark"
    target = folder / f"spark-jars-{pyspark.__version__}.zip"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as packed:
            for jar in sorted(jars.glob("*.jar")):
                packed.write(jar, jar.name)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def staged_jars(conf: Mapping[str, str]) -> dict[str, str]:
    """The ``spark.yarn.archive`` setting naming Spark's jars on the cluster's file system
    (uploaded now when that copy is missing or of another size); none when ``conf`` names
    Spark's jars already. Starts this process's Spark JVM (with ``conf``) to reach it."""
    if any(key in conf for key in JARS_KEYS):
        return {}
    from pyspark import SparkConf, SparkContext

    local = jars_archive()
    # (the master too: spark-submit ships pyspark.zip to YARN's containers for it)
    SparkContext._ensure_initialized(conf=SparkConf(loadDefaults=False).setAll(
        [("spark.master", "yarn"), *conf.items()]))
    jvm: Any = SparkContext._jvm
    hadoop = jvm.org.apache.hadoop
    fs = hadoop.fs.FileSystem.get(hadoop.conf.Configuration())
    staged = hadoop.fs.Path(fs.getHomeDirectory(), f"{STAGED}/{local.name}")
    size = local.stat().st_size
    if not fs.exists(staged) or fs.getFileStatus(staged).getLen() != size:
        partial = hadoop.fs.Path(fs.getHomeDirectory(), f"{STAGED}/.{local.name}.{os.getpid()}")
        fs.copyFromLocalFile(False, True, hadoop.fs.Path(str(local)), partial)
        fs.delete(staged, False)
        if not fs.rename(partial, staged):
            raise ConfigError(f"Spark on YARN: cannot move {partial} to {staged} on "
                              f"{fs.getUri()}")
        log.info("YARN: Spark's jars (%d MB) staged as %s", size >> 20, staged)
    return {"spark.yarn.archive": str(fs.makeQualified(staged).toString())}
