"""What the lifecycle modules on real stacks share (test_hbase1_lifecycle_real,
test_lifecycle_native_real, tests/bigtable/test_faults_real, test_registry_real,
test_snapshot_real, test_principal_real, test_replay_both, test_thrift_http_real,
tests/bigtable/test_both_stacks): the table's families, split keys and rows' history, a live
writer's rounds of puts and every delete kind, a seeded workload, a region server of the table
killed, a stack's ``hbase+rpc://`` URI, and MOB values and the files they go to."""

from __future__ import annotations

import threading
import time
from typing import Any

from hbase_migrate.cluster.descriptors import FamilyDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.storage.walstore import WebHdfsWalStore
from hbase_migrate.rpc.client import NativeClient
from hbase_migrate.wal.model import Cell, CellType
from minihbase.workload import WorkloadSpec, run_workload
from realstack.hbase import RealHBase
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import stack_endpoints

SPLITS = [b"row-0100", b"row-0200"]
META = "1588230740"  # hbase:meta's encoded region name
FAMILIES = (FamilyDescriptor(b"f", max_versions=5), FamilyDescriptor(b"g", max_versions=3))
MOB_THRESHOLD = 100
MOB = FamilyDescriptor(b"m", max_versions=3, mob=True, mob_threshold=MOB_THRESHOLD)


def row(i: int) -> bytes:
    return b"row-%04d" % i


def history(rows: range, ts: int) -> list[Cell]:
    """Three versions of two columns of ``f`` and one of ``g`` for each row."""
    return [Cell(row(i), b"f", q, ts + v, CellType.PUT, b"%d-%s-%d" % (i, q, v))
            for i in rows for q in (b"a", b"b") for v in range(3)] + [
        Cell(row(i), b"g", b"x", ts, CellType.PUT, b"g%d" % i) for i in rows]


def live_round(n: int, ts: int, old: int) -> list[Cell]:
    """Round ``n`` of the live writer at ``ts``: new versions of ten rows, then one delete of
    every type on rows the earlier data (written at ``old``) holds: the version and
    family-version deletes name old versions, so only their markers' arrival is after T0.

    The family-version delete names the oldest version of ``f:a``, the column the rounds add
    versions to. Naming a newer one (``old + 2``) made a loaded run fail: with more rounds,
    a row's ``f:a`` held more versions than ``max_versions``, and the source's HBase 1.4 kept
    the masked version while dropping the two below it (its raw cells after the run), so a
    read there showed one version fewer than the target, which held them all. Which versions
    a flush or compaction keeps then depends on when it ran; a masked oldest version is below
    every visible one, so whatever is dropped, what a read sees is the same."""
    base = (n * 37) % 290
    deletes = [
        Cell(row(base), b"f", b"b", old + 1, CellType.DELETE),
        Cell(row(base + 1), b"f", b"a", ts - 1, CellType.DELETE_COLUMN),
        Cell(row(base + 2), b"g", b"", ts, CellType.DELETE_FAMILY),
        Cell(row(base + 3), b"f", b"", old, CellType.DELETE_FAMILY_VERSION)]
    return [Cell(row(base + k), b"f", b"a", ts, CellType.PUT, b"live-%d-%d" % (n, k))
            for k in range(10)] + deletes


def kill_a_table_server(stack: RealHBase, client: NativeClient, table: str) -> str:
    """Kill a region server holding part of ``table`` (not ``hbase:meta``): the master
    splits its WALs and archives them, unclosed; its name once its regions are elsewhere."""
    info = call_admin(stack.cluster_json, "info", {})
    held = {r.encoded for r in client.regions(table)}
    victim: str = next(s["name"] for s in info["servers"] if s["alive"] and
                       META not in s["regions"] and held & set(s["regions"]))
    call_admin(stack.cluster_json, "kill", {"server": victim})
    call_admin(stack.cluster_json, "finish-split", {})
    deadline = time.monotonic() + 90
    while any(f"{r.host},{r.port},{r.start_code}" == victim for r in client.regions(table)):
        assert time.monotonic() < deadline, f"{victim}'s regions not reassigned"
        time.sleep(0.5)
    return victim


def identity(stack: RealHBase) -> dict[str, Any]:
    """What the tests' own clients of ``stack`` are given: its security, its name."""
    return stack_endpoints(stack).client_auth


def mob_cells(rows: range, ts: int, tag: bytes) -> list[Cell]:
    """Values of the MOB family: 40 bytes on even rows (kept in the store files), 400 on odd
    ones (in MOB files once flushed)."""
    return [Cell(row(i), MOB.name, b"v", ts, CellType.PUT,
                 (tag + b"-%04d-" % i) * (4 if i % 2 == 0 else 40)) for i in rows]


class LiveWriter:
    """Rounds of puts and every delete kind (``live_round``; with ``mob``, values of the MOB
    family too) on the source's ``table`` in a thread, through a native client of its own,
    from ``start()`` until ``stop()`` (20 rounds at least)."""

    def __init__(self, source: RealHBase, table: str, old: int, mob: bool = False) -> None:
        d = source.described
        self.client = NativeClient(d["zookeeper"], d["znode_parent"], max_backoff=1.0,
                                   **identity(source))
        self.table, self.old, self.rounds, self.mob = table, old, 0, mob
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.stopped_at = 0

    def _run(self) -> None:
        while not self.stopping.is_set() or self.rounds < 20:
            now = int(time.time() * 1000)
            self.client.write(self.table, live_round(self.rounds, now, self.old) + (
                mob_cells(range(self.rounds % 290, self.rounds % 290 + 2), now, b"live")
                if self.mob else []))
            self.rounds += 1
            time.sleep(0.05)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> int:
        """Stopped and joined; the time (ms) after its last write."""
        self.stopping.set()
        self.thread.join()
        self.client.close()
        self.stopped_at = int(time.time() * 1000) + 1
        return self.stopped_at


def rpc_uri(stack: RealHBase) -> str:
    """``hbase+rpc://`` naming the stack's live region servers (``host,port,startcode``)."""
    servers = [name.rsplit(",", 1)[0].replace(",", ":")
               for name in call_admin(stack.cluster_json, "info")["region_servers"]]
    return "hbase+rpc://" + ",".join(servers)


def mob_values(rows: range, ts: int, tag: bytes) -> list[Cell]:
    """Even rows 40-byte values (kept in the store files), odd rows 400-byte ones (MOB)."""
    return [Cell(b"mob-%04d" % i, b"m", b"v", ts, CellType.PUT,
                 (tag + b"-%04d-" % i) * (4 if i % 2 == 0 else 40)) for i in rows]


def mob_files(stack: RealHBase, table: str) -> int:
    """The files under the table's MOB folder (``<root>/mobdir/data/default/<table>``), read
    over WebHDFS as the stack's client (with SPNEGO on a Kerberos-secured stack)."""
    found = stack_endpoints(stack)
    client = WebHdfsWalStore(str(found.webhdfs), found.hbase_root or "/hbase",
                             **found.client_auth).client
    folder = f"{stack.described['hbase_root']}/mobdir/data/default/{table}"
    if client.status(folder, strict=False) is None:
        return 0
    return sum(len(files) for _, _, files in client.walk(folder))


def workload(endpoints: ClusterEndpoints, table: str, seed: int, ops: int = 300) -> None:
    """``ops`` operations of the seeded workload (every operation, every delete type) on
    ``table`` of the cluster ``endpoints`` name, the table created when missing."""
    run_workload(endpoints, WorkloadSpec(table, seed, ops))
