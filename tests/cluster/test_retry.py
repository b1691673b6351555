"""The one classification of failed calls and the one retry loop, and the scan resumed above
its transport: a scripted scanner that fails where told, the cells it hands out compared
with the cells it holds."""

from __future__ import annotations

import time

import pytest

from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.retry import Kind, Retry, classify, classify_thrift
from hbase_migrate.cluster.scanning import cell_key, resumed, resumed_batches
from hbase_migrate.wal.model import Cell, CellType

H = "org.apache.hadoop.hbase."


@pytest.mark.parametrize(("message", "can_retry", "kind"), [
    # a batch's wrapped cause that a retry may cure, and one that never succeeds
    (f"{H}client.RetriesExhaustedWithDetailsException: Failed 1 action: "
     f"{H}NotServingRegionException: 1 time", True, Kind.RETRY),
    (f"{H}client.RetriesExhaustedWithDetailsException: Failed 1 action: "
     f"{H}regionserver.NoSuchColumnFamilyException: column family x", True, Kind.NEVER),
    (f"{H}TableNotEnabledException: t is disabled.", True, Kind.NEVER),
    # HBase's canRetry says no: a DoNotRetryIOException, whatever the message
    ("java.io.IOException: region too busy", False, Kind.NEVER),
    ("region too busy", True, Kind.RETRY),
    # the gateway's client lost the scanner (a simple class name, no package)
    ("Failed after retry of OutOfOrderScannerNextException: was there a rpc timeout?",
     False, Kind.SCANNER),
])
def test_a_thrift_error_is_classified_by_the_classes_it_names(
        message: str, can_retry: bool, kind: Kind) -> None:
    assert classify_thrift(message, can_retry) is kind


def test_the_same_class_is_one_kind_over_either_transport() -> None:
    for name in ("NotServingRegionException", "TableNotFoundException",
                 "UnknownScannerException"):
        assert classify_thrift(f"{H}{name}: x", True) in (classify(H + name), Kind.RETRY)
    assert classify(H + "TableNotFoundException") is classify_thrift(
        f"{H}TableNotFoundException: t", True) is Kind.NEVER


def test_a_stopping_masters_refusal_sends_the_call_to_its_successor() -> None:
    """MasterStoppedException (HBase flags it do-not-retry) comes from a master going away:
    the admin asks ZooKeeper for the next one and calls again, as for a master not
    running, and a procedure's wait outlives the failover."""
    from hbase_migrate.rpc.admin import NativeAdmin
    from hbase_migrate.rpc.errors import RemoteError

    stopped = RemoteError(H + "exceptions.MasterStoppedException", do_not_retry=True)
    assert stopped.retryable and stopped.kind is Kind.RELOCATE

    class Answer:
        response = b"done"

    class Master:
        def __init__(self, name: str, fails: bool) -> None:
            self.name, self.fails = name, fails

        def call(self, method: str, request: bytes) -> Answer:
            if self.fails:
                raise stopped
            return Answer()

        def close(self) -> None:
            pass

    class Failover(NativeAdmin):
        """The admin's calls over scripted masters: the stopping one, then its successor
        (what ZooKeeper names once the admin forgets the first)."""

        def __init__(self) -> None:  # no ZooKeeper: the masters are scripted
            self.master_wait, self.master_server = 5.0, None
            self.masters = iter([Master("old", True), Master("new", False)])
            self.current: Master | None = None
            self.asked: list[str] = []

        def _master_connection(self) -> Master:  # type: ignore[override]
            if self.current is None:
                self.current = next(self.masters)
            self.asked.append(self.current.name)
            return self.current

        def _forget_master(self) -> None:
            self.current = None

    admin = Failover()
    assert admin.master_call("getProcedureResult", b"", "table t") == b"done"
    assert admin.asked == ["old", "new"]


class GaveUp(ClusterError):
    pass


def loop(attempts: int, deadline: float | None = None) -> Retry:
    return Retry("call", lambda exc, kind, tried: GaveUp(f"{kind.name}{tried}: {exc}"),
                 attempts=attempts, backoff=0.001, max_backoff=0.002, deadline=deadline)


def test_the_loop_retries_until_its_attempts_or_time_are_spent() -> None:
    retry = loop(3)
    retry.failed(ValueError("a"), Kind.RETRY)
    retry.failed(ValueError("b"), Kind.OUTAGE)
    with pytest.raises(GaveUp, match=r"^RELOCATE after 3 attempts over .*s: c$"):
        retry.failed(ValueError("c"), Kind.RELOCATE)
    with pytest.raises(GaveUp, match=r"^NEVER: d$"):
        loop(10).failed(ValueError("d"), Kind.NEVER)
    retry = loop(1000, deadline=0.05)
    began = time.monotonic()
    with pytest.raises(GaveUp):
        while True:
            retry.failed(ValueError("e"), Kind.RETRY)
    assert time.monotonic() - began < 5 and 2 < retry.attempt < 1000


