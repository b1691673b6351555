"""A migration's snapshot copy, replay and validation on a real YARN (realstack's: a
ResourceManager with a staging HDFS and two NodeManagers from Maven Central's Hadoop 3.4.2),
from the command line in client mode, ``[spark] master = "yarn"``, ``HADOOP_CONF_DIR``
naming realstack's configuration.

The NodeManagers run in a private mount namespace where the project's folder, this
environment and the driver's folder (the config, ``cluster.json`` files, ledger and the
executors' archive in its cache) are empty, with ``/usr/bin`` alone on their ``PATH``: their
containers run the machine's ``python3`` with the project's archive (``spark.archives``) and
Spark's own ``pyspark.zip``, nothing of the driver's paths. Every task of the copy ran in a
YARN container (the step's output and metrics name them; YARN's REST API lists the
application, and each container's log on its NodeManager says it finished tasks); the replay
of later writes and the validation run in applications of their own, Spark's jars staged on
the cluster once; the target equals the source cell for cell. An Airflow of the test's own
(an Airflow worker's environment, ``HADOOP_CONF_DIR`` among it) runs the start DAG with a
``spark`` connection whose host is ``yarn``: the copy's and the validation's parts each ran
as a YARN application that the task's XCom names, and then the replay DAG replays later
writes in YARN applications of their own. ``validate --from snapshot`` of a real HBase
source reads its snapshot's store files in the containers. Bad set-ups fail in one line
naming the fix, before any session starts. A NodeManager killed (its JVM and its
containers' processes) while a copy task runs on it leaves the step exact, the lost range
run again on the other node, or failing in one line with a rerun that redoes at most the
ranges lost (counted from the ledger and the NodeManagers' logs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import hbase_migrate
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import KeyRangeRecord
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.config_parts import IN_PROCESS
from hbase_migrate.validate.resume import SNAPSHOT_READ
from minihbase.server import MiniHBase
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase
from realstack.maven import RealStackError
from realstack.yarn import RealYarn, RealYarnOptions
from tests.realstack.fixtures import read_requests
from tests.spark.standalone import HIDE
from tests.support.minicluster import EmbeddedClusters, compare, run_workload, write_migration

# (YARN's start and a Spark application per step: 8-11 minutes on the loaded 2-core machine
# before the NodeManager's kill was added; with it, 6.5 minutes at load average 5-9; with
# the Airflow run too, 9 minutes at load average 7-19, that test 3.5 of them)
pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.slow,
              pytest.mark.timeout(1800)]
TABLE = "orders"
SYSTEM_PYTHON = Path("/usr/bin/python3")
# Spark's warning when it zips and uploads its own jars for an application
UPLOADED = "falling back to uploading libraries under SPARK_HOME"


@dataclass(frozen=True)
class Yarn:
    """realstack's YARN as the tests reach it."""

    stack: RealYarn
    conf_dir: Path
    driver: Path  # what the NodeManagers cannot see

    def apps(self) -> dict[str, dict[str, Any]]:
        """The ResourceManager's applications, by id."""
        return {a["id"]: a for a in self.stack.rest("apps")["apps"]["app"]}

    def log_dirs(self) -> list[Path]:
        """Each NodeManager's container log folder."""
        return [Path(n["log_dirs"]) for n in self.stack.described["node_managers"]]


