"""A real Spark standalone cluster for a test module: a master and workers started from
pyspark's own jars on loopback (:func:`start_cluster`), and for :func:`standalone_cluster` a
session of this process on it (the driver), all stopped afterwards. ``worker_env`` and
``worker_prefix`` shape the workers' processes (and so their executors'): their environment,
and a command they run under (a private mount namespace). :func:`other_host` makes the
environment of a worker that is as good as another host: a plain Python with pyspark alone,
the project's folder and this environment hidden."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hbase_migrate.ranges.engine import prepare_spark_environment
from stackprocs.process import free_port


def _wait_http(url: str, needle: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if needle in answer.read().decode():
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {needle!r} at {url}")


def spark_environment(folder: Path) -> dict[str, str]:
    """What the master's and the worker's processes run with: this Python and loopback."""
    import pyspark

    home = Path(pyspark.__file__).parent
    return {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "SPARK_LOG_DIR": str(folder / "logs")}


def start_cluster(folder: Path, *, workers: int = 1, cores: int = 2,
                  worker_env: Mapping[str, str] | None = None,
                  worker_prefix: Sequence[str] = ()) -> Generator[str, None, None]:
    """Start a master and ``workers`` workers in ``folder`` (logs in ``master.log`` and
    ``worker-N.log``, each worker's work dir ``work-N/``, its web UI's port in
    ``worker-N.port``) and yield the master's URL; stop them afterwards. The workers run
    ``worker_env``'s ``SPARK_HOME`` (default: this environment's)."""
    pytest.importorskip("pyspark")
    env = spark_environment(folder)
    wenv = dict(worker_env) if worker_env is not None else env
    spark_class = str(Path(env["SPARK_HOME"]) / "bin" / "spark-class")
    worker_class = str(Path(wenv["SPARK_HOME"]) / "bin" / "spark-class")
    port, ui = free_port(), free_port()
    url = f"spark://127.0.0.1:{port}"
    ended = threading.Event()
    (folder / "master.port").write_text(str(ui))
    procs = [subprocess.Popen(
        [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(ui)], env=env,
        stdout=(folder / "master.log").open("wb"), stderr=subprocess.STDOUT)]
    try:
        _wait_http(f"http://127.0.0.1:{ui}/json/", '"status" : "ALIVE"', 90)
        for n in range(workers):
            (folder / f"work-{n}").mkdir(parents=True, exist_ok=True)
            worker_ui = free_port()
            (folder / f"worker-{n}.port").write_text(str(worker_ui))
            procs.append(subprocess.Popen(
                [*worker_prefix, worker_class, "org.apache.spark.deploy.worker.Worker", url,
                 "--host", "127.0.0.1", "--cores", str(cores), "--memory", "1g",
                 "--webui-port", str(worker_ui), "--work-dir", str(folder / f"work-{n}")],
                env=wenv, stdout=(folder / f"worker-{n}.log").open("wb"),
                stderr=subprocess.STDOUT))
        _wait_workers(f"http://127.0.0.1:{ui}/json/", workers, 90)
        pruner = threading.Thread(target=_prune_ended, args=(folder, ended), daemon=True)
        pruner.start()
        yield url
    finally:
        ended.set()
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def _prune_ended(folder: Path, ended: threading.Event) -> None:
    """Until ``ended``, the folders in the executors' folders of every application the
    master says has ended (the unpacked Python archive, 66 MB an executor) removed, their
    logs kept: a module's many applications would otherwise fill the disk, and its tests
    read the logs whenever they come to it (Spark's own cleanup, by age, took the logs too,
    before a slow test had read them)."""
    pruned: set[str] = set()
    while not ended.wait(5):
        try:
            done = {a["id"] for a in answer(folder / "master.port")["completedapps"]}
        except OSError:
            continue
        for app in done - pruned:
            for executor in folder.glob(f"work-*/{app}/*"):
                for child in executor.iterdir():
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child, ignore_errors=True)
            pruned.add(app)


def _wait_workers(url: str, workers: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                alive = json.loads(answer.read())["aliveworkers"]
            if alive >= workers:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {workers} workers")


def standalone_cluster(folder: Path, *, worker_env: Mapping[str, str] | None = None,
                       worker_prefix: Sequence[str] = (),
                       conf: Mapping[str, str] | None = None) -> Iterator[Any]:
    """Start the cluster in ``folder`` (one worker of 2 cores, :func:`start_cluster`) and
    yield a ``SparkSession`` on it; stop everything afterwards."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    prepare_spark_environment()
    session = None
    cluster = start_cluster(folder, worker_env=worker_env, worker_prefix=worker_prefix)
    try:
        url = next(cluster)
        builder = (SparkSession.builder.master(url).appName("hbase-migrate-test-standalone")
                   .config("spark.ui.enabled", "false")
                   .config("spark.executor.memory", "512m"))
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        yield session
    finally:
        if session is not None:
            session.stop()
        cluster.close()
        logging.getLogger("py4j").setLevel(logging.WARNING)