class Lost(ClusterError):
    def __init__(self, kind: Kind) -> None:
        super().__init__(kind.name)
        self.kind = kind


class Scripted:
    """A scanner over ``cells`` handing out ``per_call`` cells a call (a row split across
    calls comes as pieces), failing with the kinds of ``failures`` at those calls."""

    def __init__(self, cells: list[Cell], per_call: int, failures: dict[int, Kind],
                 piece_cells: int = 0, sizes: dict[int, int] | None = None) -> None:
        self.cells, self.per_call, self.failures = cells, per_call, failures
        self.piece_cells = piece_cells  # >0: a row's cells of one call in pieces this long
        self.sizes = sizes or {}  # call number -> cells it hands out, instead of per_call
        self.calls, self.closed = 0, 0
        self.opens: list[tuple[bytes, Cell | None]] = []
        self.pos: int | None = None

    def open(self, start: bytes, after: Cell | None) -> None:
        self.opens.append((start, after))
        self.pos = next((i for i, c in enumerate(self.cells) if c.row >= start),
                        len(self.cells))

    def next(self) -> list[list[Cell]] | None:
        assert self.pos is not None, "next on a closed scanner"
        self.calls += 1
        if self.calls in self.failures:
            raise Lost(self.failures[self.calls])
        got = self.cells[self.pos:self.pos + self.sizes.get(self.calls, self.per_call)]
        if not got:
            return None
        self.pos += len(got)
        pieces: list[list[Cell]] = []
        for cell in got:
            if pieces and pieces[-1][0].row == cell.row and (
                    not self.piece_cells or len(pieces[-1]) < self.piece_cells):
                pieces[-1].append(cell)
            else:
                pieces.append([cell])
        return pieces

    def close(self) -> None:
        self.pos = None
        self.closed += 1


CELLS = sorted((Cell(b"r%d" % r, b"f", b"q%d" % q, 10 - v, CellType.PUT, b"v")
                for r in range(4) for q in range(3) for v in range(2)), key=cell_key)


def test_a_scan_resumes_after_the_last_cell_handed_out_inside_a_row() -> None:
    scanner = Scripted(CELLS, per_call=4, failures={2: Kind.SCANNER, 4: Kind.OUTAGE,
                                                     5: Kind.RELOCATE})
    # the reopened scanner reads row r0 again from its start: no progress until past it
    got = [c for piece in resumed(scanner, b"", loop(4)) for c in piece]
    assert got == CELLS
    assert scanner.opens[0] == (b"", None)
    assert scanner.opens[1] == (b"r0", CELLS[3])  # in the middle of row r0
    assert len(scanner.opens) == 4 and scanner.closed == 4


def test_a_wide_row_in_several_pieces_of_one_reply_resumes_without_repeats() -> None:
    # call 1 hands out r0's first 3 cells ([0, 1], [2]) and call 2 fails; the reopened
    # scanner's reply holds r0's 6 cells as [0, 1], [2, 3], [4, 5]: the first piece is all
    # seen, the second half seen
    scanner = Scripted(CELLS, per_call=3, failures={2: Kind.SCANNER}, piece_cells=2,
                       sizes={3: 6})
    batches = list(resumed_batches(scanner, b"", loop(3)))
    assert [c for batch in batches for piece in batch for c in piece] == CELLS
    assert all(batch and all(batch) for batch in batches)
    assert batches[1][0] == [CELLS[3]] and scanner.opens[1] == (b"r0", CELLS[2])


def test_a_scan_without_progress_gives_up_and_one_never_fails_at_once() -> None:
    scanner = Scripted(CELLS, per_call=4, failures={2: Kind.SCANNER, 3: Kind.SCANNER})
    with pytest.raises(GaveUp, match="SCANNER after 2 attempts"):
        list(resumed(scanner, b"", loop(2)))
    scanner = Scripted(CELLS, per_call=4, failures={2: Kind.NEVER})
    with pytest.raises(GaveUp, match=r"^NEVER: NEVER$"):
        list(resumed(scanner, b"", loop(5)))
    assert len(scanner.opens) == 1 and scanner.closed == 1


def test_a_consumer_that_stops_early_closes_the_scanner() -> None:
    scanner = Scripted(CELLS, per_call=4, failures={})
    pieces = resumed(scanner, b"", loop(3))
    next(pieces)
    pieces.close()
    assert scanner.closed == 1 and scanner.pos is None
