"""Resolve a Maven module's run-time class path once, cache it, and launch JVMs on it.

``module_classpath(module, properties)`` runs ``mvn dependency:build-classpath`` the first
time (downloading into the usual ``~/.m2``), compiles the module's own Java sources with
``javac``, and caches the result under ``$HBASE_MIGRATE_CACHE/<cache>/`` (default
``~/.cache/hbase-migrate``) keyed by the module, the pom's content, its sources and the
properties (``{"hbase.version": "2.6.1"}``). Later calls read the cache and run no Maven at
all, as long as every jar is still there; two processes building the same module at once
(two test workers, two ``realstack start``) take turns on a lock in its cache folder, and
the second reads what the first built. ``java_command`` builds the command line with the
``--add-opens`` flags Hadoop, HBase and Kafka need on Java 17+, and whatever
``$HBASE_MIGRATE_JVM_OPTIONS`` adds (the test suite, whose JVMs live for seconds, compiles
with C1 only: ``-XX:TieredStopAtLevel=1``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from hbase_migrate.errors import HBaseMigrateError

MIN_JAVA = 17
JVM_OPTIONS_ENV = "HBASE_MIGRATE_JVM_OPTIONS"  # options added to every JVM launched here

# What HBase's bin/hbase passes on JDK 11+ (and what Netty, Hadoop and Kafka reach into).
_OPENED = ("java.lang", "java.lang.reflect", "java.lang.invoke", "java.io", "java.net",
           "java.nio", "java.text", "java.util", "java.util.concurrent",
           "java.util.concurrent.atomic", "java.util.regex", "java.time",
           "jdk.internal.misc", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
           "sun.net.dns", "sun.net.util", "sun.security.x509", "sun.security.util")
ADD_OPENS = (
    *(f"--add-opens=java.base/{package}=ALL-UNNAMED" for package in _OPENED),
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.dns=ALL-UNNAMED",
    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
)


class JvmError(HBaseMigrateError):
    """A Java program could not be built (Java, Maven, an artifact) or run."""


def find_java() -> str:
    """The ``java`` executable (``$JAVA_HOME/bin/java`` first), checked to be 17 or newer."""
    home = os.environ.get("JAVA_HOME")
    candidate = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not candidate or not os.access(candidate, os.X_OK):
        raise JvmError(f"Java {MIN_JAVA}+ is required but no 'java' was found on PATH or in "
                       "$JAVA_HOME; install it (Debian: apt-get install openjdk-17-jre-headless)")
    out = subprocess.run([candidate, "-version"], capture_output=True, text=True, timeout=30,
                         check=False)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    major = int(match.group(1)) if match else 0
    if major == 1 and match and match.group(2):  # "1.8.0" style
        major = int(match.group(2))
    if major < MIN_JAVA:
        raise JvmError(f"Java {MIN_JAVA}+ is required, {candidate} is version "
                       f"{major or 'unknown'}")
    return candidate


def cache_root(folder: str) -> Path:
    """``$HBASE_MIGRATE_CACHE/<folder>`` (default ``~/.cache/hbase-migrate/<folder>``)."""
    env = os.environ.get("HBASE_MIGRATE_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "hbase-migrate"
    return base / folder


def module_path(path: Path) -> Path:
    """``path`` if it holds a ``pom.xml``, else a clear error."""
    if not (path / "pom.xml").is_file():
        raise JvmError(f"no Maven module at {path} (expected {path / 'pom.xml'})")
    return path


def find_maven() -> str:
    """The ``mvn`` executable, or a clear error saying how to install it."""
    found = shutil.which("mvn")
    if not found:
        raise JvmError("Maven is required to build a Java class path but no 'mvn' is on "
                       "PATH; install it (Debian: apt-get install maven, or "
                       "scripts/system-deps.sh test)")
    return found


def module_key(path: Path, properties: Mapping[str, str]) -> str:
    """The cache folder's name of module ``path`` built with ``properties``: the module's
    name, the properties' values and a digest of its pom, its sources and the properties."""
    digest = hashlib.sha256((path / "pom.xml").read_bytes())
    for source in sorted(p for p in (path / "src").rglob("*") if p.is_file()) \
            if (path / "src").is_dir() else ():
        digest.update(source.relative_to(path).as_posix().encode() + source.read_bytes())
    for name, value in sorted(properties.items()):
        digest.update(f"\0{name}={value}".encode())
    version = "-".join(v for _, v in sorted(properties.items()))
    return f"{path.name}-{version or 'default'}-{digest.hexdigest()[:12]}"


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file, for error messages."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 8192))
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _maven_failure(log_file: Path) -> str:
    """The one line of a Maven log that says why (a missing artifact, say)."""
    text = log_file.read_text(encoding="utf-8", errors="replace")
    for line in re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines():
        if line.startswith("[ERROR]") and ("Could not" in line or "Failed" in line):
            return line.removeprefix("[ERROR] ").strip()
    return log_tail(log_file)


