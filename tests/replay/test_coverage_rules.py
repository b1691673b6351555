"""The WAL chain rules of :mod:`hbase_migrate.replay.coverage` on hand-built chains: which
stretches a set of known files leaves unproven, worked out by hand for each case."""

from __future__ import annotations

from hbase_migrate.audit.records import AnchorRecord
from hbase_migrate.cluster.storage.walstore import WalFileStatus
from hbase_migrate.replay.coverage import (
    WRITE_TIME_SKEW_MS,
    MissingSpan,
    anchors_of,
    find_missing,
    queued_missing,
    roll_slack,
)
from hbase_migrate.wal.names import ServerName, wal_file_name

T0 = 1_700_000_000_000
ROLL = 60_000
OLD = ServerName("rs1.example.com", 16020, T0 - 86_400_000)  # started a day before T0
NEW = ServerName("rs2.example.com", 16020, T0 + 30_000)  # started after T0


def f(server: ServerName, created: int, *, group: str | None = None,
      replayed_to: int | None = None) -> tuple[str, int, int | None]:
    return (f"/hbase/oldWALs/{wal_file_name(server, created, group=group)}", created,
            replayed_to)


def anchor(server: ServerName, created: int, group: str = "") -> AnchorRecord:
    name = wal_file_name(server, created, group=group or None)
    return AnchorRecord(1, 1, str(server), group, f"/hbase/WALs/{server}/{name}", created,
                        T0, T0)


def missing(files: list[tuple[str, int, int | None]], anchors: list[AnchorRecord], *,
            now: int = T0 + 10 * ROLL) -> list[MissingSpan]:
    return find_missing(files, anchors, since=T0, until=None, roll_period=ROLL, now=now)


def test_a_chain_from_its_anchor_rolling_every_period_is_covered() -> None:
    chain = [f(OLD, T0 - 20_000 + i * ROLL) for i in range(8)]
    assert missing(chain, [anchor(OLD, T0 - 20_000)]) == []


def test_an_anchor_never_listed_is_missing_from_the_watermark_to_the_next_known_file() -> None:
    chain = [f(OLD, T0 - 20_000 + i * ROLL) for i in range(3, 8)]
    span, = missing(chain, [anchor(OLD, T0 - 20_000)])
    assert (span.server, span.first_time) == (str(OLD), T0)
    assert span.last_time == T0 - 20_000 + 3 * ROLL + WRITE_TIME_SKEW_MS
    assert "was never listed" in span.detail


def test_an_anchored_server_with_no_file_known_misses_everything_since_the_watermark() -> None:
    now = T0 + 5 * ROLL
    span, = missing([], [anchor(OLD, T0 - 1)], now=now)
    assert (span.first_time, span.last_time) == (T0, now)


def test_a_jump_of_two_periods_is_missing_and_one_period_plus_slack_is_not() -> None:
    a, b = T0 - 10_000, T0 - 10_000 + ROLL + roll_slack(ROLL)  # late roll: fine
    c = b + 2 * ROLL  # one file in between was never seen
    spans = missing([f(OLD, a), f(OLD, b, replayed_to=b + 50_000), f(OLD, c)],
                    [anchor(OLD, a)])
    span, = spans
    assert span.first_time == b + 50_000 - WRITE_TIME_SKEW_MS  # after what was replayed
    assert span.last_time == c + WRITE_TIME_SKEW_MS
    assert "between" in span.detail


def test_jumps_before_the_watermark_do_not_count() -> None:
    chain = [f(OLD, T0 - 10 * ROLL), f(OLD, T0 - 2 * ROLL), f(OLD, T0 - ROLL + 1)]
    assert missing(chain, [anchor(OLD, T0 - ROLL + 1)]) == []


def test_without_anchors_an_old_server_needs_a_file_created_by_the_watermark() -> None:
    late = [f(OLD, T0 + 5_000 + i * ROLL) for i in range(3)]
    span, = missing(late, [])
    assert (span.first_time, span.last_time) == (T0, T0 + 5_000 + WRITE_TIME_SKEW_MS)
    assert missing([f(OLD, T0 - 5_000), *late], []) == []


def test_a_server_started_after_the_watermark_starts_its_own_chain() -> None:
    assert missing([f(NEW, T0 + 40_000 + i * ROLL) for i in range(3)], []) == []
    assert missing([f(NEW, T0 + 40_000 + i * ROLL) for i in range(3)],
                   [anchor(OLD, T0 - 1)], now=T0 + 2 * ROLL)[0].server == str(OLD)


def test_chains_are_per_wal_group_and_meta_is_not_checked() -> None:
    g0 = [f(OLD, T0 - 1_000 + i * ROLL, group="regiongroup-0") for i in range(4)]
    g1 = [f(OLD, T0 - 2_000, group="regiongroup-1"),
          f(OLD, T0 - 2_000 + 3 * ROLL, group="regiongroup-1")]
    meta = ("/hbase/oldWALs/" + wal_file_name(OLD, T0 + 5 * ROLL, meta=True), T0 + 5 * ROLL,
            None)
    spans = missing([*g0, *g1, meta], [anchor(OLD, T0 - 1_000, "regiongroup-0"),
                                        anchor(OLD, T0 - 2_000, "regiongroup-1")])
    assert [(s.group, s.last_time) for s in spans] == [
        ("regiongroup-1", T0 - 2_000 + 3 * ROLL + WRITE_TIME_SKEW_MS)]


def test_a_window_only_counts_stretches_inside_it() -> None:
    chain = [f(OLD, T0 - 1_000), f(OLD, T0 + 5 * ROLL)]
    assert find_missing(chain, [], since=T0 + 6 * ROLL, until=T0 + 7 * ROLL,
                        roll_period=ROLL, now=T0 + 9 * ROLL) == []
    span, = find_missing(chain, [], since=T0, until=T0 + ROLL, roll_period=ROLL,
                         now=T0 + 9 * ROLL)
    assert span.first_time == T0


def test_a_queued_file_no_listing_saw_is_missing() -> None:
    known = wal_file_name(OLD, T0)
    lost = wal_file_name(OLD, T0 + ROLL)
    span, = queued_missing({str(OLD): {known, lost}}, {known}, since=T0)
    assert span.first_time == T0 + ROLL - WRITE_TIME_SKEW_MS and lost in span.detail


def test_the_anchor_is_the_file_current_at_the_watermark_even_if_archived_since() -> None:
    def status(created: int, state: str) -> WalFileStatus:
        name = wal_file_name(OLD, created)
        folder = f"WALs/{OLD}" if state == "live" else "oldWALs"
        return WalFileStatus(f"/r/{folder}/{name}", f"{folder}/{name}", name, 100, created,
                             state, str(OLD), created)

    listed = [status(T0 - 2 * ROLL, "archived"), status(T0 - 5, "archived"),
              status(T0 + 10, "live")]
    found, = anchors_of(listed, T0).values()
    assert found.timestamp == T0 - 5
    dead = ServerName("rs3.example.com", 16020, T0 - 99)
    name = wal_file_name(dead, T0 - 50)
    only_archived = [WalFileStatus(f"/r/oldWALs/{name}", f"oldWALs/{name}", name, 1, 1,
                                   "archived", str(dead), T0 - 50)]
    assert anchors_of(only_archived, T0) == {}  # no live file: the server was not writing
