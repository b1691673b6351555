"""Compile the reader's hot loops (hbase_migrate/wal/_hotloops.pyx) into an extension
module beside it: Cython to C, then the C compiler Python was built with. Run by `make
setup`; without it the reader runs the pure-Python loops, which give the same results.

Usage: python scripts/build-speedups.py [--force]
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "hbase_migrate" / "wal" / "_hotloops.pyx"
BUILD = ROOT / "build" / "speedups"


def target() -> Path:
    return SOURCE.with_name(SOURCE.stem + sysconfig.get_config_var("EXT_SUFFIX"))


def run(command: list[str]) -> None:
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"build-speedups: {shlex.join(command)} failed:\n{done.stdout}{done.stderr}")


def main() -> None:
    out = target()
    if "--force" not in sys.argv and out.exists() and out.stat().st_mtime >= SOURCE.stat().st_mtime:
        return
    BUILD.mkdir(parents=True, exist_ok=True)
    c_file = BUILD / (SOURCE.stem + ".c")
    run([sys.executable, "-m", "cython", "-3", "--fast-fail", str(SOURCE), "-o", str(c_file)])
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    flags = shlex.split(sysconfig.get_config_var("CFLAGSFORSHARED") or "-fPIC")
    include = sysconfig.get_paths()["include"]
    partial = out.with_suffix(".partial")
    run([*compiler, "-shared", "-O2", *flags, f"-I{include}", str(c_file), "-o", str(partial)])
    partial.replace(out)
    print(f"built {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
