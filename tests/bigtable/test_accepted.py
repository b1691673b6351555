"""Accepted losses to Bigtable, without a Bigtable: a name names exactly one key (two keys
alike in their first characters have two names, a long one shown shortened with the
SHA-256 of its bytes), an old 64-character acceptance is refused with the new name, and the
validation's source side leaves out exactly the accepted cells, whichever digest runs."""

from __future__ import annotations

import hashlib
import struct
from collections import Counter
from pathlib import Path

import pytest

from hbase_migrate.bigtable.accepted import AcceptedLosses, losses_line, without_accepted
from hbase_migrate.bigtable.errors import BigtablePreflightError
from hbase_migrate.bigtable.preflight import Report, cell_findings
from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, digest_rows, reference_digest_rows
from hbase_migrate.wal.model import Cell, CellType
from tests.bigtable.loss_names import KEY1, KEY2, key_name


def put(row: bytes, qualifier: bytes = b"q", ts: int = 1000) -> Cell:
    return Cell(row, b"f", qualifier, ts, CellType.PUT, b"v" + row[-3:] + qualifier[-3:])


def test_two_long_keys_alike_in_their_first_characters_have_two_names() -> None:
    (one,) = cell_findings("big", put(KEY1))
    (two,) = cell_findings("big", put(KEY2))
    assert one.name == key_name("big", KEY1) and two.name == key_name("big", KEY2)
    assert one.name != two.name and len(two.name) < 200  # shown shortened
    assert one.detail == "a row key of 5000 bytes (at most 4096)"
    # a long qualifier: the row and column shortened, the digest of row, column, timestamp
    (column,) = cell_findings("big", put(b"r", b"x" * 20_000, 7))
    where = b"".join(struct.pack(">I", len(p)) + p for p in (b"r", b"f", b"x" * 20_000, b"7"))
    assert column.name == (f"qualifier_too_large big r f:{'x' * 24}...{'x' * 16}@7 "
                           f"sha256:{hashlib.sha256(where).hexdigest()}")


def test_an_old_64_character_acceptance_is_refused_with_the_name_to_write() -> None:
    old = f"key_too_large big {'k' * 64}"  # what an earlier version named both keys
    report = Report(frozenset([old]))
    report.check_row("big", [put(KEY2)])
    with pytest.raises(BigtablePreflightError) as refused:
        report.raise_refused()
    message = str(refused.value)
    assert "\n" not in message and f'accept lists "{old}"' in message
    assert f'accept = ["{key_name("big", KEY2)}"]' in message
    assert message.startswith(f"table big: {key_name('big', KEY2).split(' ', 2)[2]}: "
                              "a row key of 9016 bytes (at most 4096)")


@pytest.mark.parametrize("implementation", ["compiled", "python"])
def test_the_source_side_leaves_out_exactly_the_accepted_cells(implementation: str) -> None:
    if implementation == "compiled" and DIGEST.module is None:
        pytest.skip("the compiled digest is not built (make speedups)")
    was = DIGEST.implementation()
    DIGEST.use(implementation)  # type: ignore[arg-type]
    try:
        long_qualifier = put(b"b", b"x" * 20_000)  # over the limit, not accepted
        source = [[put(b"a"), put(b"a", b"r")], [put(KEY1)], [put(KEY2, b"q"), put(KEY2, b"z")],
                  [put(b"b"), long_qualifier]]
        losses = AcceptedLosses.of([key_name("big", KEY1), key_name("big", KEY2)],
                                   {"src": "big"})
        assert losses is not None
        counts: Counter[str] = Counter()
        r = KeyRange("src", b"", b"")
        seen = digest_rows(r, losses.left_out("src", source, counts))
        target = [[put(b"a"), put(b"a", b"r")], [put(b"b"), long_qualifier]]
        expected = reference_digest_rows(r, target)
        assert (seen.rows, seen.cells, seen.digest) == (2, 4, expected.digest)
        assert counts == {key_name("big", KEY1): 1, key_name("big", KEY2): 2}
        # without KEY2 accepted, its row stays in (and the range would differ)
        only_one = AcceptedLosses.of([key_name("big", KEY1)], {"src": "big"})
        assert only_one is not None
        kept = list(only_one.left_out("src", source, Counter()))
        assert [c.row for piece in kept for c in piece].count(KEY2) == 2
        assert digest_rows(r, kept).digest != expected.digest
    finally:
        DIGEST.use(was)


def test_no_accepted_loss_that_drops_cells_filters_nothing() -> None:
    assert AcceptedLosses.of(["tags big", "cell_acls big"], {"big": "big"}) is None
    assert AcceptedLosses.of([key_name("other", KEY1)], {"big": "big"}) is None
    losses = AcceptedLosses.of([key_name("big", KEY1)], {"big": "big", "small": "small"})
    assert losses is not None
    pieces = [[put(KEY1)]]
    assert losses.left_out("small", pieces, Counter()) is pieces