def module_classpath(module: Path, properties: Mapping[str, str] | None = None, *,
                     cache: str = "jvm", timeout: float = 1800.0) -> list[str]:
    """The run-time class path of the Maven module in folder ``module`` (its compiled
    sources first), built once and kept under :func:`cache_root` ``(cache)``.

    ``properties`` are passed as ``-Dname=value`` and are part of the cache key. Raises
    :class:`JvmError` naming the missing tool or the artifact Maven could not fetch (with the
    log path)."""
    path = module_path(module)
    props = dict(properties or {})
    folder = cache_root(cache) / module_key(path, props)
    saved = folder / "classpath.txt"
    entries = _saved_classpath(saved)
    if entries is not None:
        return entries
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / ".lock"):
        entries = _saved_classpath(saved)  # built by another process while this one waited
        if entries is not None:
            return entries
        return _build(path, props, folder, timeout)


def cached_classpath(module: Path, properties: Mapping[str, str] | None = None, *,
                     cache: str = "jvm") -> list[str] | None:
    """The class path an earlier :func:`module_classpath` built and kept, None when there
    is none yet (nothing is built)."""
    key = module_key(module_path(module), dict(properties or {}))
    return _saved_classpath(cache_root(cache) / key / "classpath.txt")


def _saved_classpath(saved: Path) -> list[str] | None:
    """The class path a build saved, while every entry of it is still there."""
    if not saved.is_file():
        return None
    entries = saved.read_text(encoding="utf-8").split(os.pathsep)
    return entries if all(os.path.exists(entry) for entry in entries) else None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (created) for this process, held inside the block."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build(path: Path, props: dict[str, str], folder: Path, timeout: float) -> list[str]:
    """Resolve and compile the module into ``folder``; its class path, saved there."""
    saved = folder / "classpath.txt"
    resolved = folder / "dependencies.txt"
    log_file = folder / "maven.log"
    command = [find_maven(), "-B", "-f", str(path / "pom.xml"), "dependency:build-classpath",
               f"-Dmdep.outputFile={resolved}", *(f"-D{k}={v}" for k, v in props.items())]
    with log_file.open("wb") as out:
        try:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise JvmError(f"Maven did not resolve {path.name} {props} within {timeout:g} s; "
                           f"log {log_file}") from None
    if done.returncode != 0 or not resolved.is_file():
        raise JvmError(f"Maven could not resolve the {path.name} module {props}: "
                       f"{_maven_failure(log_file)} (log {log_file})")
    entries = [e for e in resolved.read_text(encoding="utf-8").strip().split(os.pathsep) if e]
    classes = _compile(path, folder, entries)
    if classes is not None:
        entries.insert(0, str(classes))
    saved.write_text(os.pathsep.join(entries), encoding="utf-8")
    return entries


def _compile(path: Path, cache: Path, classpath: list[str]) -> Path | None:
    """Compile ``src/main/java`` with ``javac`` into the cache, beside a copy of
    ``src/main/resources``; None when there are no sources."""
    sources = sorted(str(s) for s in (path / "src" / "main" / "java").rglob("*.java")) \
        if (path / "src" / "main" / "java").is_dir() else []
    if not sources:
        return None
    javac = Path(find_java()).with_name("javac")
    if not javac.exists() and shutil.which("javac"):
        javac = Path(str(shutil.which("javac")))
    if not javac.exists():
        raise JvmError(f"a JDK (javac) is required to compile {path.name}'s Java sources; "
                       "install one (Debian: apt-get install openjdk-17-jdk-headless)")
    classes = cache / "classes"
    shutil.rmtree(classes, ignore_errors=True)
    resources = path / "src" / "main" / "resources"
    if resources.is_dir():
        shutil.copytree(resources, classes)
    done = subprocess.run([str(javac), "-nowarn", "-encoding", "UTF-8", "-d", str(classes),
                           "-cp", os.pathsep.join(classpath), *sources],
                          capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise JvmError(f"javac failed on {path.name}'s Java sources:\n"
                       f"{(done.stdout + done.stderr)[-3000:]}")
    return classes


def java_command(classpath: Sequence[str], main: str, args: Sequence[str] = (), *,
                 heap: str = "1g", system_properties: Mapping[str, str] | None = None,
                 jvm_options: Sequence[str] = ()) -> list[str]:
    """``java`` with a bounded heap, the Java 17 ``--add-opens`` flags, ``-D`` properties and
    the class path, running ``main`` with ``args``."""
    extra = shlex.split(os.environ.get(JVM_OPTIONS_ENV, ""))
    return [find_java(), f"-Xmx{heap}", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
            *ADD_OPENS, *extra, *jvm_options,
            *(f"-D{k}={v}" for k, v in (system_properties or {}).items()),
            "-cp", os.pathsep.join(classpath), main, *args]
