"""``replay --follow`` as a user runs it: the command in a child process started from the
repository's root, each of its streams read line by line in the background."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[2]


class Lines:
    """A child's stream read line by line in the background."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def count(self, pattern: str) -> int:
        """How many lines read so far match ``pattern`` (``re.search``)."""
        return sum(bool(re.search(pattern, line)) for line in self.lines)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def follow(config: Path, *more: str) -> tuple[subprocess.Popen[str], Lines, Lines]:
    """``hbase-migrate replay --config CONFIG --follow --interval 0.5s MORE...`` started,
    unbuffered, with its stdout and stderr being read."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "hbase_migrate", "replay", "--config", str(config), "--follow",
         "--interval", "0.5s", *more], cwd=REPO, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None and proc.stderr is not None
    return proc, Lines(proc.stdout), Lines(proc.stderr)
