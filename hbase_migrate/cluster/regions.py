"""A table's region list read so that a region in transition is waited for, on every transport.

Splits, merges and moves happen on a busy cluster at any moment. While one is under way a
listing can fail or be inconsistent: HBase 2.6's gateways build each location from the
region's server, and a daughter (or merged) region not yet opened has none, so
``getAllRegionLocations`` (Thrift2) and ``getTableRegions`` (Thrift1) fail with a
``NullPointerException`` the client sees as ``Internal error processing <call>``; a listing
may also hold a region with no server, or regions that do not tile the key space from ``''``
to ``''`` (a hole or an overlap). :func:`settled_regions` reads such a listing again with
capped backoff, within a bound (``[gateway] region_wait``, 60 s by default), says once on
the log (stderr under the CLI) what it saw, and past the bound raises
:class:`RegionsInTransitionError`: one line naming the table, the cluster and what was seen.
Callers thus get only consistent listings: split points, planned ranges and region copies
come from regions that tile the table.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterator, Sequence

from thriftpy2.thrift import TApplicationException

from hbase_migrate.bytesutil import short_binary
from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.sizing import DEFAULT_REGION_WAIT
from hbase_migrate.timeutil import human_duration

log = logging.getLogger(__name__)

_FIRST_DELAY, _MAX_DELAY = 0.1, 5.0  # backoff between reads, seconds


class RegionsInTransitionError(ClusterError):
    """A table's region list stayed in transition (failing, or not tiling the key space)
    for longer than the wait allowed."""


def _key(key: bytes, end: bool = False) -> str:
    return repr(short_binary(key)) if key else ("''(last)" if end else "''(first)")


def _region(r: RegionDescriptor) -> str:
    return f"[{_key(r.start_key)}, {_key(r.end_key, end=True)})"


def _problems(regions: Sequence[RegionDescriptor]) -> Iterator[str]:
    for r in regions:
        if not r.server_host or not r.server_port:
            yield f"region {_region(r)} has no server"
    if regions[0].start_key:
        yield f"no region starts at the first key (the first at {_key(regions[0].start_key)})"
    for left, right in itertools.pairwise(regions):
        if not left.end_key or left.end_key > right.start_key:
            yield f"regions {_region(left)} and {_region(right)} overlap"
        elif left.end_key < right.start_key:
            yield f"a hole between regions {_region(left)} and {_region(right)}"
    if regions[-1].end_key:
        yield f"no region reaches the last key (the last ends at {_key(regions[-1].end_key)})"


def not_tiling(regions: Sequence[RegionDescriptor]) -> str | None:
    """What makes a listing (sorted by start key) other than a table's settled regions: a
    region with no server, a hole or an overlap between neighbours, no region at the first
    or the last key. None when it is consistent (an empty listing is: an unknown table)."""
    return next(_problems(regions), None) if regions else None


def transition_failure(exc: BaseException) -> str | None:
    """What a failed listing call says when it is how a region in transition makes it fail
    (the gateway's internal error: a location built from a region with no server); None
    for any other failure."""
    cause = exc.__cause__ if isinstance(exc, ClusterError) else exc
    if isinstance(cause, TApplicationException) and \
            cause.type == TApplicationException.INTERNAL_ERROR:
        message = cause.message or str(cause)  # bytes through happybase
        text = (message.decode("utf-8", "replace") if isinstance(message, bytes)
                else str(message)).strip().splitlines()
        return f"the gateway failed the listing ({text[0] if text else 'internal error'})"
    return None


def settled_regions(read: Callable[[], list[RegionDescriptor]], table: str, cluster: str,
                    wait: float = DEFAULT_REGION_WAIT, *,
                    sleep: Callable[[float], None] = time.sleep) -> list[RegionDescriptor]:
    """``read()`` (a table's regions sorted by start key) until it answers a consistent
    listing, at most about ``wait`` seconds after the first read; see the module. Errors
    other than a transition's are raised as they are."""
    began, delay, reads, said = time.monotonic(), _FIRST_DELAY, 0, False
    while True:
        reads += 1
        try:
            regions = read()
            seen = not_tiling(regions)
        except ClusterError as exc:
            seen = transition_failure(exc)
            if seen is None:
                raise
        waited = time.monotonic() - began
        if seen is None:
            if said:
                log.warning("table %s on cluster %s: its regions settled after %s (%d reads)",
                            table, cluster, human_duration(waited * 1000), reads)
            return regions
        if waited >= wait:
            raise RegionsInTransitionError(
                f"table {table} on cluster {cluster}: region locations still in transition "
                f"after {human_duration(waited * 1000)} ({reads} reads): {seen}; check the "
                f"cluster's regions in transition (hbase shell: rit) and rerun, or raise "
                f"[gateway] region_wait (now {wait:g} s)")
        if not said:
            log.warning("table %s on cluster %s: a region in transition (%s); reading its "
                        "region locations again for up to %g s", table, cluster, seen, wait)
            said = True
        sleep(min(delay, max(wait - waited, 0.0)))
        delay = min(delay * 2, _MAX_DELAY)
