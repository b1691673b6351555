"""What one poll of a large open WAL costs over WebHDFS, as on HDFS: the NameNode knows only
the header of a file still being written, so each poll measures the file by a read and
resumes past the NameNode's length at the DataNode.

Usage: ``python bench/open_wal_poll.py [--mb 100] [--polls 5] [--quick]``

Writes an open (leased, trailer-less) WAL of ``--mb`` megabytes under ``WALs/<server>/``,
served by the embedded WebHDFS with HDFS's lengths; then ``--polls`` times appends about
100 KB of entries and runs a poll: the listing (which measures the open file) and a read of
the new entries from the saved offset. Prints, per poll, the median wall-clock time, the file
bytes the server sent and the requests, beside reading the whole file from its start (what a
poll would cost where the file must be re-read: a gateway without DataNode redirects, or a
dictionary-compressed WAL). Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.wal.model import Cell, CellType, WalKey
from hbase_migrate.wal.names import ServerName, server_dir_name, wal_file_name
from hbase_migrate.wal.reader import WalReader
from hbase_migrate.wal.writer import WalWriter
from minihbase.wal_files import Leases
from minihbase.webhdfs import WebHdfsServer

REGION = b"0123456789abcdef0123456789abcdef"
SERVER = ServerName("rs1.example.com", 16020, 1_700_000_000_000)
CELLS_PER_ENTRY = 10
VALUE = b"v" * 100


def append(writer: WalWriter, first: int, count: int) -> None:
    for i in range(first, first + count):
        ts = 1_700_000_000_000 + i
        writer.append(WalKey(REGION, b"events", i + 1, ts),
                      [Cell(b"row-%010d" % i, b"d", b"q%d" % c, ts, CellType.PUT, VALUE)
                       for c in range(CELLS_PER_ENTRY)])
    writer.flush()


def read_from(url: str, offset: int, index: int) -> tuple[int, int]:
    with WalReader(url, start_offset=offset, start_index=index if offset else None) as reader:
        entries = sum(1 for _ in reader)
        return reader.end_offset, index + entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100, help="size of the open WAL")
    parser.add_argument("--polls", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="a 10 MB file, 3 polls")
    args = parser.parse_args()
    mb, polls = (10, 3) if args.quick else (args.mb, args.polls)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "WALs" / server_dir_name(SERVER) / wal_file_name(SERVER, SERVER.start_code)
        path.parent.mkdir(parents=True)
        leases = Leases()
        writer = WalWriter.create(path)
        writer.flush()
        leases.hold(path, writer.tell())  # HBase's writer reports its header, then hflushes
        entry = len(VALUE) * CELLS_PER_ENTRY + 300
        written = mb * 1_000_000 // entry
        append(writer, 0, written)
        with WebHdfsServer(root, leases=leases) as server:
            store = WebHdfsWalStore(server.url)
            url = store.list_wal_files()[0].path
            t = time.perf_counter()
            offset, index = read_from(url, 0, 0)
            whole = time.perf_counter() - t
            print(f"open WAL of {offset / 1e6:.1f} MB, {index} entries; the NameNode lists "
                  f"{leases.recorded_length(path.stat().st_ino, offset)} bytes")
            times, sent, requests = [], [], []
            for _ in range(polls):
                append(writer, written, 100_000 // entry)
                written += 100_000 // entry
                before_sent, before_requests = server.bytes_sent, sum(server.requests.values())
                t = time.perf_counter()
                listed, = store.list_wal_files()
                offset, index = read_from(url, offset, index)
                times.append(time.perf_counter() - t)
                sent.append(server.bytes_sent - before_sent)
                requests.append(sum(server.requests.values()) - before_requests)
                assert listed.size == offset, (listed.size, offset)
            poll = statistics.median(times)
            print(f"poll (list + read ~100 KB new): {poll * 1000:8.1f} ms, "
                  f"{statistics.median(sent) / 1e6:6.2f} MB sent, "
                  f"{statistics.median(requests):.0f} requests")
            before_sent = server.bytes_sent
            t = time.perf_counter()
            read_from(url, 0, 0)
            again = time.perf_counter() - t
            print(f"re-read from the start:          {again * 1000:8.1f} ms, "
                  f"{(server.bytes_sent - before_sent) / 1e6:6.2f} MB sent "
                  f"(first read {whole * 1000:.0f} ms)")
            print(f"poll / re-read: {poll / again:.3f}x the time")
        writer.close(trailer=False)


if __name__ == "__main__":
    main()
