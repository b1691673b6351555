"""What the dump commands do when the reader of their output goes away."""

from __future__ import annotations

import os
import sys
from typing import NoReturn


def stdout_closed() -> NoReturn:
    """The reader of our output went away (``wal dump | head``, ``hfile dump | head``): stop
    quietly, with exit code 1."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
    except (OSError, ValueError):
        pass
    sys.exit(1)
