"""The in-process engine runs ``[ranges] threads`` range tasks at once: the results keep the
items' order, progress is reported from the calling thread, the first failure is raised as
the task raised it with no task started after it; a copy and a validation over several
ranges on threads give what the source holds, read independently."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, snapshot, validate
from hbase_migrate.ranges.engine import InProcessEngine
from hbase_migrate.ranges.keyrange import RangeError
from minihbase.zookeeper import ZooKeeperServer
from tests.support.minicluster import EmbeddedClusters, clusters_over_rpc, run_workload, t2
from tests.support.ranges import BUDGET, TABLE, configure, failing, planned

ITEMS = list(range(9))


class Recorder:
    """A task that sleeps less the later its item (later ones end first) and notes how many
    run at once, on which threads, and which ended; ``fail`` raises as a range task does."""

    def __init__(self, fail: int | None = None) -> None:
        self.fail = fail
        self.lock = threading.Lock()
        self.running = self.most = 0
        self.started: list[int] = []
        self.ended: list[int] = []
        self.threads: set[int] = set()

    def __call__(self, item: int) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.started.append(item)
            self.threads.add(threading.get_ident())
        try:
            time.sleep(0.01 * (len(ITEMS) - item))
            if item == self.fail:
                raise RangeError(f"copy of range t:{item:02x}-{item + 1:02x} failed: refused")
            with self.lock:
                self.ended.append(item)
            return item * item
        finally:
            with self.lock:
                self.running -= 1


def test_results_in_order_progress_from_the_caller_and_at_most_slots_at_once() -> None:
    task, seen = Recorder(), []
    caller = threading.get_ident()

    def progress(done: int, total: int) -> None:
        seen.append((done, total, threading.get_ident()))

    assert InProcessEngine(3).map(task, ITEMS, what="copy", progress=progress) == [
        i * i for i in ITEMS]
    assert task.most == 3 and caller not in task.threads
    assert seen == [(n, len(ITEMS), caller) for n in range(1, len(ITEMS) + 1)]
    one = Recorder()
    assert InProcessEngine(1).map(one, ITEMS, what="copy") == [i * i for i in ITEMS]
    assert one.threads == {caller} and one.started == ITEMS  # one after the other, here


def test_the_first_failure_is_raised_and_no_task_starts_after_it() -> None:
    task = Recorder(fail=1)
    with pytest.raises(RangeError, match=r"^copy of range t:01-02 failed: refused$"):
        InProcessEngine(2).map(task, ITEMS, what="copy")
    assert task.running == 0  # the tasks running when it failed have ended
    assert 1 not in task.ended and len(task.started) < len(ITEMS)


@pytest.mark.integration  # embedded clusters
def test_a_copy_and_a_validation_on_threads_give_what_the_source_holds(
        tmp_path: Path, zookeeper: ZooKeeperServer) -> None:
    with clusters_over_rpc(tmp_path, zookeeper) as (src, dst):
        run_workload(src, TABLE, seed=45, ops=400)
        config = configure(tmp_path, src, dst, master=IN_PROCESS, plan_copy_cells=BUDGET)
        config.write_text(config.read_text() + "threads = 3\n")  # into [ranges]
        spec = load_config(config)
        assert spec.engine.threads == 3
        prepare(spec)
        copied = snapshot(spec).to_json()
        ranges = planned(config)
        assert copied["engine"] == IN_PROCESS
        assert copied["ranges_copied"] == len(ranges) > 4
        assert [c["start"] for c in copied["copied"]] == [r.start.hex() for r in ranges]
        with t2(src) as source, t2(dst) as target:
            expect = sorted(c for row in source.scan(TABLE, time_range=(0, copied["watermark"]))
                            for c in row)
            assert copied["cells"] == len(expect)
            assert sorted(c for row in target.scan(TABLE) for c in row) == expect
            rows = list(source.scan(TABLE))
        result = validate(spec, recompare_wait=0).to_json()
        assert result["verdict"] == "match", result
        (table,) = result["tables"]
        assert table["ranges"] == table["ranges_matching"] == len(ranges)

        cell = rows[len(rows) // 2][0]  # one value changed on the target, in a middle range
        with t2(dst) as target:
            target.put_cells(TABLE, [cell._replace(value=b"changed!")])
        result = validate(spec, recompare_wait=0).to_json()
        (wrong,) = [r for r in ranges if r.contains(cell.row)]
        assert result["verdict"] != "match" and failing(result) == {wrong.id}, result


@pytest.mark.integration  # embedded clusters
@pytest.mark.parametrize("plan_copy_cells", [None, 1])
def test_an_in_process_copy_reads_a_table_past_auto_cells_once(
        tmp_path: Path, make_embedded: EmbeddedClusters, plan_copy_cells: int | None) -> None:
    """In-process, the pass that plans the table copies all of it on its way: the source
    gateway serves about one cell per cell copied (a few more: other calls of the step read
    some rows), where a planning pass told to copy one
    cell counts the table and the range tasks then read it again."""
    src, dst = make_embedded.pair()
    run_workload(src, TABLE, seed=46, ops=500)
    config = configure(tmp_path, src, dst, master=IN_PROCESS,
                       plan_copy_cells=plan_copy_cells)
    text = config.read_text().replace(f'master = "{IN_PROCESS}"\n',
                                      f'master = "{IN_PROCESS}"\nauto_cells = 1\n')
    config.write_text(text)  # past auto_cells: before, the pass copied one cell
    spec = load_config(config)
    prepare(spec)
    served = src.thrift2_handler.call_sizes
    served.clear()
    copied = snapshot(spec).to_json()
    read = sum(n for call, _, n in served if call == "getScannerRows")
    ranges = planned(config)
    assert len(ranges) > 4 and copied["ranges_copied"] == len(ranges)
    with t2(src) as source, t2(dst) as target:
        expect = sorted(c for row in source.scan(TABLE, time_range=(0, copied["watermark"]))
                        for c in row)
        assert sorted(c for row in target.scan(TABLE) for c in row) == expect
    assert copied["cells"] == len(expect)
    if plan_copy_cells is None:  # one pass: every range copied while planning
        assert copied["copied_while_planning"] == len(ranges)
        assert len(expect) <= read < 1.2 * len(expect), (read, len(expect))
    else:  # a count, then the ranges read again
        assert 1 <= copied["copied_while_planning"] < len(ranges)
        assert read > 1.5 * len(expect), (read, len(expect))
