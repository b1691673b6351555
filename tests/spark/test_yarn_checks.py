"""What the driver checks before a YARN session starts, without a cluster: the Hadoop
configuration folder, the ResourceManager's queues (its REST answers, as the capacity and the
fair scheduler give them), an archive's Python and pyspark, and the driver's ``PYTHONPATH``
kept from the executors; and the one line a step's output gives of its YARN application."""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.errors import ConfigError
from hbase_migrate.spark.yarn import (
    Placement,
    archive_contents,
    check_archives,
    check_queue,
    conf_dir,
    driver_environment,
    in_container,
    leaf_queues,
    site_properties,
    staged_jars,
    web_address,
    yarn_line,
)

CAPACITY = {"scheduler": {"schedulerInfo": {
    "type": "capacityScheduler", "queueName": "root", "queues": {"queue": [
        {"queueName": "default", "queuePath": "root.default"},
        {"queueName": "analytics", "queuePath": "root.analytics", "queues": {"queue": [
            {"queueName": "etl", "queuePath": "root.analytics.etl"}]}}]}}}}
FAIR = {"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": {
    "queueName": "root", "childQueues": {"queue": [
        {"queueName": "root.default", "childQueues": {}},
        {"queueName": "root.batch", "childQueues": {}}]}}}}}


def test_no_hadoop_conf_dir_and_one_without_yarn_site_name_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"export HADOOP_CONF_DIR=/etc/hadoop/conf \(the "
                                          r"folder with yarn-site.xml and core-site.xml\)"):
        conf_dir({})
    with pytest.raises(ConfigError, match=f"HADOOP_CONF_DIR={tmp_path} holds no yarn-site"):
        conf_dir({"HADOOP_CONF_DIR": str(tmp_path)})
    (tmp_path / "yarn-site.xml").write_text("<configuration/>")
    assert conf_dir({"YARN_CONF_DIR": str(tmp_path)}) == tmp_path


def test_the_resourcemanagers_web_address_comes_from_yarn_site(tmp_path: Path) -> None:
    site = tmp_path / "yarn-site.xml"
    site.write_text("<configuration><property><name>yarn.resourcemanager.hostname</name>"
                    "<value>rm1</value></property><property><name>yarn.resourcemanager."
                    "webapp.address</name><value>${yarn.resourcemanager.hostname}:8090</value>"
                    "</property></configuration>")
    assert web_address(site_properties(site)) == "http://rm1:8090"
    assert web_address({"yarn.resourcemanager.hostname": "rm2"}) == "http://rm2:8088"


def test_leaf_queues_of_both_schedulers() -> None:
    assert leaf_queues(CAPACITY) == ["default", "etl"]
    assert leaf_queues(FAIR) == ["default", "batch"]


class Answer(io.BytesIO):
    def __enter__(self) -> Answer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_a_queue_the_resourcemanager_lacks_is_refused_with_its_queues() -> None:
    seen: list[str] = []

    def opener(request: Any, timeout: float) -> Answer:
        seen.append(request.full_url)
        return Answer(json.dumps(CAPACITY).encode())
    check_queue("etl", "http://rm:8088", opener)
    check_queue("root.default", "http://rm:8088", opener)
    with pytest.raises(ConfigError) as refused:
        check_queue("nightly", "http://rm:8088", opener)
    assert str(refused.value) == (
        "Spark master 'yarn': queue 'nightly' does not exist on the ResourceManager at "
        "http://rm:8088 (its queues: default, etl); set --conf spark.yarn.queue=NAME or "
        "\"spark.yarn.queue\" in [spark] conf to one of them")
    assert seen == ["http://rm:8088/ws/v1/cluster/scheduler"] * 3


def test_an_unanswering_resourcemanager_leaves_the_queue_to_yarn(
        caplog: pytest.LogCaptureFixture) -> None:
    def opener(request: Any, timeout: float) -> Answer:
        raise ConnectionRefusedError(111, "Connection refused")
    check_queue("nightly", "http://rm:8088", opener)
    assert "did not answer" in caplog.text and "'nightly' not checked" in caplog.text


def packed(path: Path, names: list[str]) -> Path:
    if path.suffix == ".zip":
        with zipfile.ZipFile(path, "w") as archive:
            for name in names:
                archive.writestr(name, "")
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name in names:
                archive.addfile(tarfile.TarInfo(name))
    return path


def test_an_archive_of_another_python_or_pyspark_is_refused(tmp_path: Path) -> None:
    import pyspark

    here = "{}.{}".format(*sys.version_info[:2])
    same = packed(tmp_path / "same.tar.gz", [
        "bin/python", f"lib/python{here}/site-packages/pyspark/__init__.py",
        f"lib/python{here}/site-packages/pyspark-{pyspark.__version__}.dist-info/METADATA"])
    assert archive_contents(same) == (here, pyspark.__version__)
    other = packed(tmp_path / "other.zip", [
        "lib/python3.9/site-packages/pyspark-3.5.1.dist-info/RECORD"])
    assert archive_contents(other) == ("3.9", "3.5.1")
    plain = packed(tmp_path / "plain.tar.gz", ["hbase_migrate/__init__.py"])
    assert archive_contents(plain) == (None, None)
    check_archives(f"{same}#environment,{plain}#deps,hdfs:///envs/x.tar.gz#x")
    check_archives(f"file://{same}#environment")
    with pytest.raises(ConfigError) as refused:
        check_archives(f"{same}#a, {other}#environment")
    assert str(refused.value) == (
        f"spark.archives: {other} holds Python 3.9 with pyspark 3.5.1, but the driver runs "
        f"Python {here} with pyspark {pyspark.__version__}: pack it from an environment of "
        f"Python {here} and pyspark {pyspark.__version__} (venv-pack), or run the step from "
        "one like the archive's")
    check_archives(f"{other}#environment", shipped=f"{other}#environment")  # the project's


