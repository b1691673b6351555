"""The WAL chain rules of :mod:`hbase_migrate.replay.coverage` on hand-built chains: which
stretches a set of known files (and the listings that watched them) leaves missing or
unproven, worked out by hand for each case."""

from __future__ import annotations

from pathlib import Path

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import AnchorRecord, ChainHead
from hbase_migrate.cluster.storage.walstore import WalFileStatus
from hbase_migrate.replay.coverage import (
    FIRST_WAL_DELAY_MS,
    WRITE_TIME_SKEW_MS,
    ChainKey,
    Evidence,
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


# listings from before the watermark until long after: every file created was listed
ALWAYS = ((T0 - 86_400_000, T0 + 86_400_000),)


def missing(files: list[tuple[str, int, int | None]], anchors: list[AnchorRecord], *,
            now: int = T0 + 10 * ROLL, watched: tuple[tuple[int, int], ...] = ALWAYS,
            queued_from: dict[ChainKey, int] | None = None,
            heads: dict[ChainKey, list[ChainHead]] | None = None) -> list[MissingSpan]:
    return find_missing(files, anchors, since=T0, until=None, roll_period=ROLL, now=now,
                        evidence=Evidence(ROLL, watched, queued_from, 600_000, heads))


def test_a_chain_from_its_anchor_rolling_every_period_is_covered() -> None:
    chain = [f(OLD, T0 - 20_000 + i * ROLL) for i in range(8)]
    assert missing(chain, [anchor(OLD, T0 - 20_000)]) == []


def test_files_a_period_apart_that_no_listing_watched_are_unproven_not_whole() -> None:
    # HBase archives any WAL whose regions are flushed: a file rolled by size between two
    # known files, then deleted, leaves no trace in their names
    chain = [f(OLD, T0 - 20_000 + i * ROLL) for i in range(3)]
    spans = missing(chain, [anchor(OLD, T0 - 20_000)], watched=())
    assert [(s.first_time, s.last_time, s.proven) for s in spans] == [
        (T0, T0 - 20_000 + ROLL + WRITE_TIME_SKEW_MS, False),
        (T0 - 20_000 + ROLL - WRITE_TIME_SKEW_MS, T0 - 20_000 + 2 * ROLL + WRITE_TIME_SKEW_MS,
         False)]
    assert all("more often than the archive TTL (10m" in s.detail for s in spans)


def test_watched_stretches_prove_links_they_cover_and_only_those() -> None:
    a, b, c = T0 - 20_000, T0 + 30_000, T0 + 50_000  # closer than the roll period
    chain = [f(OLD, a), f(OLD, b), f(OLD, c)]
    # two listings' stretches joined end to end cover (a, b) but not (b, c); a later
    # listing began after c was created
    watched = ((a - 5_000, T0), (T0 + 1, b + 2_000), (c + 10_000, c + 20_000))
    span, = missing(chain, [anchor(OLD, a)], watched=watched)
    assert (span.first_time, span.proven) == (b - WRITE_TIME_SKEW_MS, False)
    # a hole between two stretches leaves (a, b) unproven
    span, = missing(chain[:2], [anchor(OLD, a)], watched=((a - 5_000, T0), (T0 + 5_000, c)))
    assert span.last_time == b + WRITE_TIME_SKEW_MS


def test_a_jump_over_the_roll_period_in_a_watched_stretch_is_a_late_roll_not_a_gap() -> None:
    # a roller that ran late on a loaded machine: every file created was listed meanwhile
    chain = [f(OLD, T0 - 10_000), f(OLD, T0 - 10_000 + 3 * ROLL)]
    assert missing(chain, [anchor(OLD, T0 - 10_000)]) == []
    span, = missing(chain, [anchor(OLD, T0 - 10_000)], watched=())
    assert span.proven and span.detail.startswith("rule roll period")


def test_a_replication_queue_from_before_a_link_proves_it() -> None:
    a, b = T0 - 20_000, T0 + 20_000
    chain = [f(OLD, a), f(OLD, b)]
    key = ChainKey(str(OLD), "")
    assert missing(chain, [anchor(OLD, a)], watched=(), queued_from={key: a}) == []
    assert missing(chain, [anchor(OLD, a)], watched=(), queued_from={key: a + 1})


def test_an_anchor_never_listed_is_missing_from_the_watermark_to_the_next_known_file() -> None:
    chain = [f(OLD, T0 - 20_000 + i * ROLL) for i in range(3, 8)]
    span, = missing(chain, [anchor(OLD, T0 - 20_000)])
    assert (span.server, span.first_time) == (str(OLD), T0)
    assert span.last_time == T0 - 20_000 + 3 * ROLL + WRITE_TIME_SKEW_MS
    assert "was never listed" in span.detail and span.proven


def test_an_anchored_server_with_no_file_known_misses_everything_since_the_watermark() -> None:
    now = T0 + 5 * ROLL
    span, = missing([], [anchor(OLD, T0 - 1)], now=now)
    assert (span.first_time, span.last_time) == (T0, now)


def test_a_jump_of_two_periods_is_missing_and_one_period_plus_slack_is_not() -> None:
    a, b = T0 - 10_000, T0 - 10_000 + ROLL + roll_slack(ROLL)  # late roll: fine
    c = b + 2 * ROLL  # one file in between was never seen
    chain = [f(OLD, a), f(OLD, b, replayed_to=b + 50_000), f(OLD, c)]
    spans = missing(chain, [anchor(OLD, a)], watched=())
    assert [s.proven for s in spans] == [False, True]  # (a, b) unwatched: only unproven
    # listings watched (a, b) only; the jump (b, c) is judged by the roll period
    span, = missing(chain, [anchor(OLD, a)], watched=((a - ROLL, b + WRITE_TIME_SKEW_MS),
                                                      (c + ROLL, c + 2 * ROLL)))
    assert span.first_time == b + 50_000 - WRITE_TIME_SKEW_MS  # after what was replayed
    assert span.last_time == c + WRITE_TIME_SKEW_MS
    assert "between" in span.detail and span.detail.startswith("rule roll period")


def test_jumps_before_the_watermark_do_not_count() -> None:
    chain = [f(OLD, T0 - 10 * ROLL), f(OLD, T0 - 2 * ROLL), f(OLD, T0 - ROLL + 1)]
    assert missing(chain, [anchor(OLD, T0 - ROLL + 1)]) == []


def test_without_anchors_an_old_server_needs_a_file_created_by_the_watermark() -> None:
    late = [f(OLD, T0 + 5_000 + i * ROLL) for i in range(3)]
    span, = missing(late, [])
    assert (span.first_time, span.last_time) == (T0, T0 + 5_000 + WRITE_TIME_SKEW_MS)
    assert missing([f(OLD, T0 - 5_000), *late], []) == []


def test_a_server_started_after_the_watermark_starts_its_own_chain() -> None:
    started = NEW.start_code
    assert missing([f(NEW, started + i * ROLL) for i in range(3)], [], watched=(
        (started - 5_000, started + 3 * ROLL),)) == []  # its first file made as it started
    assert missing([f(NEW, T0 + 40_000 + i * ROLL) for i in range(3)], []) == []


def test_a_late_server_whose_first_file_is_unknown_and_unwatched_is_unproven() -> None:
    # the source started after the window's start; files written before the first listing
    # were rolled, archived and deleted (the reproduction)
    started, first = NEW.start_code, NEW.start_code + 12_000
    chain = [f(NEW, first + i * 1_000) for i in range(3)]
    span, = missing(chain, [], watched=((first - 2_000, first + 5_000),))
    assert (span.first_time, span.last_time, span.proven) == (
        started, first + WRITE_TIME_SKEW_MS, False)
    assert "the server started at" in span.detail
    assert missing([f(NEW, T0 + 40_000 + i * ROLL) for i in range(3)],
                   [anchor(OLD, T0 - 1)], now=T0 + 2 * ROLL)[0].server == str(OLD)


def test_chains_are_per_wal_group_and_meta_is_not_checked() -> None:
    g0 = [f(OLD, T0 - 1_000 + i * ROLL, group="regiongroup-0") for i in range(4)]
    g1 = [f(OLD, T0 - 2_000, group="regiongroup-1"),
          f(OLD, T0 - 2_000 + 3 * ROLL, group="regiongroup-1")]
    meta = ("/hbase/oldWALs/" + wal_file_name(OLD, T0 + 5 * ROLL, meta=True), T0 + 5 * ROLL,
            None)
    spans = missing([*g0, *g1, meta], [anchor(OLD, T0 - 1_000, "regiongroup-0"),
                                        anchor(OLD, T0 - 2_000, "regiongroup-1")], watched=())
    assert {s.group for s in spans if not s.proven} == {"regiongroup-0"}  # none watched
    assert [(s.group, s.last_time) for s in spans if s.proven] == [
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


def test_a_server_restarted_after_the_watermark_needs_its_first_file_known() -> None:
    # anchors exist (a snapshot fixed T0); NEW has none: it started after T0
    started = NEW.start_code
    own = [f(NEW, started + FIRST_WAL_DELAY_MS + 5_000 + i * ROLL) for i in range(2)]
    old = [f(OLD, T0 - 1)]
    span, = missing([*old, *own], [anchor(OLD, T0 - 1)], now=T0 + 3 * ROLL,
                    watched=((started + 2_000, T0 + 10 * ROLL),))
    assert (span.server, span.first_time, span.proven) == (str(NEW), started, False)
    assert missing([*old, f(NEW, started), *own], [anchor(OLD, T0 - 1)], now=T0 + 3 * ROLL,
                   watched=((T0 - 5_000, T0 + 10 * ROLL),)) == []
    # HBase makes a server's first WAL seconds after its start (its first report or open)
    assert missing([*old, f(NEW, started + FIRST_WAL_DELAY_MS)], [anchor(OLD, T0 - 1)],
                   now=T0 + 3 * ROLL, watched=((T0 - 5_000, T0 + 10 * ROLL),)) == []
    # and rolls it at least once per period from there: far later, files were lost
    late = started + FIRST_WAL_DELAY_MS + ROLL + roll_slack(ROLL) + 1
    span, = missing([*old, f(NEW, late)], [anchor(OLD, T0 - 1)], now=late + ROLL,
                    watched=((late - 1_000, late + ROLL),))
    assert span.proven and span.detail.startswith("rule roll period")


def test_a_listing_that_saw_a_chains_newest_live_file_proves_nothing_came_after_it() -> None:
    # the file the chain was writing at T0 is older than the TTL when the first listing
    # runs: the TTL alone cannot prove (a, b), but a listing that began at T0 and saw a as
    # the chain's newest live file proves no newer file had appeared by then
    a, b = T0 - 40_000, T0 + 15_000  # closer than the roll period
    chain = [f(OLD, a), f(OLD, b)]
    key = ChainKey(str(OLD), "")
    ttl_only = ((T0 - 30_000, T0), (T0 - 1, b + 10_000))  # a 30 s TTL, listings at T0, b
    span, = missing(chain, [anchor(OLD, a)], watched=ttl_only)
    assert not span.proven
    seen_a = ChainHead(a, T0 - 30_000, T0)
    assert missing(chain, [anchor(OLD, a)], watched=ttl_only, heads={key: [seen_a]}) == []
    other = ChainKey(str(NEW), "")  # another chain's head proves nothing of this one
    assert missing(chain, [anchor(OLD, a)], watched=ttl_only, heads={other: [seen_a]})


def test_a_head_proves_nothing_of_files_that_appeared_while_its_listing_ran() -> None:
    # HBase names a file, then creates it (seconds on a busy HDFS): x was named before the
    # listing began but appeared after it read the live folder, so the listing saw a as the
    # head; x was rolled and cleaned before the next listing, which saw b
    a = T0 + 1_000  # x named at a + 20 s, b at a + 40 s: rolls by size, within a period
    listing = a + 25_000  # began after x's name time
    b = a + 40_000
    chain = [f(OLD, a), f(OLD, b)]
    key = ChainKey(str(OLD), "")
    # the later listing ended more than the TTL after the first began
    heads = {key: [ChainHead(a, listing - 600_000, listing),
                   ChainHead(b, listing + 10_000, b + 30_000)]}
    span, = missing(chain, [anchor(OLD, a)], watched=(), heads=heads, now=b + ROLL)
    assert (span.first_time, span.last_time, span.proven) == (
        T0, b + WRITE_TIME_SKEW_MS, False)
    # had the later listing ended within the TTL of the first one's start, it saw x
    heads[key][1] = ChainHead(b, listing - 1, b + 30_000)
    assert missing(chain, [anchor(OLD, a)], watched=(), heads=heads, now=b + ROLL) == []


def test_a_head_proves_files_older_than_it_only_from_its_listings_end_less_the_ttl() -> None:
    a, b, c = T0 + 1_000, T0 + 1_000 + ROLL, T0 + 1_000 + 2 * ROLL
    chain = [f(OLD, a), f(OLD, b), f(OLD, c)]
    key = ChainKey(str(OLD), "")
    # one listing saw c as the head: it saw every older file that appeared after its end
    # less the TTL; a file between a and b that appeared earlier may have been cleaned
    late = {key: [ChainHead(c, a + ROLL // 2, c + 1_000)]}
    span, = missing(chain, [anchor(OLD, a)], watched=(), heads=late, now=c + ROLL)
    assert span.last_time == b + WRITE_TIME_SKEW_MS and not span.proven
    early = {key: [ChainHead(c, a - WRITE_TIME_SKEW_MS, c + 1_000)]}
    assert missing(chain, [anchor(OLD, a)], watched=(), heads=early, now=c + ROLL) == []


def lost_anchor(server: ServerName, group: str = "") -> AnchorRecord:
    """The anchor of a chain the watermark's listing found live with no file of T0."""
    return AnchorRecord(1, 1, str(server), group, "", None, T0, T0)


def test_a_live_chain_whose_file_of_the_watermark_was_gone_has_no_file_anchor() -> None:
    def live(created: int) -> WalFileStatus:
        name = wal_file_name(OLD, created)
        return WalFileStatus(f"/r/WALs/{OLD}/{name}", f"WALs/{OLD}/{name}", name, 100,
                             created, "live", str(OLD), created)

    # a slow listing, three rolls after T0: the file of T0 was archived and cleaned already
    assert anchors_of([live(T0 + 3 * ROLL)], T0) == {ChainKey(str(OLD), ""): None}


def test_a_lost_anchor_is_a_gap_from_the_watermark_even_beside_found_anchors() -> None:
    other = ServerName("rs3.example.com", 16020, T0 - 86_400_000)
    chain = [f(OLD, T0 + 3 * ROLL + i * ROLL) for i in range(3)]
    found = [f(other, T0 - 1_000 + i * ROLL) for i in range(6)]
    span, = missing([*chain, *found], [lost_anchor(OLD), anchor(other, T0 - 1_000)])
    assert (span.server, span.first_time, span.proven) == (str(OLD), T0, True)
    assert span.last_time == T0 + 3 * ROLL + WRITE_TIME_SKEW_MS
    assert "rule anchor" in span.detail
    # an older file known from another listing is where the chain starts: then it is whole
    assert missing([f(OLD, T0 - 5_000), *chain], [lost_anchor(OLD)],
                   watched=((T0 - 10_000, T0 + 10 * ROLL),)) == []


def test_a_server_started_just_before_the_watermark_may_have_had_no_file_yet() -> None:
    young = ServerName("rs4.example.com", 16020, T0 - 2_000)
    first = young.start_code + FIRST_WAL_DELAY_MS // 2  # its first file, after T0
    assert missing([f(young, first + i * ROLL) for i in range(3)], [lost_anchor(young)]) == []
    late = young.start_code + FIRST_WAL_DELAY_MS + 2 * ROLL  # its first files are unknown
    span, = missing([f(young, late)], [lost_anchor(young)], watched=())
    assert span.server == str(young) and span.first_time == young.start_code


def test_a_multiwal_group_without_a_file_at_the_watermark_is_unproven() -> None:
    chain = [f(OLD, T0 + 3 * ROLL + i * ROLL, group="g1") for i in range(2)]
    span, = missing(chain, [lost_anchor(OLD, "g1")])
    assert (span.group, span.first_time, span.proven) == ("g1", T0, False)


def test_what_appeared_after_the_newest_listing_began_waits_for_the_next_listing() -> None:
    # a listing saw a as the head, and b (named after it began) archived already: whatever
    # came between a and b appeared while it ran, so the next listing judges that stretch
    a = T0 + 1_000
    began = a + 5_000
    b = began + 2_000
    chain = [f(OLD, a), f(OLD, b)]
    key = ChainKey(str(OLD), "")
    heads = {key: [ChainHead(a, began - 600_000, began)]}
    assert missing(chain, [anchor(OLD, a)], watched=((began - 600_000, began),),
                   heads=heads, now=b + 1_000) == []
    # the next listing came more than the TTL later: the stretch is unproven for good
    later = b + 700_000
    heads[key].append(ChainHead(b + ROLL, later + 1_000 - 600_000, later))
    span, = missing(chain, [anchor(OLD, a)], heads=heads, now=later + 2_000,
                    watched=((began - 600_000, began), (later + 1_000 - 600_000, later)))
    assert (span.first_time, span.proven) == (T0, False)


def test_the_watermarks_listing_records_no_file_so_it_proves_only_what_came_after_the_heads(
        tmp_path: Path) -> None:
    # the WAL watch starts from the files the ledger has not seen: the watermark's listing
    # leaves them unseen, so it may not claim it saw them either
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger:
        migration = ledger.ensure_migration("m", "src", "dst", [])
        ledger.record_listing(migration.id, "source", T0, T0 + 1_000, 600_000,
                              {(str(OLD), ""): T0 - 5_000}, files_recorded=False)
        assert ledger.watched(migration.id, "source") == []
        head, = ledger.heads(migration.id, "source")[(str(OLD), "")]
        assert head.newer_after == T0 and head.older_seen_from > T0 + 86_400_000 * 365
