"""Replay into Bigtable (the emulator), side by side with the raw write rate of the same puts
through Google's own data client.

Usage: ``python bench/bigtable_replay.py [--size-mb 4] [--quick] [--repeat 2]
[--batch-cells 5000]``

Starts the Bigtable emulator (``cbtemulator``), writes a WAL file with the project's writer
(the entries of ``replay_throughput.py``: one row per entry, two families, about one entry
in ten a delete) and prints:

* cells/s of ``replay_file`` into :class:`~hbase_migrate.bigtable.client.BigtableClient`
  (read, filter, convert, map to mutations with HBase's delete semantics, the markers
  remembered, family deletes read first, ``MutateRows`` acknowledged);
* cells/s of the file's puts alone (built beforehand, untimed) sent by Google's data client
  as ``MutateRows`` requests of the same number of cells, one entry per row;
* their ratio.

Each figure is the best of ``--repeat`` rounds, each into a fresh table. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
import warnings
from pathlib import Path
from unittest import mock

from replay_throughput import FAMILIES, SOURCE_TABLE, make_entries, write_file  # the sibling

from hbase_migrate.bigtable.client import BigtableClient
from hbase_migrate.bigtable.emulator import start_emulator, stop_emulator
from hbase_migrate.cluster.descriptors import FOREVER, FamilyDescriptor, TableDescriptor
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.replay.client_target import ClientTarget
from hbase_migrate.replay.file_replay import ReplaySpec, replay_file
from hbase_migrate.replay.filters import ReplayFilter
from hbase_migrate.wal.model import Cell, CellType

warnings.filterwarnings("ignore", "Connecting to Bigtable emulator")


def fresh_table(client: BigtableClient) -> str:
    table = f"bench-{uuid.uuid4().hex[:8]}"
    client.create_table(TableDescriptor(table, tuple(
        FamilyDescriptor(f, max_versions=FOREVER) for f in FAMILIES)))
    return table


def replay_rate(client: BigtableClient, path: Path, batch: int) -> tuple[int, float]:
    table = fresh_table(client)
    spec = ReplaySpec(ReplayFilter.build([f"{SOURCE_TABLE}={table}"]), batch, 0)
    target = ClientTarget(client, owned=False)
    start = time.perf_counter()
    result = replay_file(str(path), spec, target)
    return sum(result.progress.cells.values()), time.perf_counter() - start


def raw_rate(client: BigtableClient, puts: list[Cell], batch: int) -> tuple[int, float]:
    from google.cloud.bigtable.data import BigtableDataClient, RowMutationEntry, SetCell

    host = str(client.settings.emulator_host)
    with mock.patch.dict(os.environ, {"BIGTABLE_EMULATOR_HOST": host}):  # read when created
        data = BigtableDataClient(project=client.settings.project)
    table = data.get_table(client.settings.instance, fresh_table(client))
    requests = []
    for i in range(0, len(puts), batch):
        rows: dict[bytes, list[SetCell]] = {}
        for c in puts[i:i + batch]:
            rows.setdefault(c.row, []).append(
                SetCell(c.family.decode(), c.qualifier, c.value, c.timestamp * 1000))
        requests.append([RowMutationEntry(r, m) for r, m in rows.items()])
    start = time.perf_counter()
    for entries in requests:
        table.bulk_mutate_rows(entries)
    secs = time.perf_counter() - start
    data.close()
    return len(puts), secs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=4.0)
    parser.add_argument("--quick", action="store_true", help="a 0.5 MB file, one round")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--batch-cells", type=int, default=5000)
    args = parser.parse_args()
    size, repeat = (0.5, 1) if args.quick else (args.size_mb, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        entries = make_entries(int(size * 1024 * 1024))
        path = folder / "wal"
        write_file(path, entries)
        file_bytes = path.stat().st_size
        puts = [c for _, cells in entries for c in cells if c.type == CellType.PUT]
        emulator = start_emulator(folder / "emulator")
        try:
            settings = BigtableSettings("bench", "bench", emulator_host=emulator.host)
            with BigtableClient(settings) as client:
                best_replay = best_raw = 0.0
                cells = 0
                for _ in range(repeat):
                    cells, secs = replay_rate(client, path, args.batch_cells)
                    best_replay = max(best_replay, cells / secs)
                    n, secs = raw_rate(client, puts, args.batch_cells)
                    best_raw = max(best_raw, n / secs)
        finally:
            stop_emulator(folder / "emulator")
    print(f"WAL file: {file_bytes} bytes, "
          f"{cells} cells ({len(puts)} puts), batches of {args.batch_cells} cells")
    print(f"replay_file into BigtableClient: {best_replay:10.0f} cells/s")
    print(f"raw MutateRows of the puts:      {best_raw:10.0f} cells/s")
    print(f"ratio replay / raw:              {best_replay / best_raw:10.2f}")


if __name__ == "__main__":
    main()
