"""Spark tasks on a Kerberos-secured cluster, on a real standalone Spark cluster: the copy
and the checksums run as tasks of a worker that has none of the driver's Kerberos set-up,
against a secured real HBase (its own MIT KDC).

The worker runs with an environment without ``KRB5CCNAME``, ``KRB5_CONFIG`` and
``KRB5_CLIENT_KTNAME``, in a private mount namespace where the folder holding the keytab and
``krb5.conf`` the migration names is an empty tmpfs: its executors cannot see those files at
their configured paths (the driver, this process, can). Python workers are not reused, so
every task makes its own login.

* Nothing shipped (``ship_keytab = "never"``): the copy fails with one line naming the
  executor host, the principal and what to do, each range's task run once (a missing file
  is not retried); the command line (its own Spark application on the cluster) exits 2
  with that line last and no task's traceback.
* Shipped (``"auto"``): the copy, a replay of the writes made after it (its tasks read the
  WAL files over WebHDFS with SPNEGO) and the validation end with a match and the target
  equal to the source cell for cell; a task reports, from the executor, that it logged in from the
  shipped copy (not the configured path, which it cannot see) into its process's keyring.
* No key of the keytab appears in the worker's or the executors' logs.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.config import load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.ranges.credentials import ship_credentials
from hbase_migrate.ranges.engine import JOB_GROUP, SparkEngine
from hbase_migrate.ranges.keyrange import RangeError
from hbase_migrate.replay.spark import spark_executor
from hbase_migrate.spark.jobs import group_job_ids
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from minihbase.workload import Workload, WorkloadSpec
from realstack.hbase import RealHBase, RealHBaseOptions
from tests.realstack.fixtures import kerberos_stack, keytab_keys, leaks, stack_endpoints
from tests.spark.standalone import spark_environment, standalone_cluster

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack,
              pytest.mark.slow]
KRB5_ENV = ("KRB5CCNAME", "KRB5_CONFIG", "KRB5_CLIENT_KTNAME", "HBASE_MIGRATE_KRB5_CACHES")
TABLE = "krb_standalone"
HIDE = 'mount -t tmpfs -o mode=0700 hidden "$0" && exec "$@"'


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    yield from kerberos_stack(tmp_path_factory.mktemp("krbspark"), RealHBaseOptions(
        region_servers=1, heap="768m", kerberos=True, name="secured-spark"))


@pytest.fixture(scope="module")
def driver_only(secured: RealHBase, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the client keytab and ``krb5.conf``, hidden from the worker."""
    security = stack_endpoints(secured).security
    assert security is not None and security.keytab and security.krb5_conf
    folder = tmp_path_factory.mktemp("driver-only")
    for source, name in ((security.keytab, "client.keytab"),
                         (security.krb5_conf, "krb5.conf")):
        shutil.copyfile(source, folder / name)
        (folder / name).chmod(0o600)
    return folder


def driver_endpoints(stack: RealHBase, keys: Path) -> ClusterEndpoints:
    """The stack's endpoints with the driver-only files: this process's one identity."""
    found = stack_endpoints(stack)
    assert found.security is not None
    return replace(found, security=found.security.merged(
        {"keytab": str(keys / "client.keytab"), "krb5_conf": str(keys / "krb5.conf")}))


def hiding(folder: Path) -> list[str]:
    """The command prefix that runs a program with an empty tmpfs over ``folder`` (a private
    mount namespace), or a skip where this machine does not allow one."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare (util-linux) to hide the keytab from the Spark worker")
    prefix = [unshare, "--mount"] if os.geteuid() == 0 else \
        [unshare, "--map-root-user", "--mount"]
    tried = subprocess.run([*prefix, "sh", "-c", HIDE, str(folder), "test", "!", "-e",
                            str(folder / "client.keytab")], capture_output=True, check=False)
    if tried.returncode:
        pytest.skip(f"cannot hide a folder from the Spark worker (unshare --mount: "
                    f"{tried.stderr.decode().strip() or tried.returncode})")
    return [*prefix, "sh", "-c", HIDE, str(folder)]


@pytest.fixture(scope="module")
def spark_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark")


@pytest.fixture(scope="module")
def standalone(driver_only: Path, spark_folder: Path) -> Iterator[Any]:
    worker_env = {k: v for k, v in spark_environment(spark_folder).items()
                  if k not in KRB5_ENV}
    yield from standalone_cluster(spark_folder, worker_env=worker_env,
                                  worker_prefix=hiding(driver_only),
                                  conf={"spark.python.worker.reuse": "false",
                                        "spark.cores.max": "1"})  # one core for the CLI's


def write(stack: RealHBase, keys: Path, seed: int, ops: int) -> None:
    """``ops`` writes of a workload into ``TABLE`` (created when missing)."""
    runner = Workload(driver_endpoints(stack, keys), WorkloadSpec(TABLE, seed, ops))
    try:
        runner.ensure_table()
        runner.run()
    finally:
        runner.close()


@pytest.fixture(scope="module")
def source_table(secured: RealHBase, driver_only: Path) -> str:
    write(secured, driver_only, seed=53, ops=150)
    return TABLE


def configure(stack: RealHBase, keys: Path, folder: Path, master: str, ship: str,
              target: str) -> Path:
    """A migration of ``TABLE`` into ``target`` (both on the secured stack) on ``master``,
    logging in from the driver-only files."""
    cluster = (f'cluster_json = "{stack.cluster_json}"\nkeytab = "{keys / "client.keytab"}"\n'
               f'krb5_conf = "{keys / "krb5.conf"}"\n')
    config = folder / f"{target}.toml"
    config.write_text(
        f'[migration]\nname = "{target}"\nledger = "sqlite:///{folder / target}.db"\n'
        f'[source]\n{cluster}[target]\n{cluster}'
        f'[spark]\nmaster = "{master}"\nship_keytab = "{ship}"\n[ranges]\nmax_cells = 150\n'
        f'[[tables]]\nsource = "{TABLE}"\ntarget = "{target}"\n', encoding="utf-8")
    return config


def credentials_in_use(configured: str, _: int) -> dict[str, Any]:
    """Run in a task: where this task's login came from, as the executor sees it."""
    import gssapi

    from hbase_migrate.cluster.auth.kerberos import logins

    held = logins()[0]
    keytab, cache = held["keytab"] or "", held["ccache"] or ""
    creds = gssapi.Credentials(usage="initiate", store={"ccache": cache})
    return {"host": socket.gethostname(), "keytab": keytab,
            "keytab_mode": stat.S_IMODE(os.stat(keytab).st_mode) if keytab else None,
            "cache": cache, "principal": str(creds.name),
            "configured_visible": os.path.exists(configured)}


