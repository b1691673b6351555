"""Compile the project's hot loops into extension modules beside their sources: the WAL
reader's (hbase_migrate/wal/_hotloops.pyx), the replay's entry converter's
(hbase_migrate/replay/_convert.pyx) and the CDC message renderer's
(hbase_migrate/sinks/_render.pyx), the HFile reader's CRC32C
(hbase_migrate/hfile/_crc32c.pyx), its data block decoders
(hbase_migrate/hfile/_cells.pyx), its scan matcher
(hbase_migrate/hfile/_visible.pyx), the HFile writer's per-cell loop
(hbase_migrate/hfile/_writer.pyx), the validation's range digest
(hbase_migrate/ranges/_digest.pyx) and a region's digest from raw blocks
(hbase_migrate/hfile/_digestscan.pyx). Cython to C, then the C compiler Python was built with.
Run by `make setup`; the wheel's build hook (hatch_build.py) compiles the same modules into
the wheel. Without them the pure-Python code runs, which gives the same results.

Usage: python scripts/build-speedups.py [--force]
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    ROOT / "hbase_migrate" / "wal" / "_hotloops.pyx",
    ROOT / "hbase_migrate" / "replay" / "_convert.pyx",
    ROOT / "hbase_migrate" / "sinks" / "_render.pyx",
    ROOT / "hbase_migrate" / "hfile" / "_crc32c.pyx",
    ROOT / "hbase_migrate" / "hfile" / "_cells.pyx",
    ROOT / "hbase_migrate" / "hfile" / "_visible.pyx",
    ROOT / "hbase_migrate" / "hfile" / "_writer.pyx",
    ROOT / "hbase_migrate" / "ranges" / "_digest.pyx",
    ROOT / "hbase_migrate" / "hfile" / "_digestscan.pyx",
)
SHARED = (
    ROOT / "hbase_migrate" / "plain_tuples.pxd",  # cimported by the modules above
    ROOT / "hbase_migrate" / "wal" / "_hotloops.pxd",
    ROOT / "hbase_migrate" / "ranges" / "_digest.pxd",
    ROOT / "hbase_migrate" / "hfile" / "_rawbytes.pxd",
)
BUILD = ROOT / "build" / "speedups"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")  # read here: sysconfig's first read races


def target(source: Path) -> Path:
    return source.with_name(source.stem + SUFFIX)


class BuildError(Exception):
    """Cython or the C compiler failed (or is missing)."""


def run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, check=False, capture_output=True, text=True)
    except OSError as exc:  # no such compiler
        raise BuildError(f"{shlex.join(command)}: {exc}") from exc
    if done.returncode:
        raise BuildError(f"{shlex.join(command)} failed:\n{done.stdout}{done.stderr}")


def compile_module(source: Path, out: Path, work: Path) -> None:
    """Compile ``source`` into the extension module ``out`` (its C file in ``work``), for
    the interpreter running this, with the compiler it was built with (``$CC`` if set)."""
    work.mkdir(parents=True, exist_ok=True)
    c_file = work / (source.stem + ".c")
    run([sys.executable, "-m", "cython", "-3", "--fast-fail", str(source), "-o", str(c_file)])
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    flags = shlex.split(sysconfig.get_config_var("CFLAGSFORSHARED") or "-fPIC")
    include = sysconfig.get_paths()["include"]
    partial = out.with_suffix(".partial")
    run([*compiler, "-shared", "-O2", *flags, f"-I{include}", str(c_file), "-o", str(partial)])
    partial.replace(out)


def build(source: Path, force: bool) -> None:
    out = target(source)
    newest = max(path.stat().st_mtime for path in (source, *SHARED))
    if not force and out.exists() and out.stat().st_mtime >= newest:
        return
    compile_module(source, out, BUILD)
    print(f"built {out.relative_to(ROOT)}")


def main() -> None:
    """Build every module, as many at once as there are cores (Cython and the compiler
    are processes of their own)."""
    force = "--force" in sys.argv
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        builds = [pool.submit(build, source, force) for source in SOURCES]
    try:
        for done in builds:
            done.result()
    except BuildError as exc:
        sys.exit(f"build-speedups: {exc}")


if __name__ == "__main__":
    main()
