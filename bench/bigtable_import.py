"""Google's Bigtable importer beside the project's copy, the same table into the Bigtable
emulator.

Usage: ``python bench/bigtable_import.py [--cells 100000] [--parts 4]``

The source is the embedded cluster: one table of ``--cells`` cells (rows of ten columns in one
family keeping three versions, two versions each, 100-byte values). Then:

* **the project**: ``prepare`` and the scan copy (``snapshot``, in-process) into the
  emulator's instance ``ours``; the copy's wall and CPU seconds (this process's: the
  embedded source serves from it too);
* **Google**: the ``import`` job of ``bigtable-beam-import`` 2.20.0 (a Beam pipeline; its
  shaded jar, copied from Maven Central with ``mvn dependency:copy``, and the DirectRunner it
  leaves out, class path of ``bench/bigtable_import``) into
  instance ``theirs`` (its table made by ``prepare`` of a second migration: the same
  families and splits). It reads the table as HBase's ``Export`` job writes it, ``--parts``
  SequenceFiles of ``ImmutableBytesWritable`` -> ``Result`` (``ResultSerialization``: each
  Result a length-delimited protobuf); this script writes them from a scan of the source
  beforehand, untimed (HBase's ``Export`` is a MapReduce job against a running HBase). The
  java process's wall and CPU seconds, and apart the same job importing one row into
  instance ``fixed`` (the JVM's and the pipeline's fixed cost).

Both tables are read back with Google's Python client and compared with the source cell for
cell. Google's snapshot importer (``importsnapshot``) is not run: it refuses a snapshot folder
outside a GCS bucket ("Snapshot folder must be hosted in a GCS bucket"), which the emulator
cannot stand in for. Prints figures and the ratio; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path

from hbase_migrate import lifecycle
from hbase_migrate.bigtable.emulator import start_emulator, stop_emulator
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.jvm.maven import cache_root, find_maven, java_command, module_classpath
from hbase_migrate.rpc.messages import Result, result_message
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from hbase_migrate.wal.protobuf import encode_varint
from minihbase.server import MiniHBase

warnings.filterwarnings("ignore", "Connecting to Bigtable emulator")
MODULE = Path(__file__).with_name("bigtable_import")
TABLE = "orders"
KEY_CLASS = b"org.apache.hadoop.hbase.io.ImmutableBytesWritable"
VALUE_CLASS = b"org.apache.hadoop.hbase.client.Result"
SYNC_EVERY = 2000  # bytes between sync markers, as Hadoop's writer (100 x 20)
CellKey = tuple[bytes, bytes, bytes, int, bytes]
IMPORTER = "com.google.cloud.bigtable:bigtable-beam-import:2.20.0:jar:shaded"


def importer_jar() -> Path:
    """Google's shaded importer jar, copied once from Maven Central."""
    folder = cache_root("jvm") / "bigtable-beam-import-2.20.0"
    jar = folder / "bigtable-beam-import-2.20.0-shaded.jar"
    if not jar.is_file():
        subprocess.run([find_maven(), "-q", "-B", "dependency:copy", f"-Dartifact={IMPORTER}",
                        f"-DoutputDirectory={folder}"], check=True, timeout=1800)
    return jar