def hidden_namespace(folders: list[Path]) -> list[str]:
    """The command prefix of a private mount namespace where ``folders`` are empty, or a
    skip where this machine allows none."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare (util-linux) to hide the project from the NodeManagers")
    prefix = [unshare, "--mount"] if os.geteuid() == 0 else \
        [unshare, "--map-root-user", "--mount"]
    names = [str(f) for f in folders]
    tried = subprocess.run([*prefix, "sh", "-c", HIDE, "-", *names, "--", "test", "!", "-e",
                            str(Path(__file__))], capture_output=True, check=False)
    if tried.returncode:
        pytest.skip(f"cannot hide the project from the NodeManagers (unshare --mount: "
                    f"{tried.stderr.decode().strip() or tried.returncode})")
    return [*prefix, "sh", "-c", HIDE, "-", *names, "--"]


def system_python_minor() -> str:
    found = subprocess.run([str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[1])"],
                           capture_output=True, text=True, check=False)
    return f"3.{found.stdout.strip()}" if found.returncode == 0 else "none"


@pytest.fixture(scope="module")
def yarn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Yarn]:
    pytest.importorskip("pyspark")
    driver = "{}.{}".format(*sys.version_info[:2])
    if system_python_minor() != driver:
        pytest.skip(f"the NodeManagers' {SYSTEM_PYTHON} is not Python {driver} (the "
                    "driver's, which the shipped archive is built for)")
    folder, drivers = tmp_path_factory.mktemp("yarn"), tmp_path_factory.mktemp("driver")
    project = Path(hbase_migrate.__file__).parents[1]
    hidden = [project, drivers, *([Path(sys.prefix)] if not Path(sys.prefix).is_relative_to(
        project) else [])]
    java = Path(str(shutil.which("java") or "java")).resolve().parents[1]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
           "JAVA_HOME": os.environ.get("JAVA_HOME") or str(java)}
    env.update({k: v for k, v in os.environ.items() if k in ("TMPDIR", "HBASE_MIGRATE_CACHE")})
    stack = RealYarn(folder, RealYarnOptions(node_managers=2, memory_mb=3072,
                                             queues=("default", "etl")),
                     env=env, prefix=hidden_namespace(hidden))
    try:
        stack.start()
    except RealStackError as exc:
        pytest.fail(f"realstack's YARN did not start: {exc}")
    try:
        yield Yarn(stack, stack.conf_dir, drivers)
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def clusters(yarn: Yarn) -> Iterator[tuple[MiniHBase, MiniHBase]]:
    with EmbeddedClusters(yarn.driver) as embedded:  # in the driver's folder
        yield embedded("source", folder=yarn.driver / "src"), \
            embedded("target", folder=yarn.driver / "dst")


def write_config(folder: Path, src: MiniHBase, dst: MiniHBase, spark: str = "",
                 master: str = "yarn", table: str = TABLE) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = write_migration(folder, src, dst, table, name=folder.name, roll_period="1s")
    with path.open("a", encoding="utf-8") as out:
        out.write(f'[spark]\nmaster = "{master}"\n[spark.conf]\n"spark.executor.memory" = "512m"\n'
                  '"spark.executor.instances" = "2"\n"spark.yarn.am.memory" = "384m"\n'
                  f"{spark}[ranges]\nmax_cells = 150\n")
    return path


def cli(yarn: Yarn, *args: str, conf_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``hbase-migrate ARGS`` as a user on an edge node runs it: ``HADOOP_CONF_DIR`` names
    the cluster's configuration (``conf_dir``: another; ``Path()``: none)."""
    return subprocess.run(HBASE_MIGRATE + list(args), env=edge_node(yarn, conf_dir),
                          capture_output=True, text=True, timeout=600, check=False)


HBASE_MIGRATE = [str(Path(sys.executable).parent / "hbase-migrate")]


