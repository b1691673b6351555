"""Helpers and hypothesis strategies for the WAL format tests."""

from __future__ import annotations

import io
import random
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import strategies as st

from hbase_migrate.wal.model import Cell, Entry, Tag, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalOptions, WalWriter

LEGACY_SAMPLES = (
    Path(__file__).resolve().parents[2].parent / "shared" / "reference" / ("legacy-hlog-samples")
)

OTHER_CODECS = ("SNAPPY", "LZ4", "BZIP2", "ZSTD", "LZMA", "BROTLI")
ALL_OPTIONS = [
    WalOptions(),
    WalOptions(compression=True),
    WalOptions(compression=True, tag_compression=False),
    WalOptions(compression=True, value_compression="GZ"),
    WalOptions(compression=True, value_compression="NONE"),
    WalOptions(compression=True, tag_compression=False, value_compression="GZ"),
    WalOptions(compression=True, recovered_edits=True),
    *(WalOptions(compression=True, value_compression=name) for name in OTHER_CODECS),
]
OPTION_IDS = [
    "plain",
    "dict",
    "dict-rawtags",
    "dict-gz",
    "dict-none",
    "dict-rawtags-gz",
    "recovered",
    *(f"dict-{name.lower()}" for name in OTHER_CODECS),
]

Pair = tuple[WalKey, tuple[Cell, ...]]


def wal_bytes(
    pairs: Sequence[Pair], options: WalOptions = ALL_OPTIONS[0], *, trailer: bool = True
) -> bytes:
    """A whole WAL file in memory, written by the project's writer."""
    out = io.BytesIO()
    writer = WalWriter(out, options)
    for key, cells in pairs:
        writer.append(key, cells)
    writer.close(trailer=trailer)
    return out.getvalue()


def read_all(data: bytes, **kwargs: object) -> tuple[list[Entry], WalReader]:
    reader = WalReader(io.BytesIO(data), name="test.wal", **kwargs)  # type: ignore[arg-type]
    return list(reader), reader


def pairs_of(entries: Sequence[Entry]) -> list[Pair]:
    return [(e.key, e.cells) for e in entries]


def simple_pairs(n: int, cells_per_entry: int = 3, *, tags: bool = False) -> list[Pair]:
    """Deterministic entries with a few regions, tables, families, qualifiers."""
    pairs = []
    for i in range(n):
        key = WalKey(
            f"{i % 3:032x}".encode(),
            b"ns:t%d" % (i % 2),
            100 + i,
            1_700_000_000_000 + i,
            scopes=((b"f%d" % (i % 2), 1),),
            cluster_ids=(uuid.UUID(int=i + 1),),
            extended_attributes=(("attr", b"v%d" % (i % 4)),) if i % 5 == 0 else (),
        )
        cells = tuple(
            Cell(
                b"row-%05d" % (i * 7 + j),
                b"f%d" % (j % 2),
                b"q%d" % (j % 3) if j % 4 else b"",
                1_700_000_000_000 + i,
                (4, 8, 12, 14, 10)[j % 5],
                b"value-%d" % j * (j % 3),
                (Tag(8, b"\x00\x00\x00\x01"),) if tags and j % 2 else (),
            )
            for j in range(i % (cells_per_entry + 1))
        )
        pairs.append((key, cells))
    return pairs


def binary_pairs(seed: int, n: int) -> list[Pair]:
    """Entries of random binary regions, rows, qualifiers, values, tags, cluster ids and
    attributes, from a seeded generator (the same list for the same seed)."""
    rng = random.Random(seed)

    def some(low: int, high: int) -> bytes:
        return rng.randbytes(rng.randint(low, high))

    regions = [rng.randbytes(32) for _ in range(4)]
    pairs = []
    for i in range(n):
        key = WalKey(
            rng.choice(regions),
            rng.choice([b"t1", b"ns:tab"]),
            100 + i,
            1_700_000_000_000 + i,
            scopes=tuple((b"f%d" % j, 1) for j in range(rng.randint(0, 3))),
            cluster_ids=tuple(
                uuid.UUID(int=rng.getrandbits(128)) for _ in range(rng.randint(0, 2))
            ),
            extended_attributes=(("a", some(0, 200)),) if rng.random() < 0.3 else (),
        )
        cells = tuple(
            Cell(
                some(1, 30),
                rng.choice([b"f", b"cf"]),
                some(0, 10),
                rng.getrandbits(40),
                4,
                some(0, 300),
                (Tag(8, some(1, 4)),) if rng.random() < 0.2 else (),
            )
            for _ in range(rng.randint(0, 6))
        )
        pairs.append((key, cells))
    return pairs


