"""A migration to the Bigtable emulator with an accepted oversized key, and later a second
one, through the commands a user runs: the second is refused in one line naming it; once it
is accepted too, ``validate`` matches, ``cutover check`` says GO, and the report and every
step's output list both. A repair of an ordinary difference leaves them alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.bigtable.emulator import Emulator
from hbase_migrate.cli import main
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.thrift.thrift2 import Thrift2Client
from minihbase.server import MiniHBase
from tests.bigtable.classic import google_table
from tests.bigtable.emulator_migration import put, source, write_config
from tests.bigtable.loss_names import KEY1, KEY2, key_name

__all__ = ["source"]  # the fixture
pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:Connecting to Bigtable emulator")]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    """``hbase-migrate argv`` in this process: its exit code and its lines (both streams)."""
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out = capsys.readouterr()
    return int(done.value.code or 0), (out.out + out.err).splitlines()


def accepted_line(lines: list[str]) -> str:
    (line,) = [x for x in lines if x.startswith("accepted losses ([target] accept)")]
    return line


def test_a_second_oversized_key_is_refused_until_accepted_then_the_migration_goes(
        tmp_path: Path, bigtable_emulator: Emulator,
        source: tuple[MiniHBase, Thrift2Client], capsys: pytest.CaptureFixture[str]) -> None:
    cluster, client = source
    client.create_table(TableDescriptor("big", (FamilyDescriptor(b"f"),)))
    client.write_cells("big", [put(b"a%02d" % i, b"f", b"q", 1000) for i in range(50)] +
                       [put(KEY1, b"f", b"q", 1000)])
    one, two = key_name("big", KEY1), key_name("big", KEY2)
    config = str(write_config(tmp_path, cluster, bigtable_emulator, "big", accept=[one]))

    code, lines = run(capsys, "prepare", "--config", config)
    assert code == 0, lines
    assert one in accepted_line(lines)
    code, lines = run(capsys, "snapshot", "--config", config)
    assert code == 0, lines
    assert f"1 cell(s) counted above, not written to Bigtable: {one} (1 cell(s))" in \
        accepted_line(lines)

    # a second key over the limit, alike in its first 9000 characters, written later
    client.write_cells("big", [put(KEY2, b"f", b"q", 2000), put(b"a00", b"f", b"q", 2000)])
    code, lines = run(capsys, "replay", "--config", config)
    naming = [x for x in lines if two in x]
    assert code != 0 and len(naming) == 1, lines
    assert "a row key of 9016 bytes (at most 4096)" in naming[0]
    assert f'accept = ["{two}"]' in naming[0]

    config = str(write_config(tmp_path, cluster, bigtable_emulator, "big", accept=[one, two]))
    code, lines = run(capsys, "replay", "--config", config)
    assert code == 0, lines
    assert f"{two} (1 cell(s))" in accepted_line(lines)
    assert [r.row_key for r in google_table(Path(config), "big").read_rows()] == [
        b"a%02d" % i for i in range(50)]  # neither long key reached Bigtable

    code, lines = run(capsys, "validate", "--config", config, "--recompare-wait", "0s")
    assert code == 0, lines
    # the 50 short rows on both sides (one version each: VERSIONS 1), the long keys left out
    assert "big -> big: match with accepted losses (1/1 key ranges match; 50 source cells, " \
        "2 accepted loss(es) left out of the source's, 50 target cells)" in lines, lines
    line = accepted_line(lines)
    assert "2 cell(s) left out of the source's side: " in line
    assert f"{one} (1 cell(s))" in line and f"{two} (1 cell(s))" in line
    assert "verdict: match" in lines

    # the same validation made in parts: the judge's verdict names them too
    code, lines = run(capsys, "validate", "--config", config, "--part", "1/1", "--run", "k")
    assert code == 0 and f"{two} (1 cell(s))" in accepted_line(lines), lines
    code, lines = run(capsys, "validate", "--config", config, "--judge", "--run", "k")
    assert code == 0 and "verdict: match" in lines, lines
    assert any(x.startswith("big -> big: match with accepted losses") for x in lines), lines
    line = accepted_line(lines)
    assert f"{one} (1 cell(s))" in line and f"{two} (1 cell(s))" in line

    code, lines = run(capsys, "cutover", "check", "--config", config)
    assert (code, lines[-1]) == (0, "verdict: GO"), lines
    line = accepted_line(lines)
    assert "2 cell(s) on the source, left out of the last validation: " in line
    assert f"{one} (1 cell(s))" in line and f"{two} (1 cell(s))" in line

    report = tmp_path / "report.html"
    code, lines = run(capsys, "report", "--config", config, "--out", str(report))
    assert code == 0, lines
    assert one in accepted_line(lines) and two in accepted_line(lines)
    page = report.read_text(encoding="utf-8")
    section = page[page.index('<section id="losses">'):]
    section = section[:section.index("</section>")]
    assert "Accepted losses" in section
    for name in (one, two):
        assert name.split(" ", 2)[2] in section

    # an ordinary difference made behind the migration's back: the repair mends it and
    # leaves the accepted losses alone (no write of a key Bigtable cannot take)
    row = google_table(Path(config), "big").direct_row(b"a07")
    row.delete()
    row.commit()
    code, lines = run(capsys, "validate", "--config", config, "--repair", "--recompare-wait",
                      "0s")
    assert code == 0, lines
    assert any(x.strip().endswith("1 puts, 0 deletes") and x.strip().startswith("repaired")
               for x in lines), lines
    assert "verdict: match" in lines
