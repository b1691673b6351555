"""A JVM's share of a timed run: the CPU seconds it used (``/proc/PID/stat``), its
collections' pauses (its ``-Xlog:gc`` file, as ``realstack`` starts every cluster) and what
its log says of its region server's writes (updates blocked on a full memstore, memstore
flushes, slow WAL appends) between two readings. A realstack cluster is one JVM (master,
region server, HDFS), so its share tells a run that waited on the cluster from one that
waited on itself."""

from __future__ import annotations

import os
import re
from dataclasses import astuple, dataclass
from pathlib import Path

PAUSE = re.compile(r"Pause (Young|Full|Remark|Cleanup)\b.*?([\d.]+)ms$")
WRITES = {"blocked": "Blocking updates", "flushes": "Finished flush of",  # HRegion's lines
          "slow_appends": "appending an edit to wal"}  # MetricsWAL's
TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Mark:
    cpu_s: float
    gc_bytes: int  # how much of the GC log had been written
    log_bytes: int  # and of the cluster's log


@dataclass(frozen=True)
class Share:
    cpu_s: float
    gc_pause_s: float
    full_gcs: int
    blocked: int = 0  # "Blocking updates" lines: writes waited for a memstore flush
    flushes: int = 0
    slow_appends: int = 0

    def __add__(self, other: Share) -> Share:
        return Share(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


class JvmMeter:
    """Readings of the JVM ``pid`` whose GC log is ``gc_log``."""

    def __init__(self, pid: int, gc_log: Path, log: Path) -> None:
        self.pid, self.gc_log, self.log = pid, gc_log, log

    def cpu_s(self) -> float:
        """User and system CPU seconds of every thread so far (0 once it is gone)."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
        except OSError:
            return 0.0
        fields = stat.rsplit(")", 1)[1].split()  # after the command, which may hold spaces
        return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)

    def mark(self) -> Mark:
        return Mark(self.cpu_s(), _size(self.gc_log), _size(self.log))

    def since(self, mark: Mark) -> Share:
        pauses, full = 0.0, 0
        for line in _lines(self.gc_log, mark.gc_bytes):
            found = PAUSE.search(line)
            if found:
                pauses += float(found.group(2)) / 1000
                full += found.group(1) == "Full"
        writes = dict.fromkeys(WRITES, 0)
        for line in _lines(self.log, mark.log_bytes):
            for what, text in WRITES.items():
                writes[what] += text in line
        return Share(self.cpu_s() - mark.cpu_s, pauses, full, **writes)


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _lines(path: Path, offset: int) -> list[str]:
    """The lines of ``path`` written after ``offset``."""
    if not path.exists():
        return []
    with path.open("rb") as file:
        file.seek(offset)
        return file.read().decode(errors="replace").splitlines()
