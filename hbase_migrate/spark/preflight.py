"""The pre-flight job: before a step's first task on a cluster master, a small Spark job
checks the executors it reaches (the Python Spark starts there, the project's imports, the
versions the driver has, the folders and addresses of both clusters). A lack fails the step
in one line naming the executor and what it lacks; the job failing outright (no Python
there: ``Cannot run program``) fails it with the executor's own cause."""

from __future__ import annotations

import sys
from functools import partial
from importlib import metadata
from typing import Any
from urllib.parse import urlsplit

from hbase_migrate.cluster.endpoints import ClusterEndpoints, parse_host_port
from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.hbase import open_cluster
from hbase_migrate.spark.errors import task_error
from hbase_migrate.spark.executors import PYTHON_KEY, ExecutorSetup

# the modules whose functions Spark tasks run
TASK_MODULES = ("hbase_migrate.ranges.tasks", "hbase_migrate.replay.spark",
                "hbase_migrate.validate.run")
JOB_GROUP = "hbase-migrate-preflight"


class ExecutorError(HBaseMigrateError):
    """A cluster's executors cannot run the migration's tasks."""


def addresses(role: str, endpoints: ClusterEndpoints) -> list[tuple[str, str, int]]:
    """(what, host, port) a task of ``endpoints``' cluster connects to first."""
    found = []
    for what, value in (("Thrift gateway", endpoints.thrift),
                        ("Thrift2 gateway", endpoints.thrift2)):
        if value:
            found.append((what, *parse_host_port(value, what)))
    for server in (endpoints.zookeeper or "").split(","):
        if server.strip():
            found.append(("ZooKeeper", *parse_host_port(server.strip().split("/")[0],
                                                        "zookeeper")))
    found += [("RPC registry server", host, port) for host, port in endpoints.bootstrap]
    if endpoints.webhdfs:
        url = urlsplit(endpoints.webhdfs)
        found.append(("WebHDFS", url.hostname or "", url.port or 9870))
    return [(f"{role} cluster {endpoints.name!r} {what}", host, port)
            for what, host, port in found]


def wanted(spec: MigrationSpec, setup: ExecutorSetup, wal: bool) -> dict[str, Any]:
    """What every executor must have for ``spec``'s tasks (``wal``: the replay's too)."""
    import pyspark

    source, target = open_cluster(spec.source).endpoints, open_cluster(spec.target).endpoints
    versions = {"pyspark": pyspark.__version__}
    if setup.archive is not None:
        versions.update(setup.archive.versions)
    else:
        versions["hbase-migrate"] = metadata.version("hbase-migrate")
    paths = {}
    if wal and not source.webhdfs and (source.hbase_root_dir or source.hbase_root):
        paths[f"source cluster {source.name!r} WAL folder"] = \
            source.hbase_root_dir or source.hbase_root
    return {"python": "{}.{}".format(*sys.version_info[:2]) if setup.archive else None,
            "modules": list(TASK_MODULES), "versions": versions, "paths": paths,
            "reach": addresses("source", source) + addresses("target", target)}


# what an executor's Python lacks, or a Python Spark could not start (the job's own cause)
PYTHON_PROBLEMS = ("runs Python ", "has pyspark ", "No module named 'pyspark'",
                   "Cannot run program")


def remedy(problem: str, setup: ExecutorSetup, check: dict[str, Any]) -> str:
    """What to do about ``problem`` (an executor's, or the failed job's cause), as the end of
    the refusal: ``""`` for a problem that is its own remedy (a folder, an address)."""
    if not any(p in problem for p in PYTHON_PROBLEMS):
        return ""
    pyspark = check["versions"]["pyspark"]
    if setup.archive is None:  # [spark] python: an interpreter with the project installed
        return (f"; install pyspark {pyspark} and hbase-migrate[executor] into "
                f"{setup.python} on every worker, or set [spark] python to a Python that "
                "has them")
    return (f"; name a Python {check['python']} with pyspark {pyspark} that every worker "
            f"has: --conf {PYTHON_KEY}=/path/to/python, or \"{PYTHON_KEY}\" in [spark] conf")


def preflight(spark: Any, spec: MigrationSpec, setup: ExecutorSetup, *,
              wal: bool = False) -> list[dict[str, Any]]:
    """Run the probe on the executors of ``spark`` (twice as many tasks as it has cores, at
    least 4); the answers, or an :class:`ExecutorError` for the first lack."""
    from pyspark import cloudpickle

    from hbase_migrate.spark import probe

    context = spark.sparkContext
    master = str(context.master)
    tasks = max(4, 2 * int(context.defaultParallelism))
    check = wanted(spec, setup, wal)
    # by value: the probe runs where the project cannot be imported
    cloudpickle.register_pickle_by_value(probe)  # type: ignore[no-untyped-call]
    try:
        context.setJobGroup(JOB_GROUP, f"pre-flight of migration {spec.name}")
        answers: list[dict[str, Any]] = context.parallelize(range(tasks), tasks).map(
            partial(probe.probe, check)).collect()
    except Exception as exc:
        cause = task_error(exc)
        raise ExecutorError(f"Spark pre-flight on {master}: no task ran: {cause}; "
                            f"{setup.description}{remedy(cause, setup, check)}") from exc
    finally:
        cloudpickle.unregister_pickle_by_value(probe)  # type: ignore[no-untyped-call]
    for answer in answers:
        if answer["problems"]:
            problem = answer["problems"][0]
            raise ExecutorError(f"Spark pre-flight on {master}: {answer['executor']} "
                                f"{problem}; {setup.description}"
                                f"{remedy(problem, setup, check)}")
    return answers


def summary(answers: list[dict[str, Any]]) -> str:
    """The executors the pre-flight reached, one line."""
    seen = sorted({f"{a['executor']} (Python {a['python']}"
                   f"{', compiled loops' if a['compiled'] else ''})" for a in answers})
    return "pre-flight passed on " + "; ".join(seen)