def test_the_drivers_pythonpath_is_kept_from_a_yarn_sessions_jvm(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/driver/only")
    with driver_environment("yarn"):
        assert "PYTHONPATH" not in os.environ
    assert os.environ["PYTHONPATH"] == "/driver/only"
    with driver_environment("spark://m:7077"):
        assert os.environ["PYTHONPATH"] == "/driver/only"


def test_tasks_tell_their_container_and_the_step_says_where_they_ran(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAINER_ID", "container_1_0001_01_000002")
    assert in_container(len, "abc") == (3, "container_1_0001_01_000002")
    placement = Placement("application_1_0001", "etl")
    placement.containers.update(["container_1_0001_01_000003", "container_1_0001_01_000002",
                                 "container_1_0001_01_000002"])
    assert yarn_line(placement.to_metrics()) == (
        "yarn: application application_1_0001 in queue etl; tasks ran in 2 containers: "
        "container_1_0001_01_000002 (2), container_1_0001_01_000003 (1)")


def test_spark_jars_the_user_names_are_left_as_they_are() -> None:
    """(No Spark JVM starts: the staging of pyspark's jars needs none of its own then.)"""
    assert staged_jars({"spark.yarn.archive": "hdfs:///spark/jars.zip"}) == {}
    assert staged_jars({"spark.yarn.jars": "local:/opt/spark/jars/*"}) == {}


def test_a_python_worker_that_cannot_start_says_why_in_one_line() -> None:
    from hbase_migrate.spark.errors import task_error

    text = ("Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 times, most recent "
            "failure: Lost task 0.3 in stage 0.0 (TID 3) (localhost executor 1): "
            "org.apache.spark.SparkException: \nError from python worker:\n  /usr/bin/python3: "
            "Error while finding module specification for 'pyspark.daemon' "
            "(ModuleNotFoundError: No module named 'pyspark')\nPYTHONPATH was:\n  x\n"
            "org.apache.spark.SparkException: EOFException occurred while reading the port")
    assert task_error(RuntimeError(text)) == (
        "executor 1 on host localhost: /usr/bin/python3: Error while finding module "
        "specification for 'pyspark.daemon' (ModuleNotFoundError: No module named 'pyspark')")


@pytest.mark.parametrize(("reason", "said"), [
    ("ExecutorLostFailure (executor 2 exited caused by one of the running tasks) Reason: "
     "Container killed by YARN for exceeding physical memory limits. 2.1 GB of 2 GB physical "
     "memory used. Consider boosting spark.executor.memoryOverhead.",
     "its YARN container was killed for exceeding its memory (2.1 GB of 2 GB physical memory "
     "used): "),
    ("ExecutorLostFailure (executor 2 exited caused by one of the running tasks) Reason: "
     "Container marked as failed: container_1_0001_01_000003 on host: nm-2. Exit status: 137. "
     "Diagnostics: [2026-11-27 10:00:00.000]Container killed on request. Exit code is 137",
     "its container was killed with SIGKILL (exit status 137), most often for memory "
     "(YARN's check or the kernel's OOM killer): "),
])
def test_a_container_killed_for_memory_names_the_setting_to_raise(reason: str,
                                                                  said: str) -> None:
    from hbase_migrate.spark.errors import MEMORY_REMEDY, task_error

    text = ("Job aborted due to stage failure: Task 3 in stage 1.0 failed 4 times, most recent "
            f"failure: Lost task 3.3 in stage 1.0 (TID 9) (nm-2 executor 2): {reason}\n"
            "Driver stacktrace:")
    assert task_error(RuntimeError(text)) == f"executor 2 on host nm-2: {said}{MEMORY_REMEDY}"
    assert "spark.executor.memoryOverhead" in MEMORY_REMEDY


def test_an_executor_lost_with_its_node_says_so_not_that_a_task_caused_it() -> None:
    from hbase_migrate.spark.errors import task_error

    text = ("Job aborted due to stage failure: Task 0 in stage 1.0 failed 1 times, most recent "
            "failure: Lost task 0.0 in stage 1.0 (TID 5) (localhost executor 2): "
            "ExecutorLostFailure (executor 2 exited caused by one of the running tasks) Reason: "
            "Executor Process Lost\nDriver stacktrace:")
    assert task_error(RuntimeError(text)) == (
        "executor 2 on host localhost: its executor was lost (Executor Process Lost: its "
        "container or its NodeManager's host went away) and the task's attempts ran out "
        "(spark.task.maxFailures)")


def test_an_exit_status_that_only_begins_with_137_is_not_a_kill() -> None:
    from hbase_migrate.spark.errors import memory_kill

    assert memory_kill("Container marked as failed. Exit status: 1370.") is None
    assert memory_kill("Task failed: ValueError: bad row") is None
