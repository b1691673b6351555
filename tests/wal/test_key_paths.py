"""WALKeys in the common layout (region, table, sequence, write time, scopes, count) take the
reader's fast path; every other layout takes the general parser. Both must give the key that
was written."""

from __future__ import annotations

import io
import uuid

import pytest

from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

pytestmark = pytest.mark.usefixtures("both_hot_loops")  # the reference and the compiled hot loops

REGION = b"0123456789abcdef0123456789abcdef"
KEYS = [
    WalKey(REGION, b"t", 1, 1_700_000_000_000),
    WalKey(REGION, b"ns:orders", 2**40, 1_700_000_000_001, scopes=((b"d", 1),)),
    WalKey(REGION, b"t", 3, 1_700_000_000_002, scopes=((b"d", 1), (b"m", 2))),
    WalKey(REGION, b"t" * 300, 4, 1_700_000_000_003),  # two-byte length: general parser
    WalKey(REGION, b"t", 5, 1_700_000_000_004, nonce_group=7, nonce=9, orig_sequence=3),
    WalKey(REGION, b"t", 6, 1_700_000_000_005, cluster_ids=(uuid.UUID(int=12345),),
           extended_attributes=(("k", b"v"),)),
]


@pytest.mark.parametrize("compression", [False, True])
def test_keys_of_every_layout_read_back(compression: bool) -> None:
    buf = io.BytesIO()
    writer = WalWriter(buf, WalOptions(compression=compression))
    for i, key in enumerate(KEYS):
        writer.append(key, [Cell(b"r%d" % i, b"d", b"q", 5, CellType.PUT, b"v")])
    writer.close()
    buf.seek(0)
    read = [entry.key for entry in WalReader(buf, name="keys.wal")]
    assert read == KEYS
