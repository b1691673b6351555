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
from hbase_migrate.spark.errors import task_error
from hbase_migrate.spark.executors import ExecutorSetup

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

    source, target = spec.source.endpoints(), spec.target.endpoints()
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
        raise ExecutorError(f"Spark pre-flight on {master}: no task ran: "
                            f"{task_error(exc)}; {setup.description}") from exc
    finally:
        cloudpickle.unregister_pickle_by_value(probe)  # type: ignore[no-untyped-call]
    for answer in answers:
        if answer["problems"]:
            raise ExecutorError(f"Spark pre-flight on {master}: {answer['executor']} "
                                f"{answer['problems'][0]}; {setup.description}")
    return answers


def summary(answers: list[dict[str, Any]]) -> str:
    """The executors the pre-flight reached, one line."""
    seen = sorted({f"{a['executor']} (Python {a['python']}"
                   f"{', compiled loops' if a['compiled'] else ''})" for a in answers})
    return "pre-flight passed on " + "; ".join(seen)
