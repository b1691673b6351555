"""A Maven module's runtime class path, resolved once and cached beside its ``pom.xml``.

``mvn dependency:build-classpath`` downloads the module's dependencies into the local
repository (``~/.m2``) on first use; the resulting class path is cached in
``target/classpath.txt`` and reused while the pom is unchanged and every jar still exists.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from minihbase.process import EmbeddedStackError


def maven_module_classpath(module: Path, timeout: float = 900.0) -> list[str]:
    """The jars of ``module``'s runtime class path (resolving them with Maven when the
    cache is missing or stale)."""
    pom = module / "pom.xml"
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    cache = module / "target" / f"classpath-{digest}.txt"
    if cache.is_file():
        jars = cache.read_text("utf-8").strip().split(os.pathsep)
        if jars and all(Path(j).is_file() for j in jars):
            return jars
    mvn = shutil.which("mvn")
    if mvn is None:
        raise EmbeddedStackError(f"{pom}: Maven ('mvn') is required to resolve the class "
                                 "path (Debian: apt-get install maven)")
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_suffix(".part")
    done = subprocess.run(
        [mvn, "-q", "-B", "-f", str(pom), "dependency:build-classpath",
         "-Dmdep.includeScope=runtime", f"-Dmdep.outputFile={partial}"],
        capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0 or not partial.is_file():
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
        raise EmbeddedStackError(f"{pom}: mvn dependency:build-classpath failed "
                                 f"(exit {done.returncode}):\n{tail}")
    partial.replace(cache)
    return cache.read_text("utf-8").strip().split(os.pathsep)