class _Scans:
    """A source whose scans give fixed rows (what ``without_accepted`` wraps)."""

    def __init__(self, rows: list[list[Cell]]) -> None:
        self.rows = rows

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", **kw: object
             ) -> list[list[Cell]]:
        return self.rows

    def scan_batches(self, table: str, start: bytes = b"", stop: bytes = b"", **kw: object
                     ) -> list[list[list[Cell]]]:
        return [self.rows[:1], self.rows[1:]]

    def regions(self, table: str) -> list[str]:
        return ["r"]


def test_a_repair_reads_the_source_without_the_accepted_cells() -> None:
    losses = AcceptedLosses.of([key_name("big", KEY1)], {"big": "big"})
    wrapped = without_accepted(_Scans([[put(KEY1)], [put(b"a")]]), losses)  # type: ignore[arg-type]
    assert [[c.row for c in p] for p in wrapped.scan("big")] == [[b"a"]]
    assert [[[c.row for c in p] for p in b] for b in wrapped.scan_batches("big")] == [[[b"a"]]]
    assert list(wrapped.regions("big")) == ["r"]  # type: ignore[comparison-overlap]


def test_one_line_names_the_losses() -> None:
    line = losses_line({"b x": 2, "a y": 1}, "left out")
    assert line == ("accepted losses ([target] accept): 3 cell(s) left out: a y (1 cell(s)), "
                    "b x (2 cell(s))")
    assert losses_line({}, "left out") is None


def test_the_guides_refusal_is_the_one_a_key_of_5000_bytes_gets() -> None:
    guide = Path(__file__).parents[2] / "docs" / "guides" / "bigtable.md"
    (shown,) = [line for line in guide.read_text(encoding="utf-8").splitlines()
                if line.startswith("table big: ")]
    report = Report()
    report.check_row("big", [put(KEY1)])
    with pytest.raises(BigtablePreflightError) as refused:
        report.raise_refused()
    assert str(refused.value) == shown


def test_a_stopped_validation_is_not_continued_under_other_accepted_losses() -> None:
    from hbase_migrate.validate.resume import Plan, changed

    ranges = [KeyRange("big", b"", b"")]
    one = Plan.of("validate", None, None, ranges, 5, False, False, None, [key_name("big", KEY1)])
    both = Plan.of("validate", None, None, ranges, 5, False, False, None,
                   [key_name("big", KEY2), key_name("big", KEY1)])
    assert one.key != both.key
    assert changed(one.body, both.body) == "other accepted losses ([target] accept) to leave out"
    assert "accepted" not in Plan.of("validate", None, None, ranges, 5, False, False, None).body


def test_a_steps_result_gives_its_line_of_accepted_losses() -> None:
    from hbase_migrate.bigtable.accepted import step_line

    one = key_name("big", KEY1)
    assert step_line({"bigtable": {"known_losses": {one: 2}, "masked_puts": 0}}) == (
        f"accepted losses ([target] accept): 2 cell(s) not written to Bigtable: {one} "
        "(2 cell(s))")
    assert step_line({"accepted_losses": {one: 1}, "bigtable": {"known_losses": {}}}) == (
        f"accepted losses ([target] accept): 1 cell(s) left out of the source's side: {one} "
        "(1 cell(s))")
    assert step_line({"bigtable": {"known_losses": {}}}) is None and step_line({}) is None


def test_a_range_differing_by_a_key_an_old_name_accepted_says_the_name_to_accept() -> None:
    from hbase_migrate.bigtable.accepted import not_accepted

    old = f"key_too_large big {'k' * 64}"
    wrapped = without_accepted(_Scans([[put(KEY2)], [put(b"a")]]),  # type: ignore[arg-type]
                               AcceptedLosses.of([old], {"big": "big"}))
    assert [[c.row for c in p] for p in wrapped.scan("big")] == [[KEY2], [b"a"]]  # kept
    (line,) = not_accepted(wrapped)
    assert line.startswith(f"not accepted: table big: {key_name('big', KEY2).split(' ', 2)[2]}"
                           ": a row key of 9016 bytes (at most 4096): Bigtable cannot take "
                           "it; it is not on Bigtable; [target] accept lists ")
    assert f'accept = ["{key_name("big", KEY2)}"]' in line and "\n" not in line
    assert not_accepted(_Scans([])) == []  # type: ignore[arg-type]


def test_an_earlier_exact_name_of_a_long_key_gets_the_same_hint() -> None:
    row = b"r" * 300  # within the key limit, too long to be shown whole
    big = Cell(row, b"f", b"q", 5, CellType.PUT, b"x" * (100 * 2**20 + 1))
    (finding,) = cell_findings("t", big)
    old = f"cell_too_large t {'r' * 300} f:q@5"  # the whole name an earlier version gave
    assert finding.name.startswith(f"cell_too_large t {'r' * 24}...{'r' * 16} f:q@5 sha256:")
    message = finding.refusal(frozenset([old]), "it was not written")
    assert f'accept lists "{old}"' in message and f'accept = ["{finding.name}"]' in message