def widened_length_wal() -> tuple[bytes, int, int]:
    """A compressed WAL with GZ values, no trailer, 80 entries; entry #30 holds one cell,
    row ``row01``, family ``f`` (an 18-byte KeyValue key) and a 400 KB run of zeros (a few
    hundred bytes compressed). Its one-byte length prefix is replaced by the 3-byte varint
    of 1 MiB - 1, past the end of the file; the WALKey after it is intact. Returns the
    damaged bytes, the offset of entry #30 and its index."""
    pairs = simple_pairs(80)
    key, _ = pairs[30]
    pairs[30] = (key, (Cell(b"row01", b"f", b"", 1_700_000_000_000, 4, bytes(400_000)),))
    data = wal_bytes(pairs, WalOptions(compression=True, value_compression="GZ"), trailer=False)
    entry = read_all(data)[0][30]
    assert data[entry.offset] < 0x80 and len(data) - entry.offset < 50_000
    damaged = data[: entry.offset] + b"\xff\xff\x3f" + data[entry.offset + 1 :]
    return damaged, entry.offset, 30


# --- hypothesis strategies ----------------------------------------------------------------

small_bytes = st.binary(max_size=12)
nonempty = st.binary(min_size=1, max_size=12)
tags_st = st.lists(st.builds(Tag, st.integers(0, 255), st.binary(max_size=6)), max_size=3).map(
    tuple
)
cells_st = st.builds(
    Cell,
    st.one_of(small_bytes, st.sampled_from([b"r1", b"r2", b"\x00\xff"])),
    st.one_of(st.sampled_from([b"f", b"cf", b"METAFAMILY"]), st.binary(max_size=5)),
    st.one_of(st.sampled_from([b"", b"q", b"qq"]), small_bytes),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([4, 8, 10, 12, 14]),
    st.one_of(st.just(b""), st.binary(max_size=40)),
    tags_st,
)
keys_st = st.builds(
    WalKey,
    st.sampled_from([b"1588230740", b"a" * 32, b"b" * 32, b""]),
    st.sampled_from([b"t1", b"ns:t2", b"hbase:meta"]),
    st.integers(0, 2**63 - 1),
    st.integers(0, 2**63 - 1),
    scopes=st.lists(
        st.tuples(st.sampled_from([b"f", b"cf", b""]), st.integers(0, 2)), max_size=2
    ).map(tuple),
    cluster_ids=st.lists(st.uuids(), max_size=2).map(tuple),
    nonce_group=st.none() | st.integers(-(2**63), 2**63 - 1),
    nonce=st.none() | st.integers(-(2**63), 2**63 - 1),
    orig_sequence=st.none() | st.integers(1, 2**62),
    extended_attributes=st.lists(st.tuples(st.text(max_size=4), small_bytes), max_size=2).map(
        tuple
    ),
)
pairs_st = st.lists(st.tuples(keys_st, st.lists(cells_st, max_size=4).map(tuple)), max_size=6)
options_st = st.builds(
    WalOptions,
    compression=st.booleans(),
    tag_compression=st.booleans(),
    value_compression=st.sampled_from([None, "GZ", "NONE", *OTHER_CODECS]),
    recovered_edits=st.booleans(),
)


@pytest.fixture(scope="session")
def legacy_samples() -> list[Path]:
    samples = sorted(p for p in LEGACY_SAMPLES.glob("*") if p.is_file() and p.suffix != ".md")
    if not samples:
        pytest.skip(f"legacy HLog samples not available (looked in {LEGACY_SAMPLES})")
    return samples
