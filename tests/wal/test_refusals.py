"""Files this reader refuses, each with a message naming the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import read_all, simple_pairs, wal_bytes

from hbase_migrate.errors import WalCorruptError, WalUnsupportedError
from hbase_migrate.wal.header import MAGIC, encode_header
from hbase_migrate.wal.model import WalHeader
from hbase_migrate.wal.protobuf import delimited
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops


def test_legacy_samples(legacy_samples: list[Path]) -> None:
    for sample in legacy_samples:
        with pytest.raises(WalUnsupportedError, match="legacy") as info:
            WalReader(str(sample))
        assert "0.94 SequenceFile HLog" in str(info.value) and "unsupported" in str(info.value)
        assert str(sample) in str(info.value)


def test_encrypted_header_is_refused() -> None:
    import io

    out = io.BytesIO()
    writer = WalWriter(
        out,
        WalOptions(
            encryption_key=b"wrapped-key",
            writer_cls_name="SecureProtobufLogWriter",
            cell_codec_cls_name="org.apache.hadoop.hbase.regionserver.wal.SecureWALCellCodec",
        ),
    )
    with pytest.raises(ValueError, match="encrypted"):
        writer.append(*simple_pairs(2)[1])
    writer.close()
    with pytest.raises(WalUnsupportedError, match="encrypted"):
        read_all(out.getvalue())


def _with_header(header: WalHeader) -> bytes:
    body = encode_header(header)
    return MAGIC + delimited(body)


def test_custom_codec_is_named() -> None:
    codec = "com.example.wal.OwnCellCodec"  # Phoenix's is read (test_phoenix.py)
    with pytest.raises(WalUnsupportedError, match="OwnCellCodec"):
        read_all(_with_header(WalHeader(cell_codec_cls_name=codec)))


@pytest.mark.parametrize(("ordinal", "name"), [(0, r"LZO .*GPL"), (9, "#9"), (42, "#42")])
def test_other_value_compression_is_named(ordinal: int, name: str) -> None:
    header = WalHeader(
        True, None, True, has_value_compression=True, value_compression_algorithm=ordinal
    )
    with pytest.raises(WalUnsupportedError, match=name):
        read_all(_with_header(header))


def test_value_compression_ignored_without_compression() -> None:
    # as HBase: the value flags only count when dictionary compression is on
    header = WalHeader(
        False, None, False, has_value_compression=True, value_compression_algorithm=4
    )
    entries, reader = read_all(_with_header(header))
    assert entries == [] and reader.end_reason == "eof"


def test_absent_codec_and_writer_mean_defaults() -> None:
    data = _with_header(WalHeader(writer_cls_name=None, cell_codec_cls_name=None))
    data += wal_bytes(simple_pairs(3))[len(_with_header(WalOptions().header())) :]
    entries, _ = read_all(data)
    assert len(entries) == 3


def test_unknown_writer_class() -> None:
    with pytest.raises(WalUnsupportedError, match="writer class"):
        read_all(_with_header(WalHeader(writer_cls_name="MyWriter")))


def test_bad_magic_and_bad_header() -> None:
    with pytest.raises(WalCorruptError, match="magic"):
        read_all(b"XWAL\x00")
    with pytest.raises(WalCorruptError, match="WALHeader"):
        read_all(MAGIC + b"\x02\x07\x01")  # wire type 7 does not exist


def test_corrupt_entry_names_offset_and_index() -> None:
    data = bytearray(wal_bytes(simple_pairs(5)))
    entries, _ = read_all(bytes(data))
    third = entries[2]
    data[third.offset + 1] = 0x07  # the first WALKey field key gets an invalid wire type
    with pytest.raises(WalCorruptError) as info:
        read_all(bytes(data))
    assert (info.value.offset, info.value.entry_index) == (third.offset, 2)
    assert "test.wal" in str(info.value)


def test_missing_dictionary_entry() -> None:
    data = bytearray(wal_bytes(simple_pairs(3), WalOptions(compression=True)))
    entries, _ = read_all(bytes(data))
    # second entry's region field is a reference (0a 02 00 00): point it at slot 0x1234
    at = bytes(data).index(b"\x0a\x02\x00", entries[1].offset)
    data[at + 2 : at + 4] = b"\x12\x34"
    with pytest.raises(WalCorruptError, match="missing dictionary entry"):
        read_all(bytes(data))


def test_cells_overrunning_the_trailer_are_corrupt() -> None:
    data = bytearray(wal_bytes(simple_pairs(4)))
    entries, _ = read_all(bytes(data))
    last = entries[-1]
    # drop the last byte of the last entry: the trailer is still found, the entry overruns it
    del data[last.offset + last.size - 1]
    with pytest.raises(WalCorruptError, match="trailer"):
        read_all(bytes(data))