def test_without_the_keytab_shipped_a_task_fails_in_one_line(
        secured: RealHBase, driver_only: Path, standalone: Any, source_table: str,
        tmp_path: Path) -> None:
    url = str(standalone.sparkContext.master)
    config = configure(secured, driver_only, tmp_path, url, "never",
                       f"{source_table}_unshipped")
    spec = load_config(config)
    assert prepare(spec).passed  # the driver sees its files
    with pytest.raises(RangeError) as failed:
        snapshot(spec)
    message = str(failed.value)
    principal = spec.source.endpoints().security.principal  # type: ignore[union-attr]
    assert "\n" not in message and "Traceback" not in message, message
    for part in ("a Spark task failed: KerberosError: cluster 'secured-spark', ",
                 f"Spark executor on host {socket.gethostname()}", f"principal {principal}",
                 f"keytab {driver_only / 'client.keytab'} is not on this host",
                 'ship_keytab = "auto"'):
        assert part in message, (part, message)
    context = standalone.sparkContext  # each range's task ran once: no retry brings the file
    tracker = context.statusTracker()
    stages = [tracker.getStageInfo(s) for j in group_job_ids(context, JOB_GROUP)
              for s in tracker.getJobInfo(j).stageIds]
    assert stages and [s.numFailedTasks for s in stages] == [0] * len(stages), stages

    # The command line (its own Spark application on the cluster): the same line, exit 2.
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("spark.executor.memory 512m\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", "snapshot", "--config",
                           str(config)], env={**os.environ, "SPARK_CONF_DIR": str(conf)},
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stderr.splitlines()[-1] == f"hbase-migrate: error: {message}", done.stderr
    assert "Traceback" not in done.stderr, done.stderr  # no task's traceback on the console


def test_shipped_keytab_copy_replay_and_validate_on_a_standalone_cluster(
        secured: RealHBase, driver_only: Path, standalone: Any, spark_folder: Path,
        source_table: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = str(standalone.sparkContext.master)
    target = f"{source_table}_copy"
    spec = load_config(configure(secured, driver_only, tmp_path, url, "auto", target))
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    assert copied["engine"] == url and copied["ranges_copied"] == copied["ranges"] > 1, copied
    assert "spark.authenticate is off: anyone who reaches the driver can fetch it" \
        in caplog.text  # this test cluster's file transfer is not authenticated
    write(secured, driver_only, seed=54, ops=60)  # after T0: for the replay's tasks
    replayed = replay(spec, executor=spark_executor(standalone)).to_json()
    assert replayed["exit_code"] == 0 and replayed["files_read"] > 0, replayed
    assert sum(replayed["cells"].values()) > 0, replayed
    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    found = driver_endpoints(secured, driver_only)
    with Thrift2Client(found.thrift2 or "", **found.client_auth) as src, \
            Thrift2Client(found.thrift2 or "", **found.client_auth) as tgt:
        compared = compare_tables(src, tgt, source_table, target)
    assert compared.equal and compared.source_cells > copied["cells"] > 0, compared

    # From the executors: each task logged in from the shipped copy into its keyring.
    configured = str(driver_only / "client.keytab")
    credentials = ship_credentials(standalone, spec)
    assert credentials is not None and credentials.shipped
    seen = SparkEngine(standalone, credentials).map(
        lambda i: credentials_in_use(configured, i), [0, 1], what="credentials")
    principal = spec.source.endpoints().security.principal  # type: ignore[union-attr]
    for task in seen:  # the worker's copy, in its work dir
        assert task["configured_visible"] is False, task
        assert task["keytab"].startswith(f"{spark_folder / 'work-0'}/"), task
        assert task["keytab"].endswith("/client.keytab"), task
        assert task["keytab_mode"] == 0o600, task
        assert task["cache"].startswith("KEYRING:process:hbase-migrate-"), task  # no file
        assert task["principal"] == principal, task

    assert secured.kdc is not None
    keys = keytab_keys(secured.kdc, secured.data_dir / "client.keytab")
    logs = [p for p in spark_folder.rglob("*")
            if p.is_file() and p.name in ("stderr", "stdout", "worker.log", "master.log")]
    assert logs
    for log in logs:
        assert not leaks(log.read_bytes(), keys), f"a keytab key in {log}"
