"""WAL reader and ``wal stats`` throughput and memory, side by side with a minimal framing walk.

Usage: ``python bench/wal_read.py [--size-mb 200] [--quick] [--repeat 2]``

Generates WAL files in a temporary folder, of two shapes: the benchmark's entries (1-10
cells of 60-140-byte values) and small entries (1-8 cells of 5-30-byte values), each
uncompressed, dictionary-compressed and compressed with tags; and, at a tenth of the size,
the benchmark's entries with each value codec. Reads each with ``WalReader`` and with
``count_file`` (what ``wal stats`` runs per file), with the compiled hot loops and, marked
``[python]``, the pure-Python reference ones, and reports cells/s and MB/s next to a
minimal loop that only walks the uncompressed KeyValue framing of the same shape with
``struct`` (no objects), and their ratios; then the peak RSS of a child process reading a
1x and a 10x larger file. Rates are CPU seconds of this process (a shared machine's waits
left out), each the best of ``--repeat`` rounds in which all runs take turns. Asserts
nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hbase_migrate.wal import hotloops
from hbase_migrate.wal.model import Cell, Tag, WalKey
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.stats import count_file
from hbase_migrate.wal.walkey import kv_count_only
from hbase_migrate.wal.writer import WalOptions, WalWriter

CHUNK = 1 << 20
_KV = struct.Struct(">iiiH").unpack_from


def generate(path: Path, size: int, options: WalOptions, *, tags: bool, seed: int = 7,
             small: bool = False) -> int:
    """Write realistic entries until the file reaches ``size`` bytes; return the cell count.
    ``small``: 1-8 cells per entry, values of 5-30 bytes."""
    rng = random.Random(seed)
    cells_per_entry, value_sizes = ((1, 8), (5, 30)) if small else ((1, 10), (60, 140))
    families = [b"cf", b"d", b"meta"]
    qualifiers = [b"name", b"email", b"ts", b"count", b"payload", b"status"]
    regions = [f"{rng.getrandbits(128):032x}".encode() for _ in range(8)]
    cells = 0
    seq = 1
    with path.open("wb") as f:
        writer = WalWriter(f, options)
        while writer.tell() < size:
            n = rng.randint(*cells_per_entry)
            batch = []
            for _ in range(n):
                row = b"user%016d" % rng.randrange(10**12) + b"-" * rng.randint(0, 20)
                value = rng.randbytes(rng.randint(*value_sizes))
                tag = (Tag(8, b"\x00\x00\x00\x00\x00\x01\x51\x80"),) if tags else ()
                batch.append(
                    Cell(
                        row,
                        rng.choice(families),
                        rng.choice(qualifiers),
                        1_700_000_000_000 + seq,
                        4,
                        value,
                        tag,
                    )
                )
            key = WalKey(
                rng.choice(regions), b"ns:users", seq, 1_700_000_000_000 + seq, scopes=((b"cf", 1),)
            )
            writer.append(key, batch)
            seq += 1
            cells += n
        writer.close()
    return cells


def minimal_walk(path: Path) -> int:
    """Walk entries and KeyValue framing of an uncompressed WAL: lengths only, no objects."""
    cells = 0
    with path.open("rb") as f:
        data = f.read(CHUNK)
        pos = 5 + data[4]  # magic, one-byte header length, header
        while True:
            if len(data) - pos < 16 << 10:
                more = f.read(CHUNK)
                data = data[pos:] + more
                pos = 0
            if pos >= len(data) - 8:
                return cells
            key_len = data[pos]
            if key_len >= 0x80:
                key_len = (key_len & 0x7F) | data[pos + 1] << 7
                pos += 1
            start = pos + 1
            pos = start + key_len
            for _ in range(kv_count_only(data, start, pos)):
                total, klen, vlen, rlen = _KV(data, pos)
                flen = data[pos + 14 + rlen]
                _ = (pos + 15 + rlen + flen, pos + 12 + klen + vlen)
                pos += 4 + total
                cells += 1


def read_all(path: Path) -> int:
    cells = 0
    with WalReader(str(path)) as reader:
        for entry in reader:
            cells += len(entry.cells)
    return cells


def stats_all(path: Path) -> int:
    stats = count_file(str(path))
    if stats.error:
        raise RuntimeError(stats.error)
    return stats.cells + sum(stats.markers.values())


def pure(fn: Callable[[Path], int]) -> Callable[[Path], int]:
    """``fn`` run with the pure-Python hot loops."""

    def run(path: Path) -> int:
        before = hotloops.implementation()
        hotloops.use("python")
        try:
            return fn(path)
        finally:
            hotloops.use(before)

    return run


def timed_rounds(
    runs: list[tuple[str, Callable[[Path], int], Path]], repeat: int
) -> dict[str, float]:
    """Best CPU seconds of each run over ``repeat`` rounds. The runs take turns within a
    round, so a slow spell of a shared machine hits them alike, not one figure."""
    best = dict.fromkeys((label for label, _, _ in runs), float("inf"))
    for _ in range(repeat):
        for label, fn, path in runs:
            t0 = time.process_time()
            fn(path)
            best[label] = min(best[label], time.process_time() - t0)
    return best


def peak_rss_mb(path: Path) -> tuple[float, float]:
    """Peak RSS of a fresh child process that reads ``path``: (getrusage, VmHWM) in MB.

    Linux carries the parent's high-water mark into ``ru_maxrss`` across the exec, so the
    child also reports its own ``VmHWM``, which belongs to the new process image only.
    """
    code = (
        "import resource, sys\n"
        "from hbase_migrate.wal.reader import WalReader\n"
        "n = sum(len(e.cells) for e in WalReader(sys.argv[1]))\n"
        "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, (hwm or ['0'])[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    maxrss, hwm = out.stdout.split()
    return int(maxrss) / 1024, int(hwm) / 1024


def tenfold(src: Path, dst: Path) -> None:
    """An uncompressed WAL 10x larger: the same entries repeated (each stands alone)."""
    with WalReader(str(src)) as reader:
        first = next(iter(reader)).offset
        for _ in reader:
            pass
        end = reader.end_offset
    with src.open("rb") as f, dst.open("wb") as out:
        out.write(f.read(first))
        for _ in range(10):
            f.seek(first)
            left = end - first
            while left:
                chunk = f.read(min(CHUNK, left))
                out.write(chunk)
                left -= len(chunk)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--quick", action="store_true", help="tiny smoke size (2 MB)")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (best run is kept)")
    args = parser.parse_args()
    size = int((2 if args.quick else args.size_mb) * (1 << 20))
    kinds = [
        (f"{shape}{name}", options, tags, shape == "small ")
        for shape in ("", "small ")
        for name, options, tags in (
            ("uncompressed", WalOptions(), False),
            ("compressed", WalOptions(compression=True), False),
            ("compressed+tags", WalOptions(compression=True), True),
        )
    ]
    codecs = [(f"value {name}", WalOptions(compression=True, value_compression=name), False,
               False) for name in ("GZ", "SNAPPY", "LZ4", "ZSTD", "BZIP2", "LZMA", "BROTLI")]
    with tempfile.TemporaryDirectory(prefix="wal-bench-") as tmp:
        folder = Path(tmp)
        paths, cells, written = {}, {}, {}
        for name, options, tags, small in kinds + codecs:
            paths[name] = folder / name.replace(" ", "-")
            t0 = time.perf_counter()
            part = size // 10 if name.startswith("value") else size
            cells[name] = generate(paths[name], part, options, tags=tags, small=small)
            written[name] = time.perf_counter() - t0
        runs: list[tuple[str, Callable[[Path], int], Path]] = [
            ("minimal walk", minimal_walk, paths["uncompressed"]),
            ("small minimal walk", minimal_walk, paths["small uncompressed"]),
        ]
        for name, *_ in kinds + codecs:
            runs += [(name, read_all, paths[name]), (f"{name} stats", stats_all, paths[name])]
            if hotloops.implementation() == "compiled" and not name.startswith("value"):
                runs += [(f"{name} [python]", pure(read_all), paths[name]),
                         (f"{name} [python] stats", pure(stats_all), paths[name])]
        print(f"hot loops: {hotloops.implementation()}")
        best = timed_rounds(runs, args.repeat)
        base = {"": cells["uncompressed"] / best["minimal walk"],
                "small ": cells["small uncompressed"] / best["small minimal walk"]}
        print(f"{'file':<32}{'MB':>7}{'cells':>10}{'reader/s':>11}{'MB/s':>7}{'vs min':>8}"
              f"{'stats/s':>11}{'vs min':>8}")
        for label, _, path in runs:
            if label.endswith(" stats"):
                continue
            mb = path.stat().st_size / (1 << 20)
            if label.endswith("minimal walk"):
                name = label.replace("minimal walk", "uncompressed")
                rate = cells[name] / best[label]
                print(f"{label:<32}{mb:>7.1f}{cells[name]:>10}{rate:>11,.0f}"
                      f"{mb / best[label]:>7.1f}{1:>8.2f}")
                continue
            minimal = base["small " if label.startswith("small") else ""]
            n = cells[label.removesuffix(" [python]")]
            rate = n / best[label]
            stats_rate = n / best[f"{label} stats"]
            print(f"{label:<32}{mb:>7.1f}{n:>10}{rate:>11,.0f}"
                  f"{mb / best[label]:>7.1f}{rate / minimal:>8.2f}{stats_rate:>11,.0f}"
                  f"{stats_rate / minimal:>8.2f}")
        big = folder / "uncompressed-10x"
        tenfold(paths["uncompressed"], big)
        for label, path in (("1x", paths["uncompressed"]), ("10x", big)):
            maxrss, hwm = peak_rss_mb(path)
            print(
                f"peak RSS reading {label} ({path.stat().st_size / (1 << 20):.0f} MB): "
                f"VmHWM {hwm:.1f} MB, ru_maxrss {maxrss:.1f} MB"
            )
        os.sync()


if __name__ == "__main__":
    main()
