"""MOB families (``IS_MOB``, ``MOB_THRESHOLD``) keep their settings through a migration's
schema step: written under HBase's own attribute names (``ColumnFamilyDescriptorBuilder``),
and only when set, as HBase writes them (neither key is among its ``DEFAULT_VALUES``); read
back from the RPC's ``ColumnFamilySchema`` and from Thrift2's family attributes."""

from __future__ import annotations

from hbase_migrate.cluster.descriptors import DEFAULT_MOB_THRESHOLD, FamilyDescriptor
from hbase_migrate.cluster.schema import decode_family, decode_pair, family_message
from hbase_migrate.thrift.thrift2 import family_from_thrift, family_to_thrift
from hbase_migrate.wal.protobuf import Message


def attributes(family: FamilyDescriptor) -> dict[bytes, bytes]:
    message = Message(family_message(family), "ColumnFamilySchema")
    return dict(decode_pair(p) for p in message.repeated(2))


def test_a_mob_family_is_written_under_hbases_names_and_read_back() -> None:
    mob = FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=100)
    written = attributes(mob)
    assert (written[b"IS_MOB"], written[b"MOB_THRESHOLD"]) == (b"true", b"100")
    assert decode_family(family_message(mob)) == mob


def test_a_family_without_mob_carries_no_mob_key() -> None:
    plain = FamilyDescriptor(b"d")
    assert not {b"IS_MOB", b"MOB_THRESHOLD"} & set(attributes(plain))
    assert decode_family(family_message(plain)) == plain
    assert (plain.mob, plain.mob_threshold) == (False, 100 * 1024)
    assert DEFAULT_MOB_THRESHOLD == 102400  # ColumnFamilyDescriptorBuilder's 100 KB


def test_thrift2_carries_mob_as_family_attributes() -> None:
    mob = FamilyDescriptor(b"m", mob=True, mob_threshold=4096)
    sent = family_to_thrift(mob)
    assert sent.attributes == {b"IS_MOB": b"true", b"MOB_THRESHOLD": b"4096"}
    assert family_from_thrift(sent) == mob
    assert family_to_thrift(FamilyDescriptor(b"d")).attributes is None
