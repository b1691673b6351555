"""Run test modules again and again on a loaded machine: CPU-bound processes (and, with
``--disk``, a writer of direct I/O) run beside pytest the whole time, as on a busy CI runner or
edge node. Stops at the first failing round and says which; exits as pytest did.

    python scripts/loaded.py --rounds 10 --hogs 4 tests/replay/test_coverage.py ...
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOG = "while True: pass"


def _disk_writer(folder: str) -> subprocess.Popen[bytes]:
    """A loop of 512 MiB writes that bypass the page cache (``dd oflag=direct``)."""
    target = Path(folder) / "load"
    script = (f"while :; do dd if=/dev/zero of={target} bs=1M count=512 oflag=direct "
              f"2>/dev/null; rm -f {target}; done")
    return subprocess.Popen(["bash", "-c", script])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--hogs", type=int, default=4, help="CPU-bound processes beside")
    parser.add_argument("--disk", action="store_true", help="and a direct-I/O writer")
    parser.add_argument("pytest_args", nargs="+")
    args = parser.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(args.hogs)]
    with tempfile.TemporaryDirectory(prefix="loaded-") as folder:
        disk = _disk_writer(folder) if args.disk else None
        code = 0
        try:
            for round_no in range(1, args.rounds + 1):
                began = time.monotonic()
                code = subprocess.call([sys.executable, "-m", "pytest", "-p",
                                        "no:cacheprovider", *args.pytest_args])
                print(f"round {round_no}/{args.rounds}: "
                      f"{'passed' if code == 0 else f'FAILED (exit {code})'} in "
                      f"{time.monotonic() - began:.0f} s beside {args.hogs} CPU hogs"
                      f"{' and a disk writer' if disk else ''}", flush=True)
                if code != 0:
                    break
        finally:
            for p in [*hogs, *([disk] if disk else [])]:
                p.kill()
                p.wait()
    return code


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
