"""The archive a cluster master's executors get (``spark.archives``): the project's package
as this driver has it (its compiled modules included) and the distributions the
``executor`` optional-dependency group names, with theirs, copied from this driver's
environment: no Airflow, no Great Expectations, no pyspark (every executor has its own,
which the pre-flight compares with the driver's). It is built once per content and kept
in the cache folder (``$HBASE_MIGRATE_CACHE_DIR``, else ``~/.cache/hbase-migrate``).

The archive is only good for executors of the same Python minor version and platform as
this driver (its compiled modules); the pre-flight job says so on any other.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sys
import sysconfig
import tarfile
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import hbase_migrate
from hbase_migrate.errors import ConfigError

PROJECT = "hbase-migrate"
GROUP = "executor"  # [project.optional-dependencies] of pyproject.toml
NOT_SHIPPED = frozenset({"pyspark", "pyspark-client", "py4j"})  # the executors' own
CACHE_ENV = "HBASE_MIGRATE_CACHE_DIR"
UNPACKED = "hbase_migrate_env"  # the archive's folder in an executor's working folder
SKIPPED_DIRS = frozenset({"__pycache__", "docs_assets"})  # (docs_assets: Data Docs' web assets)


@dataclass(frozen=True)
class ExecutorArchive:
    """A built archive: its file, whether this call built it, and the versions it holds
    (distribution name -> version) that executors must import."""

    path: Path
    built: bool
    versions: tuple[tuple[str, str], ...]
    python: str  # "3.11": the executors' Python must be this minor version

    @property
    def spark_archive(self) -> str:
        """The ``spark.archives`` entry: the file, unpacked as :data:`UNPACKED`."""
        return f"{self.path}#{UNPACKED}"


def cache_dir() -> Path:
    found = os.environ.get(CACHE_ENV)
    return Path(found) if found else Path.home() / ".cache" / "hbase-migrate"


def executor_distributions() -> list[metadata.Distribution]:
    """The installed distributions the ``executor`` group needs, with their dependencies
    (markers evaluated for this Python), pyspark's excepted."""
    from packaging.requirements import Requirement  # the driver's alone
    from packaging.utils import canonicalize_name

    try:
        wanted = [Requirement(r) for r in metadata.requires(PROJECT) or ()]
    except metadata.PackageNotFoundError:
        raise ConfigError(f"the Spark executors' archive needs {PROJECT} installed (its "
                          f"{GROUP!r} dependency group names what tasks import)") from None
    todo = [r for r in wanted if r.marker is not None and r.marker.evaluate({"extra": GROUP})
            and not r.marker.evaluate({"extra": ""})]
    found: dict[str, metadata.Distribution] = {}
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in found or name in NOT_SHIPPED:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise ConfigError(f"the Spark executors' archive needs {requirement.name}, which "
                              f"this environment does not have: install "
                              f"{PROJECT}[{GROUP}]") from None
        found[name] = dist
        for text in dist.requires or ():
            nested = Requirement(text)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
                todo.append(nested)
    return [found[n] for n in sorted(found)]


def _members() -> list[tuple[str, Path]]:
    """(name in the archive, file here) of everything shipped."""
    members: list[tuple[str, Path]] = []
    package = Path(hbase_migrate.__file__).parent
    for folder, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith((".py", ".so", ".pyd", ".json", ".thrift", ".sql", ".typed")):
                path = Path(folder) / name
                members.append((str(path.relative_to(package.parent)), path))
    for dist in executor_distributions():
        for file in dist.files or ():
            parts = Path(str(file)).parts
            if parts and parts[0] != ".." and not SKIPPED_DIRS.intersection(parts):
                path = Path(str(dist.locate_file(file)))
                if path.is_file():
                    members.append((str(file), path))
    return members


def _project_metadata() -> bytes:
    """A dist-info METADATA naming the project and its version, for the executors'
    ``importlib.metadata`` (the driver may run it from a source folder)."""
    version = metadata.version(PROJECT)
    return f"Metadata-Version: 2.1\nName: {PROJECT}\nVersion: {version}\n".encode()


def executor_archive() -> ExecutorArchive:
    """The archive of this driver's project and executor dependencies: from the cache when
    one of the same content is there, else built now."""
    members = _members()
    python = "{}.{}".format(*sys.version_info[:2])
    versions = tuple(sorted(
        {(PROJECT, metadata.version(PROJECT)),
         *((d.metadata["Name"], d.version) for d in executor_distributions())}))
    digest = hashlib.sha256(json.dumps([python, sysconfig.get_platform(), versions]).encode())
    for name, path in members:
        status = path.stat()
        digest.update(f"{name}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    folder = cache_dir() / "spark"
    target = folder / f"hbase-migrate-executors-{digest.hexdigest()[:16]}.tar.gz"
    if target.exists():
        return ExecutorArchive(target, False, versions, python)
    folder.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(dir=folder, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as raw, \
                tarfile.open(fileobj=raw, mode="w:gz", compresslevel=1) as tar:
            for name, path in members:
                tar.add(path, arcname=name, recursive=False)
            info = tarfile.TarInfo(f"hbase_migrate-{metadata.version(PROJECT)}.dist-info/"
                                   "METADATA")
            data = _project_metadata()
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        os.replace(partial, target)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise
    return ExecutorArchive(target, True, versions, python)
