"""The validation's per-cell work on one side, before and after the compiled range digest,
side by side in one run: decoding an RPC scan's cell blocks (``rpc.codec.decode_cells``,
the compiled decoder when built) and digesting the rows (``ranges.stats.digest_rows``) by
the pure-Python reference (main's path) and by the compiled loop (``ranges/_digest.pyx``).

Usage: ``python bench/range_digest.py [--cells 200000 2000000] [--block 10000]``

Synthetic cells as a scan returns them: rows ``r%09d`` of four cells (family ``f``,
qualifiers ``q0``..``q3``), 50-byte values, timestamps of one second, encoded once into
cell blocks of ``--block`` cells (the scan responses' size); the run cycles over 200,000
cells' worth of blocks so memory stays flat at any count. Each block is decoded and cut into
rows, as ``rpc.scan.decode_scan_response`` does, and the rows are streamed to the digest.
Prints CPU microseconds per cell (``time.process_time``) of decode alone, of decode + the
reference digest, of decode + the compiled digest, the ratio of the digests' own parts,
and the process's peak resident memory after each count. Checks that both digests agree
(they must, byte for byte); asserts nothing else.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Iterator

from hbase_migrate.ranges.keyrange import KeyRange
from hbase_migrate.ranges.stats import DIGEST, digest_rows
from hbase_migrate.rpc.codec import decode_cells, encode_cell_block
from hbase_migrate.wal.model import Cell

PER_ROW = 4
DISTINCT = 200_000  # cells encoded once, cycled over


def blocks(block: int) -> list[bytes]:
    out = []
    for first in range(0, DISTINCT, block):
        cells = [Cell(b"r%09d" % (n // PER_ROW), b"f", b"q%d" % (n % PER_ROW),
                      1_700_000_000_000 + n, 4, (b"%050d" % n)[:50])
                 for n in range(first, first + block)]
        out.append(encode_cell_block(cells))
    return out


def rows(encoded: list[bytes], block: int, total: int) -> Iterator[tuple[Cell, ...]]:
    done = 0
    while done < total:
        for data in encoded:
            cells, _ = decode_cells(data, 0, block)
            for at in range(0, block, PER_ROW):
                yield cells[at:at + PER_ROW]
            done += block
            if done >= total:
                return


def run(encoded: list[bytes], block: int, total: int, digest: str | None) -> tuple[float, str]:
    if digest is not None:
        DIGEST.use("compiled" if digest == "compiled" else "python")
    start = time.process_time()
    if digest is None:
        for _ in rows(encoded, block, total):
            pass
        found = ""
    else:
        found = digest_rows(KeyRange("t"), rows(encoded, block, total)).digest
    return (time.process_time() - start) * 1e6 / total, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[200_000, 2_000_000])
    parser.add_argument("--block", type=int, default=10_000)
    args = parser.parse_args()
    if DISTINCT % args.block or args.block % PER_ROW:
        parser.error(f"--block must divide {DISTINCT} and be a multiple of {PER_ROW}")
    if DIGEST.module is None:
        parser.error("the compiled range digest is not built (make setup builds it)")
    encoded = blocks(args.block)
    print(f"{'cells':>10} {'decode':>8} {'+digest py':>11} {'+digest C':>10} "
          f"{'digest py':>10} {'digest C':>9} {'ratio':>6} {'peak MB':>8}  (CPU us/cell)")
    for total in args.cells:
        decode, _ = run(encoded, args.block, total, None)
        before, reference = run(encoded, args.block, total, "python")
        after, compiled = run(encoded, args.block, total, "compiled")
        if reference != compiled:
            raise SystemExit(f"digests differ at {total} cells: {reference} {compiled}")
        print(f"{total:>10} {decode:>8.3f} {before:>11.3f} {after:>10.3f} "
              f"{before - decode:>10.3f} {after - decode:>9.3f} "
              f"{(before - decode) / (after - decode):>5.1f}x {peak_mb():>8.0f}")
    print(f"peak MB: the process's peak resident memory so far ({DISTINCT} cells' blocks held)")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