def load(client: Thrift2Client, cells: int) -> None:
    """``cells`` cells: rows of ten columns, two versions each."""
    client.create_table(TableDescriptor(TABLE, (FamilyDescriptor(b"f", max_versions=3),)),
                        [b"row-%08d" % (cells // 20 * k // 4) for k in range(1, 4)])
    batch: list[Cell] = []
    for n in range(cells):
        row, rest = divmod(n, 20)
        column, version = divmod(rest, 2)
        batch.append(Cell(b"row-%08d" % row, b"f", b"c%d" % column, 1_700_000_000_000 + version,
                          CellType.PUT, (b"%08d" % n) * 12 + b"...."))
        if len(batch) == 20_000:
            client.write_cells(TABLE, batch)
            batch = []
    if batch:
        client.write_cells(TABLE, batch)


def _text(value: bytes) -> bytes:
    return encode_varint(len(value)) + value  # Hadoop's Text.writeString (names < 128 bytes)


def write_sequence_file(path: Path, rows: Iterator[list[Cell]]) -> None:
    """An uncompressed SequenceFile (version 6) of ``rows`` as ``Export`` writes them."""
    sync = os.urandom(16)
    with path.open("wb") as out:
        out.write(b"SEQ\x06" + _text(KEY_CLASS) + _text(VALUE_CLASS) + b"\x00\x00" +
                  struct.pack(">i", 0) + sync)
        last = out.tell()
        for cells in rows:
            if out.tell() - last >= SYNC_EVERY:
                out.write(struct.pack(">i", -1) + sync)
                last = out.tell()
            key = struct.pack(">i", len(cells[0].row)) + cells[0].row
            message = result_message(Result(tuple(cells)))
            value = encode_varint(len(message)) + message
            out.write(struct.pack(">ii", len(key) + len(value), len(key)) + key + value)


def export_files(client: Thrift2Client, folder: Path, parts: int) -> list[Path]:
    """The source table as ``parts`` SequenceFiles, rows dealt round-robin."""
    rows: dict[bytes, list[Cell]] = {}
    for piece in client.scan(TABLE):
        for cell in piece:
            rows.setdefault(cell.row, []).append(cell)
    ordered = [rows[r] for r in sorted(rows)]
    paths = [folder / f"part-{i:05d}" for i in range(parts)]
    for i, path in enumerate(paths):
        write_sequence_file(path, iter(ordered[i::parts]))
    return paths


def configure(folder: Path, cluster: MiniHBase, host: str, instance: str) -> Path:
    path = folder / f"{instance}.toml"
    path.write_text(
        f'[migration]\nname = "{instance}"\nledger = "sqlite:///{folder / instance}.db"\n'
        f'[source]\ncluster_json = "{cluster.write_cluster_json()}"\n'
        f'[[tables]]\nsource = "{TABLE}"\n[spark]\nmaster = "{IN_PROCESS}"\n'
        f'[target]\nkind = "bigtable"\nproject = "proj"\ninstance = "{instance}"\n'
        f'emulator_host = "{host}"\n', encoding="utf-8")
    return path


def timed_java(command: Sequence[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of a java run (the bench stops if it failed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).splitlines()[-5:])
        raise SystemExit(f"the importer failed ({done.returncode}):\n{tail}")
    return wall, cpu


def read_back(host: str, instance: str) -> set[CellKey]:
    """Every cell of the table, with Google's Python client."""
    from google.cloud import bigtable

    os.environ["BIGTABLE_EMULATOR_HOST"] = host
    table = bigtable.Client(project="proj", admin=True).instance(instance).table(TABLE)
    return {(row.row_key, family.encode(), qualifier, round(c.timestamp.timestamp() * 1000),
             c.value) for row in table.read_rows() for family, columns in row.cells.items()
            for qualifier, cells in columns.items() for c in cells}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--parts", type=int, default=4)
    args = parser.parse_args()
    classpath = [str(importer_jar()), *module_classpath(MODULE)]
    with tempfile.TemporaryDirectory(prefix="bigtable-import-") as tmp:
        folder = Path(tmp)
        emulator = start_emulator(folder / "emulator")
        try:
            with MiniHBase(folder / "src", "source") as cluster, \
                    Thrift2Client(cluster.endpoints.thrift2 or "") as client:
                load(client, args.cells)
                source = {(c.row, c.family, c.qualifier, c.timestamp, c.value)
                          for piece in client.scan(TABLE) for c in piece}
                files = export_files(client, folder, args.parts)
                size = sum(p.stat().st_size for p in files)
                (folder / "one").mkdir()
                write_sequence_file(folder / "one" / "part-00000", client.scan(
                    TABLE, b"", b"row-00000000\0"))
                ours, *others = (load_config(configure(folder, cluster, emulator.host, name))
                                 for name in ("ours", "theirs", "fixed"))
                for spec in (ours, *others):
                    lifecycle.prepare(spec)
                start, cpu = time.perf_counter(), time.process_time()
                copied = lifecycle.snapshot(ours).metrics["cells"]
                copy_s, copy_cpu = time.perf_counter() - start, time.process_time() - cpu
            env = {**os.environ, "BIGTABLE_EMULATOR_HOST": emulator.host}

            def importer(instance: str, files: Path) -> list[str]:
                return java_command(classpath, "com.google.cloud.bigtable.beam.Main", [
                    "import", "--runner=DirectRunner", "--project=proj",
                    "--bigtableProject=proj", f"--bigtableInstanceId={instance}",
                    f"--bigtableTableId={TABLE}", f"--sourcePattern={files}/part-*"],
                    heap="2g")

            fixed_s, fixed_cpu = timed_java(importer("fixed", folder / "one"), env)
            import_s, import_cpu = timed_java(importer("theirs", folder), env)
            equal = {name: read_back(emulator.host, name) == source
                     for name in ("ours", "theirs")}
        finally:
            stop_emulator(folder / "emulator")
    print(f"{len(source):,} cells ({size / 1e6:.1f} MB as Export's SequenceFiles, "
          f"{args.parts} files); load average {os.getloadavg()[0]:.1f}")
    print(f"project scan copy:       {copy_s:7.1f} s  {copied / copy_s:9,.0f} cells/s  "
          f"CPU {copy_cpu:.1f} s  equal to the source: {equal['ours']}")
    print(f"Google import (Direct):  {import_s:7.1f} s  {len(source) / import_s:9,.0f} "
          f"cells/s  CPU {import_cpu:.1f} s  equal to the source: {equal['theirs']}")
    print(f"  its fixed cost:        {fixed_s:7.1f} s (the job importing one row, CPU "
          f"{fixed_cpu:.1f} s)")
    print(f"ratio (Google's seconds / the project's): {import_s / copy_s:.2f}x; without "
          f"its fixed cost {(import_s - fixed_s) / copy_s:.2f}x; CPU "
          f"{import_cpu / copy_cpu:.2f}x, without its fixed cost "
          f"{(import_cpu - fixed_cpu) / copy_cpu:.2f}x")


if __name__ == "__main__":
    main()
