"""What a Spark job's failure says, in one line (:func:`task_error`), and which masters run
tasks on this machine (:func:`is_local_master`)."""

from __future__ import annotations

import re


def is_local_master(master: str) -> bool:
    """Whether ``master`` runs Spark's tasks on this machine (``local``, ``local[N]``...)."""
    return master == "local" or master.startswith("local[")


def task_error(exc: BaseException) -> str:
    """The cause of a failed Spark task: the Python error it raised (its last traceback
    line, without the module path of one of the project's errors), or, where no Python ran
    (``Cannot run program "<path>"``, or the Python worker's own error), the executor's
    cause and where; else the exception itself."""
    text = str(exc)
    lost = re.search(r"Lost task [^\n]*?\(([^()\n]*?) executor ([^()\n]+)\): ([^\n]+)", text)
    if lost and "Traceback" not in text:
        host, executor, cause = lost.groups()
        worker = re.search(r"Error from python worker:\s*\n\s*([^\n]+)", text)
        if worker:  # (the exception's own message is on the lines after it)
            cause = worker.group(1)
        return f"executor {executor} on host {host}: {cause.strip()}"
    lines = [line for line in text.splitlines() if "Error:" in line or "Exception:" in line]
    python = [line for line in lines if "hbase_migrate" in line or "RangeError" in line]
    return re.sub(r"^hbase_migrate(\.\w+)+\.(?=\w+: )", "",
                  (python or lines or [text])[-1].strip())