HIDE = 'for d; do [ "$d" = -- ] && break; mount -t tmpfs -o mode=0700 hidden "$d"; done; ' \
       'while [ "$1" != -- ]; do shift; done; shift; exec "$@"'


REPO = Path(__file__).parents[2]
LOCK = REPO / "uv.lock"


def locked(name: str, lock: Path = LOCK) -> list[str]:
    """Requirement lines of ``name`` and of every package it depends on, each at the version
    ``lock`` (uv.lock) pins with the lock's hashes of its files: what uv installs for
    ``--require-hashes``. A name the lock lacks is an error naming both."""
    packages = {p["name"]: p for p in tomllib.loads(lock.read_text("utf-8"))["package"]}
    lines, todo, seen = [], [name], set()
    while todo:
        wanted = todo.pop(0)
        if wanted in seen:
            continue
        seen.add(wanted)
        if wanted not in packages:
            raise LookupError(f"{lock}: no [[package]] named {wanted!r} (wanted for {name})")
        package = packages[wanted]
        files = [*([package["sdist"]] if "sdist" in package else []), *package.get("wheels", [])]
        hashes = "".join(f" --hash={f['hash']}" for f in files)
        lines.append(f"{wanted}=={package['version']}{hashes}")
        todo += [d["name"] for d in package.get("dependencies", [])]
    return lines


def bare_python(folder: Path) -> Path:
    """A virtualenv in ``folder`` of this Python's base interpreter with pyspark alone, the
    version uv.lock pins (this environment's), installed by uv from the package index with
    the lock's hashes (uv's cache serves what it holds), or a skip without uv."""
    import pyspark

    tools = REPO / ".tools" / "bin" / "uv"  # make setup's, of the Makefile's version
    uv = str(tools) if tools.exists() else shutil.which("uv")
    if uv is None:
        pytest.skip("no uv (make setup puts it in .tools/bin) to make the workers' plain Python")
    wanted = locked("pyspark")
    if wanted[0].split()[0] != f"pyspark=={pyspark.__version__}":
        raise AssertionError(f"{LOCK} pins {wanted[0].split()[0]} but this environment has "
                             f"pyspark {pyspark.__version__} ({pyspark.__file__}): make setup")
    requirements = folder.with_name(f"{folder.name}-requirements.txt")
    requirements.write_text("\n".join(wanted) + "\n", "utf-8")
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    subprocess.run([uv, "venv", "--quiet", "--python", str(base), str(folder)], check=True)
    subprocess.run([uv, "pip", "install", "--quiet", "--require-hashes", "--python",
                    str(folder / "bin" / "python"), "-r", str(requirements)], check=True)
    return folder


