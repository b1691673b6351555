"""A table's region list read through a region in transition (issue 38, item 1): a listing
that fails as HBase 2.6's gateways fail it while a daughter region has no server, or that
does not tile the key space, is read again with capped backoff within a bound, said once
on the log; past the bound one line names the table, the cluster and what was seen. Both
clients, on the embedded cluster's gateways staging HBase's exact answer."""

from __future__ import annotations

import logging

import pytest
from thriftpy2.thrift import TApplicationException

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.regions import (
    RegionsInTransitionError,
    not_tiling,
    settled_regions,
)
from hbase_migrate.thrift.thrift1 import Thrift1Client, Thrift1Error
from hbase_migrate.thrift.thrift2 import Thrift2Client, Thrift2Error
from minihbase.workload import SPLITS
from tests.support.minicluster import EmbeddedClusters, run_workload

TABLE = "orders"


def region(start: bytes, end: bytes, host: str = "rs1", port: int = 16020) -> RegionDescriptor:
    return RegionDescriptor(TABLE, start, end, 1, host, port, 7)


TILED = [region(b"", b"g"), region(b"g", b"p"), region(b"p", b"")]


@pytest.mark.parametrize(("listing", "seen"), [
    (TILED, None),
    ([region(b"", b"")], None),
    ([], None),  # an unknown table (Thrift1 answers none)
    ([region(b"", b"g"), region(b"g", b"p", host=""), region(b"p", b"")],
     "region ['g', 'p') has no server"),
    ([region(b"", b"g"), region(b"h", b"")], "a hole between regions [''(first), 'g') and "
                                               "['h', ''(last))"),
    ([region(b"", b"p"), region(b"g", b"")], "regions [''(first), 'p') and ['g', ''(last)) "
                                               "overlap"),
    ([region(b"", b""), region(b"g", b"")], "regions [''(first), ''(last)) and "
                                              "['g', ''(last)) overlap"),
    ([region(b"g", b"")], "no region starts at the first key (the first at 'g')"),
    ([region(b"", b"g")], "no region reaches the last key (the last ends at 'g')"),
])
def test_a_listing_is_consistent_only_when_its_regions_tile_the_key_space(
        listing: list[RegionDescriptor], seen: str | None) -> None:
    assert not_tiling(listing) == seen


def internal_error(call: str) -> Thrift2Error:
    """What the client raises for HBase's answer (a TApplicationException INTERNAL_ERROR)."""
    cause = TApplicationException(TApplicationException.INTERNAL_ERROR,
                                  f"Internal error processing {call}")
    try:
        raise Thrift2Error(f"host:9090: {call} {TABLE}: {cause}") from cause
    except Thrift2Error as exc:
        return exc


def test_a_listing_in_transition_is_read_again_with_capped_backoff_and_said_once(
        caplog: pytest.LogCaptureFixture) -> None:
    answers: list[Thrift2Error | list[RegionDescriptor]] = [
        *[internal_error("getAllRegionLocations")] * 5,
        [region(b"", b"g"), region(b"h", b"")],  # a hole (a merge not yet in meta)
        TILED]
    slept: list[float] = []

    def read() -> list[RegionDescriptor]:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    with caplog.at_level(logging.WARNING, "hbase_migrate.cluster.regions"):
        assert settled_regions(read, TABLE, "source", 60, sleep=slept.append) == TILED
    assert not answers
    assert slept == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2]  # doubling, capped at 5 s below
    said = [r.getMessage() for r in caplog.records]
    assert said[0] == ("table orders on cluster source: a region in transition (the gateway "
                       "failed the listing (Internal error processing "
                       "getAllRegionLocations)); reading its region locations again for up "
                       "to 60 s"), said
    assert len(said) == 2 and said[1].startswith(
        "table orders on cluster source: its regions settled after ") and \
        said[1].endswith("(7 reads)"), said


def test_past_the_bound_one_line_names_table_cluster_and_what_was_seen() -> None:
    def read() -> list[RegionDescriptor]:
        return [region(b"", b"g"), region(b"g", b"", host="")]

    with pytest.raises(RegionsInTransitionError) as failed:
        settled_regions(read, TABLE, "source", 0.3)
    message = str(failed.value)
    assert "\n" not in message
    assert message.startswith("table orders on cluster source: region locations still in "
                              "transition after "), message
    assert message.endswith(": region ['g', ''(last)) has no server; check the cluster's "
                            "regions in transition (hbase shell: rit) and rerun, or raise "
                            "[gateway] region_wait (now 0.3 s)"), message


def test_other_failures_are_not_waited_for() -> None:
    reads = 0

    def read() -> list[RegionDescriptor]:
        nonlocal reads
        reads += 1
        raise Thrift2Error("host:9090: getAllRegionLocations orders: TableNotFoundException")

    with pytest.raises(Thrift2Error, match="TableNotFoundException"):
        settled_regions(read, TABLE, "source", 60)
    assert reads == 1


@pytest.mark.integration
def test_both_clients_wait_out_hbases_internal_error_of_a_daughter_without_server(
        make_embedded: EmbeddedClusters, caplog: pytest.LogCaptureFixture) -> None:
    src = make_embedded("source")
    run_workload(src, TABLE, seed=3, ops=30)
    assert src.thrift2_handler is not None and src.thrift1_handler is not None
    assert src.endpoints.thrift2 is not None
    expected = [b"", *SPLITS]
    with Thrift2Client(src.endpoints.thrift2, cluster="source") as t2, \
            Thrift1Client(src.endpoints.thrift, cluster="source") as t1:
        # the one-call listings fail with HBase's exact text while the fault is staged
        src.thrift2_handler.listings_in_transition = 1
        with pytest.raises(Thrift2Error, match=r": getAllRegionLocations orders: "
                           r"Internal error processing getAllRegionLocations$"):
            t2.listed_regions(TABLE)
        src.thrift1_handler.listings_in_transition = 1
        with pytest.raises(Thrift1Error, match=r": getTableRegions orders: "
                           r"Internal error processing getTableRegions$"):
            t1.listed_regions(TABLE)

        holed = [r for r in t2.listed_regions(TABLE) if r.start_key != SPLITS[0]]
        src.thrift2_handler.listings_in_transition = 3
        src.thrift2_handler.staged_listings.append(holed)  # then a hole, then the regions
        src.thrift1_handler.listings_in_transition = 3
        with caplog.at_level(logging.WARNING, "hbase_migrate.cluster.regions"):
            assert [r.start_key for r in t2.regions(TABLE)] == expected
            assert [r.start_key for r in t1.regions(TABLE)] == expected
        assert src.thrift2_handler.listings_in_transition == 0
        assert not src.thrift2_handler.staged_listings
        assert src.thrift1_handler.listings_in_transition == 0
        waits = [r.getMessage() for r in caplog.records if "reading its" in r.getMessage()]
        assert waits == [
            "table orders on cluster source: a region in transition (the gateway failed "
            f"the listing (Internal error processing {call})); reading its region "
            "locations again for up to 60 s"
            for call in ("getAllRegionLocations", "getTableRegions")], waits
