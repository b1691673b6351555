"""The in-process export runs its file tasks ``threads`` at once: results in the files'
order whatever order they end in, never more at once than asked, and after a failure no
task starts anew and that failure is what is raised."""

from __future__ import annotations

import threading
import time

import pytest

from hbase_migrate.snapshot.export import ExportFile, FileExport, SnapshotExportError
from hbase_migrate.snapshot.hbase_method import in_threads

FILES = [ExportFile("s", f"archive/f{i}", (f"data/f{i}",)) for i in range(12)]


class Recorder:
    def __init__(self, fail: str | None = None) -> None:
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.started: list[str] = []
        self.fail = fail

    def __call__(self, f: ExportFile) -> FileExport:
        with self.lock:
            self.started.append(f.target)
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            if f.target == self.fail:
                raise SnapshotExportError(f"{f.target} differs")
            time.sleep(0.02 * (len(FILES) - int(f.target[-1:]) % 4))  # later ones end first
            return FileExport(f.snapshot, f.target, f.sources[0], 1, True,
                              {"method": "sha256"}, 0.0)
        finally:
            with self.lock:
                self.running -= 1


def test_results_in_order_and_at_most_threads_at_once() -> None:
    task = Recorder()
    seen: list[tuple[int, int]] = []
    done = in_threads(4, task, FILES, lambda n, total: seen.append((n, total)))
    assert [d.path for d in done] == [f.target for f in FILES]
    assert task.most == 4
    assert seen == [(n, len(FILES)) for n in range(1, len(FILES) + 1)]


def test_a_failure_stops_the_export() -> None:
    task = Recorder(fail="archive/f1")
    with pytest.raises(SnapshotExportError, match="archive/f1 differs"):
        in_threads(2, task, FILES)
    assert task.running == 0 and len(task.started) < len(FILES)
