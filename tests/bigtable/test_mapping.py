"""The Bigtable target's rules without a server: table ids, retention and GC rules, the
limits, the delete markers a replay remembers, requests within Bigtable's limit, and the
``[target]`` section."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from hbase_migrate import lifecycle
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.bigtable.errors import BigtablePreflightError
from hbase_migrate.bigtable.masking import MarkerMemory
from hbase_migrate.bigtable.preflight import MiB, Report, cell_findings
from hbase_migrate.bigtable.schema import Retention, table_id
from hbase_migrate.bigtable.writer import MutationBatcher
from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.migrations import recorded_spec
from hbase_migrate.ranges.choice import choose_engine
from hbase_migrate.wal.model import Cell, CellType, Tag

pytest.importorskip("google.cloud.bigtable")


def test_table_ids_keep_the_namespace_and_refuse_what_bigtable_cannot_name() -> None:
    assert [table_id(n) for n in ("orders", "default:orders", "shop:orders")] == [
        "orders", "orders", "shop.orders"]
    with pytest.raises(ConfigError, match="at most 50 characters"):
        table_id("x" * 51)


def test_retention_keeps_min_versions_past_the_ttl_as_hbase_reads() -> None:
    # HBase's ScanWildcardColumnTracker: past VERSIONS never; expired only beyond
    # MIN_VERSIONS (the newest MIN_VERSIONS stay, however old).
    now = 10_000_000
    keep = Retention.of(FamilyDescriptor(b"f", max_versions=3, ttl=60, min_versions=1))
    assert keep == Retention(3, 60_000, 1)
    old = [now - 70_000, now - 80_000]
    assert keep.kept(old, now) == 1
    assert keep.kept([now - 1, now - 2, now - 3, now - 4], now) == 3
    assert keep.kept([now - 1, now - 70_000, now - 2], now) == 1  # stops at the first expired
    assert Retention.of(FamilyDescriptor(b"f", max_versions=2, ttl=60)).kept(old, now) == 0
    assert Retention.of(FamilyDescriptor(b"f", max_versions=FOREVER)).kept(old * 5, now) == 10


@pytest.mark.parametrize("family", [
    FamilyDescriptor(b"f", max_versions=1),
    FamilyDescriptor(b"f", max_versions=5, ttl=86_400),
    FamilyDescriptor(b"f", max_versions=3, ttl=3_600, min_versions=2),
    FamilyDescriptor(b"f", max_versions=FOREVER, ttl=600),
])
def test_gc_rules_read_back_as_the_retention_they_came_from(family: FamilyDescriptor) -> None:
    keep = Retention.of(family)
    assert Retention.from_gc_rule(keep.gc_rule()) == keep
    assert Retention.of(keep.family(b"f")) == keep


def cell(value: bytes = b"v", row: bytes = b"r", ts: int = 1, tags: tuple[Tag, ...] = ()
         ) -> Cell:
    return Cell(row, b"f", b"q", ts, CellType.PUT, value, tags)


def test_the_limits_are_bigtables_to_the_byte() -> None:
    assert cell_findings("t", cell(b"x" * (100 * MiB))) == []
    (over,) = cell_findings("t", cell(b"x" * (100 * MiB + 1)))
    assert (over.kind, over.name) == ("cell_too_large", "cell_too_large t r f:q@1")
    assert cell_findings("t", cell(row=b"k" * 4096)) == []
    assert [f.kind for f in cell_findings("t", cell(row=b"k" * 4097))] == ["key_too_large"]
    assert [f.kind for f in cell_findings("t", cell(ts=-1))] == ["bad_timestamp"]
    assert [f.kind for f in cell_findings("t", cell(ts=(1 << 63) // 1000 + 1))] == ["bad_timestamp"]
    assert [f.name for f in cell_findings("t", cell(tags=(Tag(8, b"x"),)))] == ["tags t"]
    assert [f.name for f in cell_findings("t", cell(tags=(Tag(2, b"x"), Tag(1, b"y"))))] == [
        "cell_acls t", "visibility_labels t"]


def test_a_refusal_is_one_line_naming_what_to_accept_and_accepting_passes() -> None:
    report = Report()
    report.check_row("t", [cell(row=b"k" * 4097), cell(b"x", row=b"k" * 4097, ts=2)])
    with pytest.raises(BigtablePreflightError) as refused:
        report.raise_refused()
    (name,) = report.found
    assert "\n" not in str(refused.value) and f'accept = ["{name}"]' in str(refused.value)
    assert report.seen[name] == 2
    accepted = Report(frozenset([name]))
    accepted.check_row("t", [cell(row=b"k" * 4097)])
    accepted.raise_refused()
    assert accepted.to_json()["findings"][0]["accepted"] is True


def test_markers_mask_exactly_the_puts_hbase_hides() -> None:
    memory = MarkerMemory()
    for kind, qualifier, ts in ((CellType.DELETE_COLUMN, b"a", 10), (CellType.DELETE, b"b", 5),
                                (CellType.DELETE_FAMILY, b"", 3),
                                (CellType.DELETE_FAMILY_VERSION, b"", 7)):
        memory.note("t", Cell(b"r", b"f", qualifier, ts, kind))

    def hidden(qualifier: bytes, ts: int, row: bytes = b"r") -> bool:
        return memory.masks("t", Cell(row, b"f", qualifier, ts, CellType.PUT))

    assert hidden(b"a", 10) and hidden(b"a", 1) and not hidden(b"a", 11)
    assert hidden(b"b", 5) and not hidden(b"b", 6) and not hidden(b"b", 4)
    assert hidden(b"z", 3) and not hidden(b"z", 4)  # the family, <= 3
    assert hidden(b"z", 7) and not hidden(b"z", 8)  # the family's version 7
    assert not hidden(b"a", 1, row=b"other")
    assert memory.masked["t"] == 5


def test_requests_hold_one_entry_per_row_in_order_within_the_mutation_limit() -> None:
    sent: list[list[tuple[bytes, list[object]]]] = []
    batcher = MutationBatcher("t", sent.append, lambda row, family: {}, MarkerMemory(), limit=3)
    cells = [Cell(r, b"f", b"q", ts, CellType.PUT, b"%d" % ts)
             for r, ts in ((b"a", 1), (b"b", 2), (b"a", 3), (b"a", 4), (b"b", 5))]
    assert batcher.add(cells) == 2
    assert [[(row, [m.timestamp_micros for m in ms]) for row, ms in request]  # type: ignore[attr-defined]
            for request in sent] == [[(b"a", [1000, 3000]), (b"b", [2000])],
                                     [(b"a", [4000]), (b"b", [5000])]]


def test_the_target_section_is_checked(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    head = '[migration]\nname = "m"\n[source]\nthrift = "h:9090"\n[[tables]]\nsource = "t"\n'
    path.write_text(head + '[target]\nkind = "bigtable"\nproject = "p1"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[target\] instance: missing"):
        load_config(path)
    path.write_text(head + '[target]\nkind = "bigtable"\nproject = "p1"\ninstance = "i1"\n'
                    'emulator_host = "localhost:8086"\naccept = ["tags t"]\n', encoding="utf-8")
    spec = load_config(path)
    assert spec.target.bigtable is not None
    assert (spec.target.bigtable.project, spec.target.bigtable.accept) == ("p1", ("tags t",))
    assert spec.target.identity == "bigtable:projects/p1/instances/i1"
    assert type(spec).from_dict(spec.to_dict(), base_dir=tmp_path).target == spec.target
    # a master named by a caller (--master, an Airflow connection) is refused too
    with pytest.raises(ConfigError, match=r"Spark master 'local\[2\]' \(asked for by the "
                       r"caller\): a Bigtable target is written in-process, not on Spark"):
        choose_engine("local[2]", spec.engine, 1)
    assert choose_engine(None, spec.engine, 10**9).master == IN_PROCESS
    for step in (lifecycle.snapshot, lifecycle.replay, lifecycle.validate):  # before a start
        with pytest.raises(ConfigError, match=r"Spark master 'yarn' \(asked for by the caller"):
            step(spec, master="yarn")
    spec = replace(spec, ledger_url=f"sqlite:///{tmp_path / 'ledger.db'}")
    with Ledger.open(spec.ledger_url) as ledger:
        ledger.ensure_spec(spec)
    # what a DAG run naming the migration alone gets back from the ledger
    assert recorded_spec("m", spec.ledger_url).target == spec.target
    with pytest.raises(ConfigError, match=r"\[target\] is Bigtable projects/p1/instances/i1 "
                       "on the emulator localhost:8086: it has no HBase endpoints"):
        spec.target.endpoints()
    other = tmp_path / "other.toml"
    for text, error in (
            (path.read_text().replace('thrift = "h:9090"', 'kind = "bigtable"'),
             r"\[source\] kind: expected no kind"),
            (path.read_text() + '[snapshot]\nmethod = "hbase"\n', r"\[snapshot\] method: a "
             "Bigtable target is copied by the scan copy only"),
            (path.read_text() + '[cdc]\nbootstrap = "k:9092"\ntopic = "c"\n',
             r"\[cdc\]: the CDC stream reads an HBase target back"),
            (path.read_text() + '[spark]\nlarge_master = "spark://m:7077"\n',
             r"\[spark\]: a Bigtable target is written in-process, not on Spark "
             r"\(got 'spark://m:7077'\)")):
        other.write_text(text, encoding="utf-8")
        with pytest.raises(ConfigError, match=error):
            load_config(other)
    path.write_text(path.read_text().replace('source = "t"', 'source = "t"\nfamilies = ["d"]'),
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"t: families: .* every family"):
        load_config(path)