def edge_node(yarn: Yarn, conf_dir: Path | None = None) -> dict[str, str]:
    """The environment of :func:`cli`."""
    env = {k: v for k, v in os.environ.items() if k not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR")}
    env.update({"PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1",
                "HBASE_MIGRATE_CACHE_DIR": str(yarn.driver / "cache")})
    folder = yarn.conf_dir if conf_dir is None else conf_dir
    if str(folder) != ".":
        env["HADOOP_CONF_DIR"] = str(folder)
    return env


def finished_in(log_dirs: list[Path], application: str) -> dict[str, int]:
    """Container -> the tasks its executor's log (on its NodeManager) says it finished."""
    found = {}
    for logs in log_dirs:
        for stderr in (logs / application).glob("container_*/stderr"):
            count = stderr.read_text(errors="replace").count("Finished task")
            if count:
                found[stderr.parent.name] = count
    return found


def test_copy_replay_and_validation_run_in_yarn_containers_that_see_nothing_of_the_driver(
        yarn: Yarn, clusters: tuple[MiniHBase, MiniHBase]) -> None:
    src, dst = clusters
    run_workload(src, TABLE, seed=75, ops=600)
    config = write_config(yarn.driver / "onyarn", src, dst)
    spec = load_config(config)
    assert cli(yarn, "prepare", "--config", str(config)).returncode == 0
    done = cli(yarn, "snapshot", "--config", str(config))
    if done.returncode:
        pytest.fail(f"snapshot: {done.stderr.strip().splitlines()[-1]}")
    out = done.stdout
    assert UPLOADED not in done.stderr  # Spark's jars went as spark.yarn.archive
    print(out)  # (pytest -s: the step's output, its timings among it)
    assert "engine: yarn" in out, out
    assert "executors run their own python3 with hbase-migrate" in out
    assert "shipped as spark.archives hbase-migrate-executors-" in out
    assert "pre-flight passed on executor container_" in out, out
    said = re.search(r"yarn: application (application_\d+_\d+) in queue default; tasks ran "
                     r"in (\d+) containers?: (.*)", out)
    assert said, out
    application = said.group(1)
    assert compare(src, dst, TABLE).equal

    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        ranges = ledger.key_ranges(migration.id, TABLE)
        assert len(ranges) > 2 and all(r.copied_cells is not None for r in ranges)
        (step,) = ledger.steps(migration.id, "snapshot")
        placed = step.metrics["yarn"]
    assert placed["application"] == application and placed["queue"] == "default"
    containers: dict[str, int] = placed["containers"]
    assert "" not in containers and sum(containers.values()) == len(ranges), containers
    assert all(c.startswith(f"container_{application.removeprefix('application_')}_")
               for c in containers)

    # YARN's own word: the ResourceManager ran the application to its end, in that queue
    stack = yarn.stack
    apps = stack.rest("apps")["apps"]["app"]
    (app,) = [a for a in apps if a["id"] == application]
    assert (app["name"], app["queue"].removeprefix("root."), app["applicationType"]) == (
        f"hbase-migrate snapshot {spec.name}", "default", "SPARK")
    assert app["state"] == "FINISHED" and app["finalStatus"] == "SUCCEEDED", app
    print(f"YARN started in {stack.described['started_in_ms']} ms; the application ran "
          f"{app['elapsedTime']} ms")
    # and each container that ran a range's task logged it on its NodeManager
    log_dirs = yarn.log_dirs()
    logged = finished_in(log_dirs, application)
    assert set(containers) <= set(logged), (containers, logged)
    assert sum(logged.values()) >= len(ranges) + 4  # the ranges' tasks and the pre-flight's

    replay_app = replayed_on_yarn(yarn, src, config, application)
    validated_on_yarn(yarn, config, {application, replay_app}, len(ranges))
    assert compare(src, dst, TABLE).equal  # the copy and the replay's writes


def replayed_on_yarn(yarn: Yarn, src: MiniHBase, config: Path, copied: str) -> str:
    """Writes after the copy, replayed from the source's WALs in a YARN application of its
    own (Spark's jars, staged on the cluster's HDFS by the copy, not shipped again); its id."""
    spec = load_config(config)
    run_workload(src, TABLE, seed=76, ops=300)
    done = cli(yarn, "replay", "--config", str(config))
    if done.returncode:
        pytest.fail(f"replay: {done.stderr.strip().splitlines()[-1]}")
    print(done.stdout)
    assert UPLOADED not in done.stderr, done.stderr[-2000:]
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        (replayed,) = ledger.steps(migration.id, "replay")
        engine = replayed.metrics["engine"]
    assert engine["engine"] == "yarn" and replayed.metrics["files_read"] > 0, replayed.metrics
    files = engine["yarn"]["containers"]
    assert engine["yarn"]["application"] not in (copied, "")
    assert "" not in files and sum(files.values()) > 0, engine
    assert f"yarn: application {engine['yarn']['application']} in queue default" in done.stdout
    return str(engine["yarn"]["application"])


def validated_on_yarn(yarn: Yarn, config: Path, earlier: set[str], ranges: int) -> None:
    """The validation's checksums in a YARN application of their own: ``validated``."""
    spec = load_config(config)
    done = cli(yarn, "validate", "--config", str(config))
    if done.returncode:
        pytest.fail(f"validate: {done.stderr.strip().splitlines()[-1]}")
    print(done.stdout)
    assert UPLOADED not in done.stderr, done.stderr[-2000:]
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None and migration.state == "validated"
        (step,) = ledger.steps(migration.id, "validate")
        checked = step.metrics["yarn"]
    assert checked["application"] not in earlier
    assert "" not in checked["containers"] and sum(checked["containers"].values()) >= ranges
    assert f"yarn: application {checked['application']} in queue default" in done.stdout
    apps = yarn.apps()
    assert apps[checked["application"]]["finalStatus"] == "SUCCEEDED"
    print(f"the validation's application ran {apps[checked['application']]['elapsedTime']} ms")


def test_a_validation_from_a_snapshot_reads_its_store_files_in_yarn_containers(
        yarn: Yarn, second_hbase: RealHBase, clusters: tuple[MiniHBase, MiniHBase]) -> None:
    """``validate --from snapshot`` of a real HBase source on YARN: the tasks in the
    containers read the snapshot's store files over the source's WebHDFS (the driver's folder
    is hidden from them), so the source's regions serve no read request during it; each
    range's checksum row says its source side came from the snapshot; ``validated``."""
    _, dst = clusters
    table, folder = "from_files", yarn.driver / "fromfiles"
    runner = Workload(ClusterEndpoints.from_json(second_hbase.described),
                      WorkloadSpec(table, 277, 600))
    try:
        runner.ensure_table()  # two families, pre-split: several regions
        runner.run()
    finally:
        runner.close()
    folder.mkdir(parents=True)
    config = folder / "migration.toml"
    config.write_text(
        f'[migration]\nname = "fromfiles"\nledger = "sqlite:///{folder / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{second_hbase.cluster_json}"\n'
        f'[target]\ncluster_json = "{dst.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{table}"\n[replay]\nroll_period = "1h"\nmargin = "1m"\n'
        f'[snapshot]\nmethod = "scan"\nttl = "1h"\n[spark]\nmaster = "yarn"\n[spark.conf]\n'
        '"spark.executor.memory" = "512m"\n"spark.executor.instances" = "2"\n'
        '"spark.yarn.am.memory" = "384m"\n[ranges]\nmax_cells = 400\n', encoding="utf-8")
    spec = load_config(config)
    assert cli(yarn, "prepare", "--config", str(config)).returncode == 0
    copied = cli(yarn, "snapshot", "--config", str(config), "--master", IN_PROCESS)
    assert copied.returncode == 0, copied.stderr[-3000:]
    before = read_requests(second_hbase, table)
    done = cli(yarn, "validate", "--config", str(config), "--from", "snapshot")
    if done.returncode:
        pytest.fail(f"validate --from snapshot: {done.stderr.strip().splitlines()[-1]}")
    print(done.stdout)
    assert read_requests(second_hbase, table) == before  # no scan reached the source
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None and migration.state == "validated"
        ranges = ledger.key_ranges(migration.id, table)
        (step,) = ledger.steps(migration.id, "validate")
        rows = ledger.checksums(migration.id, step.id)
    assert step.metrics["source_read"].startswith("snapshot files from the DataNodes"), step.metrics
    assert step.metrics["source_requests"] == 0, step.metrics
    assert len(rows) == len(ranges) > 1 and all(
        r.source_read.startswith(SNAPSHOT_READ) for r in rows), [r.source_read for r in rows]
    checked = step.metrics["yarn"]
    assert "" not in checked["containers"] and sum(checked["containers"].values()) >= len(
        ranges), checked
    app = yarn.apps()[checked["application"]]
    assert (app["finalStatus"], app["name"]) == ("SUCCEEDED", "hbase-migrate validate fromfiles")
    log_dirs = yarn.log_dirs()
    assert set(checked["containers"]) <= set(finished_in(log_dirs, checked["application"]))
    print(f"validate --from snapshot: {checked['application']} ran {app['elapsedTime']} ms "
          f"over {len(ranges)} ranges")


def venv_archive(path: Path, python: str, pyspark: str) -> Path:
    """A packed environment as venv-pack makes one, of ``python`` with ``pyspark``."""
    with tarfile.open(path, "w:gz") as tar:
        for name in (f"lib/python{python}/site-packages/pyspark/__init__.py",
                     f"lib/python{python}/site-packages/pyspark-{pyspark}.dist-info/METADATA"):
            info = tarfile.TarInfo(name)
            tar.addfile(info)
    return path


def test_bad_setups_fail_in_one_line_naming_the_fix_before_any_session(
        yarn: Yarn, clusters: tuple[MiniHBase, MiniHBase], tmp_path: Path) -> None:
    import pyspark

    src, dst = clusters
    driver = "{}.{}".format(*sys.version_info[:2])
    old = venv_archive(tmp_path / "env.tar.gz", driver, "3.5.1")
    empty = tmp_path / "no-yarn"
    empty.mkdir()
    cases = [  # (the first from --master yarn over a migration of master "auto")
        ("no-conf", "", Path(),
         "Spark master 'yarn' needs the cluster's Hadoop configuration: export "
         "HADOOP_CONF_DIR=/etc/hadoop/conf"),
        ("conf-without-yarn", "", empty,
         f"Spark master 'yarn': HADOOP_CONF_DIR={empty} holds no yarn-site.xml"),
        ("no-such-queue", '"spark.yarn.queue" = "nightly"\n', None,
         "queue 'nightly' does not exist on the ResourceManager at "
         f"{yarn.stack.web} (its queues: default, etl); set --conf "
         "spark.yarn.queue=NAME"),
        ("old-archive", f'"spark.archives" = "{old}#environment"\n', None,
         f"spark.archives: {old} holds Python {driver} with pyspark 3.5.1, but the driver "
         f"runs Python {driver} with pyspark {pyspark.__version__}: pack it from an "
         f"environment of Python {driver} and pyspark {pyspark.__version__}"),
    ]
    for name, spark, conf_dir, says in cases:
        asked = name == "no-conf"
        config = write_config(yarn.driver / name, src, dst, spark, "auto" if asked else "yarn")
        assert cli(yarn, "prepare", "--config", str(config)).returncode == 0
        done = cli(yarn, "snapshot", "--config", str(config),
                   *(["--master", "yarn"] if asked else []), conf_dir=conf_dir)
        assert done.returncode == 2, (name, done.stdout, done.stderr)
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("hbase-migrate: error: ") and says in last, (name, last)
        assert "Traceback" not in done.stderr and "Using Spark's default log4j" not in \
            done.stderr, (name, done.stderr)  # no Spark JVM was started
        spec = load_config(config)
        with Ledger.open(spec.ledger_url) as ledger:
            migration = ledger.migration(spec.name)
            assert migration is not None
            assert all(r.copied_cells is None for r in ledger.key_ranges(migration.id, TABLE))


# The Airflow of the test below: a DAG run under ``dag.test()`` in a process of its own, an
# Airflow worker's (its home, database and connections), each task's state and XCom written
# as JSON to the file named last
DAG_TEST = """
import json, sys
from pathlib import Path
from airflow.dag_processing.dagbag import DagBag
folder, dag_id, conf, out = sys.argv[1:]
bag = DagBag(dag_folder=folder, safe_mode=False)
assert not bag.import_errors, bag.import_errors
run = bag.get_dag(dag_id).test(run_conf=json.loads(conf))
Path(out).write_text(json.dumps([
    {"task": ti.task_id, "map_index": ti.map_index, "state": ti.state,
     "xcom": ti.xcom_pull(task_ids=ti.task_id, map_indexes=ti.map_index)}
    for ti in run.get_task_instances()], default=str))
"""


def airflow_run(folder: Path, dag_id: str, conf: dict[str, Any],
                extra: dict[str, str]) -> list[dict[str, Any]]:
    """``dag_id`` run once with ``conf`` by an Airflow of its own in ``folder`` (its metadata
    database migrated first), its worker's environment with ``extra``: each task's state
    and XCom."""
    from hbase_migrate.airflow_stack import airflow_env
    from hbase_migrate.services import free_port

    env = {k: v for k, v in airflow_env(folder, free_port(), extra=extra).items()
           if k != "YARN_CONF_DIR"}
    (folder / "airflow").mkdir(parents=True, exist_ok=True)
    migrated = subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    out = folder / "tasks.json"
    with (folder / "dag-test.log").open("wb") as log:
        ran = subprocess.run([sys.executable, "-c", DAG_TEST, env["AIRFLOW__CORE__DAGS_FOLDER"],
                              dag_id, json.dumps(conf), str(out)], env=env, stdout=log,
                             stderr=subprocess.STDOUT, timeout=900, check=False)
    said = (folder / "dag-test.log").read_text(errors="replace")
    assert ran.returncode == 0 and out.exists(), said[-5000:]
    tasks: list[dict[str, Any]] = json.loads(out.read_text())
    return tasks


def test_the_start_and_replay_dags_from_an_airflow_worker_run_in_yarn_containers(
        yarn: Yarn, clusters: tuple[MiniHBase, MiniHBase]) -> None:
    """An Airflow worker with ``HADOOP_CONF_DIR`` naming the cluster's configuration runs
    the start DAG with a ``spark`` connection whose host is ``yarn``: each part of the copy
    and of the validation is a YARN application of its own, which the task's XCom and its
    ledger step name, whose containers ran its tasks; no other application ran for it."""
    from hbase_migrate.airflow_stack import hbase_connection

    src, dst = clusters
    table, name = "from_airflow", "airflow_on_yarn"
    run_workload(src, table, seed=275, ops=600)
    folder = yarn.driver / "airflow"
    ledger = f"sqlite:///{folder / 'ledger.db'}"
    connections = {f"AIRFLOW_CONN_{conn_id.upper()}": json.dumps(
        {k: v for k, v in hbase_connection(conn_id, cluster.endpoints).items()
         if k != "connection_id"}) for conn_id, cluster in (("test_source", src),
                                                            ("test_target", dst))}
    spark = {"conn_type": "spark", "host": "yarn", "extra": json.dumps({"conf": {
        "spark.executor.memory": "512m", "spark.executor.instances": "1",  # (cheapest)
        "spark.yarn.am.memory": "384m"}})}
    extra = {**connections, "AIRFLOW_CONN_SPARK_YARN": json.dumps(spark),
             "HADOOP_CONF_DIR": str(yarn.conf_dir), "SPARK_LOCAL_IP": "127.0.0.1",
             "HBASE_MIGRATE_CACHE_DIR": str(yarn.driver / "cache")}
    conf = {"migration": name, "source_conn_id": "test_source", "target_conn_id": "test_target",
            "tables": [table], "ledger": ledger, "spark_conn_id": "spark_yarn",
            "snapshot_method": "scan", "parts": 1}
    tasks = airflow_run(folder, "hbase_migrate_start", conf, extra)
    states = {(t["task"], t["map_index"]): t["state"] for t in tasks}
    assert set(states.values()) == {"success"}, states
    assert compare(src, dst, table).equal

    # the Spark steps' XComs: the master the run chose and the YARN application each ran in
    parts = {t["task"]: t["xcom"] for t in tasks if t["task"] in ("snapshot_part",
                                                                    "validate_part")}
    assert set(parts) == {"snapshot_part", "validate_part"}, states
    for said in parts.values():
        assert "Spark master: yarn, from connection 'spark_yarn'" in said["spark_master"]
        assert said["engine"] == "yarn", said
    placed = {task: said.get("yarn") for task, said in parts.items()}
    assert all(placed.values()), parts  # (none: the step ran its tasks elsewhere)
    with Ledger.open(ledger) as opened:
        migration = opened.migration(name)
        assert migration is not None and migration.state == "validated"
        ranges = opened.key_ranges(migration.id, table)
        assert ranges and all(r.copied_cells is not None for r in ranges)
        steps = {s.kind: s.metrics["yarn"] for s in opened.steps(migration.id)
                 if s.kind in ("snapshot-part", "validate-part")}
    assert steps == {"snapshot-part": placed["snapshot_part"],
                     "validate-part": placed["validate_part"]}, (steps, placed)
    applications = {p["application"] for p in placed.values()}
    assert len(applications) == 2, placed

    # YARN's word: these applications, and no other for this migration, ran to their end
    apps = yarn.apps()
    ours = {i for i, a in apps.items() if a["name"].endswith(f" {name}")}
    assert ours == applications, (ours, placed)
    log_dirs = yarn.log_dirs()
    for task, where in placed.items():
        app = apps[where["application"]]
        assert (app["state"], app["finalStatus"], app["applicationType"]) == (
            "FINISHED", "SUCCEEDED", "SPARK"), app
        assert app["queue"].removeprefix("root.") == where["queue"] == "default"
        containers: dict[str, int] = where["containers"]
        assert containers and "" not in containers, (task, where)
        # each container the XCom names logged its tasks on its NodeManager
        logged = finished_in(log_dirs, where["application"])
        assert set(containers) <= set(logged), (task, containers, logged)
        print(f"{task}: {where['application']} ran {app['elapsedTime']} ms, tasks in "
              f"{containers}")
    assert sum(placed["snapshot_part"]["containers"].values()) == len(ranges)

    replay_dag_on_yarn(yarn, src, dst, AirflowRun(folder, conf, extra), applications)


@dataclass(frozen=True)
class AirflowRun:
    """What :func:`airflow_run` is given for a migration's DAG runs."""

    folder: Path
    conf: dict[str, Any]
    extra: dict[str, str]


def replay_dag_on_yarn(yarn: Yarn, src: MiniHBase, dst: MiniHBase, run: AirflowRun,
                       earlier: set[str]) -> None:
    """Later writes replayed by the replay DAG (triggered with the start DAG's ``conf``, as
    by hand): each replay part's step ran in a YARN application of its own (not one of
    ``earlier``) whose containers logged its tasks; the target equals the source."""
    table, name, ledger = run.conf["tables"][0], run.conf["migration"], run.conf["ledger"]
    run_workload(src, table, seed=276, ops=300)
    tasks = airflow_run(run.folder, "hbase_migrate_replay", run.conf, run.extra)
    states = {(t["task"], t["map_index"]): t["state"] for t in tasks}
    assert {s for (task, _), s in states.items() if task == "replay"} == {"success"}, states
    assert "failed" not in states.values() and "upstream_failed" not in states.values(), states
    assert compare(src, dst, table).equal
    with Ledger.open(ledger) as opened:
        migration = opened.migration(name)
        assert migration is not None
        replays = opened.steps(migration.id, "replay")
    assert replays and all(r.dag_id == "hbase_migrate_replay" for r in replays), replays
    assert sum(r.metrics["files_read"] for r in replays) > 0
    replayed = {r.metrics["engine"]["engine"] for r in replays}
    assert replayed == {"yarn"}, [r.metrics["engine"] for r in replays]
    apps = yarn.apps()
    log_dirs = yarn.log_dirs()
    for step in replays:
        where = step.metrics["engine"]["yarn"]
        assert where["application"] not in earlier, where
        assert "" not in where["containers"] and sum(where["containers"].values()) > 0, where
        app = apps[where["application"]]
        assert (app["finalStatus"], app["name"]) == ("SUCCEEDED", f"hbase-migrate replay {name}")
        assert set(where["containers"]) <= set(finished_in(log_dirs, where["application"]))
        print(f"replay: {where['application']} ran {app['elapsedTime']} ms, files in "
              f"{where['containers']}")


# An executor's container (512 MiB of heap, 1,100 MiB over it: 1,664 MiB as YARN rounds it)
# fits once beside the application master (768 MiB) in a NodeManager of 3,072 MiB, never
# twice: each NodeManager runs one of the two executors, and the one without the master
# can be lost alone.
ONE_EXECUTOR_A_NODE = '"spark.executor.memoryOverhead" = "1100m"\n'
# The driver waits this long for the application master's word on a lost executor (which
# it has only once YARN finds the node lost, 10 minutes by default) before it runs that
# executor's tasks elsewhere: 30 s, not 120.
ASK_TIMEOUT = '"spark.rpc.askTimeout" = "30s"\n'
COPY_TASK = re.compile(r"(Running|Finished) task (\d+)\.(\d+) in stage ([1-9]\d*)\.\d+ "
                       r"\(TID (\d+)\)")  # (stage 0: the pre-flight's)


Tasks = dict[str, dict[tuple[int, int], set[int]]]


def copy_tasks(log_dirs: list[Path], application: str) -> Tasks:
    """``<container>/started`` and ``<container>/finished``: the copy's tasks (stage, index:
    a range) -> their attempts' task ids, as each container's log on its NodeManager says."""
    found: Tasks = {}
    for logs in log_dirs:
        for stderr in (logs / application).glob("container_*/stderr"):
            seen: Tasks = {"started": {}, "finished": {}}
            for said, index, _, stage, tid in COPY_TASK.findall(
                    stderr.read_text(errors="replace")):
                kind = "started" if said == "Running" else "finished"
                seen[kind].setdefault((int(stage), int(index)), set()).add(int(tid))
            found[f"{stderr.parent.name}/started"] = seen["started"]
            found[f"{stderr.parent.name}/finished"] = seen["finished"]
    return found


def in_flight(tasks: Tasks, container: str) -> set[tuple[int, int]]:
    """The tasks whose attempt in ``container`` started and did not finish."""
    started = tasks.get(f"{container}/started", {})
    finished = tasks.get(f"{container}/finished", {})
    return {p for p, tids in started.items() if tids - finished.get(p, set())}


@dataclass(frozen=True)
class Victim:
    """The NodeManager to lose: not the application master's, a copy task running on it."""

    application: str
    node: dict[str, Any]
    container: str


def copy_running_beside_the_master(yarn: Yarn, name: str, copying: subprocess.Popen[bytes],
                                   timeout: float = 420.0) -> Victim:
    """Wait until the copy's application runs a copy task in a container on a NodeManager
    other than its master's."""
    stack, deadline = yarn.stack, time.monotonic() + timeout
    while time.monotonic() < deadline:
        if copying.poll() is not None:
            pytest.fail(f"the copy ended (exit {copying.returncode}) before a task of it ran "
                        "on the NodeManager without the application master")
        apps = (stack.rest("apps?states=RUNNING").get("apps") or {}).get("app") or []
        mine = [a for a in apps if a["name"] == f"hbase-migrate snapshot {name}"]
        if mine:
            application = mine[0]["id"]
            attempts = stack.rest(f"apps/{application}/appattempts")["appAttempts"]
            master = attempts["appAttempt"][-1]["nodeId"]
            for node in stack.described["node_managers"]:
                if node["node_id"] == master:
                    continue
                tasks = copy_tasks([Path(node["log_dirs"])], application)
                for key in tasks:
                    container = key.split("/")[0]
                    if in_flight(tasks, container):
                        return Victim(application, node, container)
        time.sleep(0.2)
    pytest.fail(f"no copy task ran on a NodeManager without the application master in "
                f"{timeout:.0f} s")


@dataclass(frozen=True)
class LostNode:
    """A copy that lost a NodeManager: when, what ran there, how the step ended."""

    victim: Victim
    killed: list[int]  # the NodeManager's pid, then its containers' processes'
    killed_at: float  # seconds into the step
    ended_at: float
    returncode: int
    stdout: str
    stderr: str
    tasks: Tasks  # the copy's tasks by container, from the NodeManagers' logs

    @property
    def lost(self) -> set[tuple[int, int]]:
        """The copy's tasks running in the killed container when it was killed."""
        return in_flight(self.tasks, self.victim.container)

    def attempts(self) -> dict[tuple[int, int], int]:
        """Each of the copy's tasks (a range) -> how many times it started."""
        found: dict[tuple[int, int], int] = {}
        for key in (k for k in self.tasks if k.endswith("/started")):
            for task, tids in self.tasks[key].items():
                found[task] = found.get(task, 0) + len(tids)
        return found


def copy_losing_a_node(yarn: Yarn, config: Path) -> LostNode:
    """``snapshot`` of ``config`` from the command line, one NodeManager killed while a copy
    task runs on it."""
    spec, folder = load_config(config), config.parent
    started = time.monotonic()
    with (folder / "snapshot.out").open("wb") as out, (folder / "snapshot.err").open("wb") as err:
        copying = subprocess.Popen([*HBASE_MIGRATE, "snapshot", "--config", str(config)],
                                   env=edge_node(yarn), stdout=out, stderr=err)
        try:
            victim = copy_running_beside_the_master(yarn, spec.name, copying)
            killed_at = time.monotonic() - started
            killed = yarn.stack.kill_node_manager(victim.node["node_id"])
            copying.wait(600)
        finally:
            if copying.poll() is None:
                copying.kill()
                copying.wait()
    log_dirs = yarn.log_dirs()
    return LostNode(victim, killed, killed_at, time.monotonic() - started, copying.returncode,
                    (folder / "snapshot.out").read_text(errors="replace"),
                    (folder / "snapshot.err").read_text(errors="replace"),
                    copy_tasks(log_dirs, victim.application))


def test_a_node_manager_killed_during_the_copy_leaves_it_exact_or_a_rerun_redoes_the_lost(
        yarn: Yarn, clusters: tuple[MiniHBase, MiniHBase]) -> None:
    """The copy's step ends exact (Spark runs the lost tasks again on the other node), or
    fails in one line and a rerun copies what the ledger lacks: at most the ranges lost.
    (Last in the module: the NodeManager killed stays dead, the other one takes the later
    applications.)"""
    src, dst = clusters
    table = "lost_node"
    run_workload(src, table, seed=175, ops=1500)
    config = write_config(yarn.driver / "nm-killed", src, dst, ONE_EXECUTOR_A_NODE + ASK_TIMEOUT,
                          table=table)
    with config.open("a", encoding="utf-8") as out:  # a copy slow enough to be caught in
        out.write("[limits]\ncopy_cells_per_second = 150\n")
    spec = load_config(config)
    assert cli(yarn, "prepare", "--config", str(config)).returncode == 0
    run = copy_losing_a_node(yarn, config)
    assert run.lost, run.tasks  # the kill caught copy tasks running there
    print(f"NodeManager {run.victim.node['node_id']} killed {run.killed_at:.1f} s into the "
          f"copy (its JVM and {len(run.killed) - 1} processes of its containers), copy tasks "
          f"{sorted(run.lost)} (stage, index) running in {run.victim.container}; the step "
          f"ended after {run.ended_at:.1f} s with exit {run.returncode}")
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        ranges = ledger.key_ranges(migration.id, table)
        first = ledger.steps(migration.id, "snapshot")[0]
    if run.returncode == 0:  # Spark ran the lost tasks again elsewhere
        print(run.stdout)
        attempts = run.attempts()
        redone = {task for task, n in attempts.items() if n > 1}
        print(f"the step ended exact: {len(ranges)} ranges, {len(redone)} of them run again")
        assert redone <= run.lost and len(attempts) == len(ranges), (redone, run.lost, attempts)
        assert all(r.copy_step_id == first.id for r in ranges)
    else:
        ranges = rerun_after(yarn, config, run, len(ranges))
    assert all(r.copied_at is not None for r in ranges)
    assert compare(src, dst, table).equal


def rerun_after(yarn: Yarn, config: Path, run: LostNode, planned: int) -> list[KeyRangeRecord]:
    """The copy that failed in ``run`` said so in one line; the same command again copies
    what the ledger lacks, redoing at most the ranges lost; the ranges after it."""
    last = run.stderr.strip().splitlines()[-1]
    print(f"the step failed: {last}")
    assert last.startswith("hbase-migrate: error: ") and "Traceback" not in run.stderr, \
        run.stderr[-3000:]
    assert "run the same command again" in last, last
    finished = {t for k in run.tasks if k.endswith("/finished") for t in run.tasks[k]}
    again = cli(yarn, "snapshot", "--config", str(config))
    assert again.returncode == 0, again.stderr[-3000:]
    spec = load_config(config)
    with Ledger.open(spec.ledger_url) as ledger:
        migration = ledger.migration(spec.name)
        assert migration is not None
        ranges = ledger.key_ranges(migration.id, spec.tables[0].source)
        rerun = ledger.steps(migration.id, "snapshot")[-1]
    copied_again = [r for r in ranges if r.copy_step_id == rerun.id]
    redone = len(copied_again) - (planned - len(finished))
    print(f"the rerun copied {len(copied_again)} of {planned} ranges: {redone} of them had "
          f"finished before, {len(run.lost)} lost with the node")
    assert redone <= len(run.lost), (len(copied_again), len(finished), run.lost)
    return ranges
