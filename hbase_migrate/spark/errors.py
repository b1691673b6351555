"""What a Spark job's failure says, in one line (:func:`task_error`), which masters run
tasks on this machine (:func:`is_local_master`), and a task's failure that no other attempt
of it cures (:class:`TaskRefused`), which Spark does not retry."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from hbase_migrate.errors import HBaseMigrateError, fails_at_once


class TaskRefused(HBaseMigrateError):
    """A Spark task's error that no other attempt of it cures (a file the job needs is not
    on the executor's host, an error of a class that fails a step at once): its message is
    the task's error in one line, ``Class: message``. Raised, an error is retried by Spark
    (``spark.task.maxFailures`` attempts, 4 on a cluster, each failing alike); a task
    returns this one as a :class:`Refusal` instead (:func:`refusing`), and the driver's
    job raises it after the one attempt (:class:`~hbase_migrate.spark.jobs.JobGroup`)."""

    @classmethod
    def of(cls, exc: BaseException) -> TaskRefused:
        """``exc`` as a refusal (itself when it is one)."""
        if isinstance(exc, TaskRefused):
            return exc
        return cls(f"{type(exc).__name__}: {' '.join(str(exc).split())}")


@dataclass(frozen=True)
class Refusal:
    """What a task returns in place of its results when it is refused: the line of its
    :class:`TaskRefused`."""

    error: str


def refusing(func: Callable[[Iterable[Any]], Iterable[Any]], items: Iterable[Any]) -> list[Any]:
    """In a task: ``func``'s results over its partition's ``items``, or ``[Refusal]`` where
    it raised :class:`TaskRefused` or an error that fails a step at once
    (:func:`~hbase_migrate.errors.fails_at_once`); any other error is raised (Spark retries
    it)."""
    try:
        return list(func(items))
    except Exception as exc:
        if not (isinstance(exc, TaskRefused) or fails_at_once(exc)):
            raise
        return [Refusal(str(TaskRefused.of(exc)))]


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs Spark's tasks on this machine (``local``, ``local[N]``...)."""
    return master == "local" or master.startswith("local[")


# YARN's memory check (Spark's YarnAllocator says it so), and a container's SIGKILL exit.
_OVER_MEMORY = re.compile(r"Container killed by YARN for exceeding (?:\w+ )?memory limits\.?"
                          r"\s*(?:([0-9.]+ ?[KMGT]?B of [0-9.]+ ?[KMGT]?B \w+ memory used))?")
_KILLED = re.compile(r"Exit (?:status|code)(?: is)?:? 137\b")
MEMORY_REMEDY = ("give each executor more room: [spark] conf \"spark.executor.memoryOverhead\" "
                 "(by default the larger of 384 MiB and a tenth of spark.executor.memory; the "
                 "Python workers live in it), or a larger \"spark.executor.memory\"")


def memory_kill(text: str) -> str | None:
    """What a container killed for memory says, with the setting to raise; None when the
    failure is something else."""
    over = _OVER_MEMORY.search(text)
    if over:
        used = f" ({over.group(1)})" if over.group(1) else ""
        return f"its YARN container was killed for exceeding its memory{used}: {MEMORY_REMEDY}"
    if _KILLED.search(text):
        return ("its container was killed with SIGKILL (exit status 137), most often for "
                f"memory (YARN's check or the kernel's OOM killer): {MEMORY_REMEDY}")
    return None


# An executor gone with no word on why: its container or its NodeManager's host lost (Spark
# says "caused by one of the running tasks" whenever YARN gave no exit status).
_LOST_EXECUTOR = re.compile(r"ExecutorLostFailure \(executor \S+ exited [^)]*\)\s*"
                            r"(?:Reason: )?(.*)")


def lost_executor(text: str) -> str | None:
    """What an executor lost without a cause YARN reported says; None otherwise."""
    lost = _LOST_EXECUTOR.match(text.strip())
    if lost is None:
        return None
    return (f"its executor was lost ({lost.group(1).strip() or 'no reason given'}: its "
            "container or its NodeManager's host went away) and the task's attempts ran out "
            "(spark.task.maxFailures)")


def task_error(exc: BaseException) -> str:
    """The cause of a failed Spark task: the Python error it raised (its last traceback
    line, without the module path of one of the project's errors), or, where no Python ran
    (``Cannot run program "<path>"``, the Python worker's own error, a container killed
    for memory, an executor lost with its node), the executor's cause and where; else the
    exception itself."""
    text = str(exc)
    lost = re.search(r"Lost task [^\n]*?\(([^()\n]*?) executor ([^()\n]+)\): ([^\n]+)", text)
    if lost and "Traceback" not in text:
        host, executor, cause = lost.groups()
        worker = re.search(r"Error from python worker:\s*\n\s*([^\n]+)", text)
        if worker:  # (the exception's own message is on the lines after it)
            cause = worker.group(1)
        cause = memory_kill(cause) or lost_executor(cause) or cause
        return f"executor {executor} on host {host}: {cause.strip()}"
    lines = [line for line in text.splitlines() if "Error:" in line or "Exception:" in line]
    python = [line for line in lines if "hbase_migrate" in line or "RangeError" in line]
    return re.sub(r"^hbase_migrate(\.\w+)+\.(?=\w+: )", "",
                  (python or lines or [text])[-1].strip())