def shared_bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`bare_python` made once per test run and shared by every module that asks, on
    any worker: in the run's temporary folder (outside the project, so no worker hides it),
    under a lock. uv builds pyspark's wheel from its source distribution each time (30 CPU
    seconds: the index's answer counts as changed, so its cached build is not used)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, every worker's
    folder = root / "bare-python"
    with open(root / "bare-python.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            bare_python(folder)
            (folder / ".made").touch()
    return folder


def other_host(folder: Path, python: Path, hidden: Sequence[Path]) -> tuple[dict[str, str],
                                                                             list[str]]:
    """The environment and command prefix of a worker as good as another host: ``python``'s
    pyspark as its SPARK_HOME and its ``python3`` first on PATH, nothing of this environment
    (no PYTHONPATH, PYSPARK_PYTHON or VIRTUAL_ENV), and ``hidden`` folders empty (a private
    mount namespace), or a skip where this machine allows none."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare (util-linux) to hide the project from the Spark workers")
    prefix = [unshare, "--mount"] if os.geteuid() == 0 else \
        [unshare, "--map-root-user", "--mount"]
    folders = [str(f) for f in hidden]
    tried = subprocess.run([*prefix, "sh", "-c", HIDE, "-", *folders, "--", "test", "!", "-e",
                            str(Path(__file__))], capture_output=True, check=False)
    if tried.returncode:
        pytest.skip(f"cannot hide the project from the Spark workers (unshare --mount: "
                    f"{tried.stderr.decode().strip() or tried.returncode})")
    site = next((python / "lib").glob("python3*/site-packages"))
    env = {"PATH": f"{python / 'bin'}:/usr/bin:/bin", "HOME": str(folder),
           "SPARK_HOME": str(site / "pyspark"), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOG_DIR": str(folder / "logs"), "LANG": "C.UTF-8"}
    env.update({k: v for k, v in os.environ.items() if k in ("JAVA_HOME", "TMPDIR")})
    return env, [*prefix, "sh", "-c", HIDE, "-", *folders, "--"]


@dataclass(frozen=True)
class Cluster:
    """A standalone cluster of two workers as good as other hosts."""

    url: str
    folder: Path  # the workers' side: logs, work dirs, their Python
    driver: Path  # what the workers cannot see (the driver's files go here)


def other_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and two workers of one core each as good as other hosts (:func:`other_host`:
    the project, this environment and the ``driver`` folder hidden from them)."""
    import hbase_migrate

    folder, driver = tmp_path_factory.mktemp("spark"), tmp_path_factory.mktemp("driver")
    python = shared_bare_python(tmp_path_factory)
    project = Path(hbase_migrate.__file__).parents[1]
    hidden = [project, driver, *([Path(sys.prefix)] if not Path(sys.prefix).is_relative_to(
        project) else [])]
    env, prefix = other_host(folder, python, hidden)
    for url in start_cluster(folder, workers=2, cores=1, worker_env=env,
                             worker_prefix=prefix):
        yield Cluster(url, folder, driver)


def answer(port_file: Path) -> dict[str, Any]:
    """The JSON answer of the web UI whose port ``port_file`` holds."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port_file.read_text()}/json/",
                                timeout=10) as reply:
        found: dict[str, Any] = json.loads(reply.read())
        return found


def apps(cluster: Cluster) -> list[tuple[str, str]]:
    """(name, id) of the applications the master saw end."""
    return [(a["name"], a["id"]) for a in answer(cluster.folder / "master.port")[
        "completedapps"]]


def executors_of(cluster: Cluster, app: str) -> list[tuple[int, Path, int]]:
    """(worker, executor folder, memory in MiB) of every executor application ``app`` had."""
    found = []
    for n in (0, 1):
        worker = answer(cluster.folder / f"worker-{n}.port")
        for ex in [*worker["executors"], *worker["finishedexecutors"]]:
            if ex["appid"] == app:
                found.append((n, cluster.folder / f"work-{n}" / app / str(ex["id"]),
                              int(ex["memory"])))
    return found


def finished_tasks(folder: Path) -> int:
    """The tasks an executor's log says it finished."""
    log = folder / "stderr"
    return log.read_text(errors="replace").count("Finished task") if log.exists() else 0
