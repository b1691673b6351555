"""Great Expectations in a process of its own, started when a validation starts.

Importing GX costs about 2 s of one core, and a validation needs GX only once its
checksums are in. Started first, this process spends those seconds on the machine's other
core while the checksums run; the step's own process never imports GX. Each comparison
goes over as a pickle on its stdin, each verdict comes back on its stdout (what GX prints
goes to stderr); :func:`~hbase_migrate.validate.verdict.judge` does the judging, as it
would in-process. This module imports nothing of the project at first, so that a command
can start the process before its own imports.

A validation takes its process with :meth:`GxProcess.reused`: the one an earlier validation
of this process left, GX loaded already, when it is alive, was started with this process's
environment and ended its last exchange whole; else a new one. So a process that validates
again and again (a follow's round validations, the demo) loads GX once; the one left over
is stopped when this process exits (or by itself, at the end of its input, when this
process dies).
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hbase_migrate.ranges.keyrange import KeyRange
    from hbase_migrate.ranges.tasks import RangePair
    from hbase_migrate.validate.verdict import GxVerdict

log = logging.getLogger(__name__)
# what GX imports when it finds it, for engines other than pandas (PySpark's SQL, Connect
# and ML modules; SQLAlchemy): hidden from this process, which judges pandas frames only,
# they no longer cost a sixth of its import
NOT_FOR_GX = ("pyspark", "sqlalchemy")

_spare: GxProcess | None = None  # left by a finished validation for the next (reused)
_spare_lock = threading.Lock()


def _environment() -> dict[str, str]:
    from hbase_migrate.services import python_env  # standard library only

    return python_env()


class GxProcess:
    """The judging process: :meth:`judge` as many times as needed, then :meth:`close`
    (or use it as a context manager). ``reusable``: closing it leaves it running for the
    next :meth:`reused` of this process instead of stopping it."""

    def __init__(self, *, reusable: bool = False) -> None:
        self._env, self._owner, self._reusable = _environment(), os.getpid(), reusable
        self._whole = True  # every request so far answered in full
        self._process = subprocess.Popen([sys.executable, "-m", __name__], env=self._env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._process.stdin is not None and self._process.stdout is not None
        self._requests: IO[bytes] = self._process.stdin
        self._answers: IO[bytes] = self._process.stdout

    @property
    def pid(self) -> int:
        return self._process.pid

    @classmethod
    def reused(cls) -> GxProcess:
        """The process a finished validation of this process left, when it can judge for
        this one; else a new one. Either is left for the next when closed."""
        global _spare
        with _spare_lock:
            spare, _spare = _spare, None
        if spare is not None and spare._owner == os.getpid():  # (a forked child's is not)
            if spare._env == _environment() and spare._process.poll() is None:
                return spare
            spare._stop()
        return cls(reusable=True)

    def judge(self, pairs: Sequence[RangePair], planned: Sequence[KeyRange],
              artifacts: Path, label: str) -> GxVerdict:
        """What :func:`~hbase_migrate.validate.verdict.judge` says of ``pairs``."""
        self._whole = False
        try:
            pickle.dump((list(pairs), list(planned), artifacts, label), self._requests)
            self._requests.flush()
            answer: tuple[str, Any, str] = pickle.load(self._answers)
            self._whole = True
        except (EOFError, OSError):
            raise RuntimeError(
                f"the Great Expectations process (pid {self._process.pid}) ended with exit "
                f"code {self._process.wait()} before judging {label}; its stderr says "
                "why") from None
        kind, value, details = answer
        if kind == "error":
            log.error("Great Expectations failed judging %s:\n%s", label, details)
            raise RuntimeError(f"Great Expectations failed judging {label}: {value}")
        verdict: GxVerdict = value
        return verdict

    def close(self) -> None:
        """Stop the process (it holds nothing once its last verdict came back), or, when
        ``reusable`` and whole, leave it for the next :meth:`reused`."""
        global _spare
        if (self._reusable and self._whole and self._owner == os.getpid()
                and self._process.poll() is None):
            with _spare_lock:
                other, _spare = _spare, self
            if other is not None and other is not self:
                other._stop()
            return
        self._stop()

    def _stop(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        with contextlib.suppress(OSError):  # a request it never read
            self._requests.close()
        self._answers.close()

    def __enter__(self) -> GxProcess:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


@atexit.register
def _stop_spare() -> None:
    spare = _spare
    if spare is not None and spare._owner == os.getpid():
        spare._stop()


def serve() -> None:
    """The process: import GX, then answer each request until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the step's process decides; it kills us
    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing GX prints can corrupt an answer
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from hbase_migrate.heavy_imports import import_heavy
    from hbase_migrate.validate.verdict import judge

    for name in NOT_FOR_GX:  # (a module imported already stays)
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    import_heavy("great_expectations")
    import_heavy("pandas")
    _cached_templates()
    while True:
        try:
            pairs, planned, artifacts, label = pickle.load(requests)
        except EOFError:
            return
        try:
            answer: tuple[str, Any, str] = ("verdict", judge(pairs, planned, artifacts, label),
                                            "")
        except Exception as exc:
            answer = ("error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
        pickle.dump(answer, answers)
        answers.flush()


def _cached_templates() -> None:
    """Give GX's Data Docs views a Jinja bytecode cache on disk: each view makes its own
    Jinja environment, so every run compiled the same templates again, a third of a
    second of each verdict. The cache is per GX release (its views' Jinja settings)."""
    import importlib

    import jinja2
    from great_expectations import __version__

    from hbase_migrate.jvm.maven import cache_root

    views: Any = importlib.import_module("great_expectations.render.view.view")

    folder = cache_root(f"jinja/great_expectations-{__version__}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        log.info("no Jinja template cache at %s: %s", folder, exc)
        return
    if not os.access(folder, os.W_OK | os.X_OK):  # the templates are compiled each time
        log.info("no Jinja template cache: %s is not writable", folder)
        return
    cache = jinja2.FileSystemBytecodeCache(str(folder))
    views.Environment = functools.partial(jinja2.Environment, bytecode_cache=cache)


if __name__ == "__main__":
    serve()
