"""Simulated region servers: region assignment, sequence ids and real WAL files.

``RegionServers`` is the store's write hook and the cluster's :class:`RegionHost`. Every
logged client edit becomes ONE WAL entry of the hosting server (``<root>/WALs/<server>/``)
written with the project's WAL writer before the store commits: a region-monotonic sequence
id (persisted with the store), ``write_time`` = now, the table, the encoded region name, the
table's non-local families as scopes, the cells as stored. SKIP_WAL edits are not logged.

As in HBase:

* server names are ``localhost,<RPC port>,<start time ms>`` (the slot's RPC port, or
  ``16020 + slot`` without one); a restart gets new start codes. Regions are assigned
  round robin when created; the slot is persisted.
* region open/close write ``HBASE::REGION_EVENT::REGION_OPEN``/``REGION_CLOSE`` markers;
  a close (move, disable, clean shutdown) first flushes a region holding unflushed edits.
* a roll (by size, by period, or asked) closes the file with its trailer, opens the next,
  "flushes" every region with edits in the closed file (START_FLUSH and COMMIT_FLUSH markers
  in the new file), then archives the closed file to ``oldWALs/`` (mtime = now).
* a killed server stops writing (no trailer), its ephemeral znode goes, its directory becomes
  ``WALs/<server>-splitting`` and its regions reopen on the live servers. The master's "log
  split" is simulated by :meth:`RegionServers.finish_split` (or automatically after
  ``split_delay`` seconds): the files are archived to ``oldWALs/``, the directory removed.
  Directories of servers that are not live at start (a crash) are handled the same way.
* the log cleaner deletes archived files older than ``archive_ttl`` (by mtime) unless a
  replication queue names them (:mod:`minihbase.replication`); it can be switched off and
  on (:meth:`RegionServers.cleaner_switch`).
* a bulk load stores cells without WAL entries and writes one ``HBASE::BULK_LOAD`` marker.

A clean :meth:`RegionServers.stop` closes every region, closes each file with its trailer and
archives all of them (``AbstractFSWAL.close``).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hbase_migrate.cluster.descriptors import RegionDescriptor, TableDescriptor
from hbase_migrate.tablename import split_table_name
from hbase_migrate.wal import markers as mk
from hbase_migrate.wal.messages import TableName
from hbase_migrate.wal.model import Cell, WalKey
from hbase_migrate.wal.names import SPLITTING_SUFFIX, ServerName
from hbase_migrate.wal.writer import WalOptions
from minihbase.cluster import now_ms
from minihbase.model import LATEST_TIMESTAMP, Durability, MiniHBaseError, ServerDownError
from minihbase.replication import ReplicationQueues
from minihbase.store import Store
from minihbase.wal_files import OLD_WALS_DIR, WALS_DIR, Leases, ServerWal, archive_file
from minihbase.zkregistry import ZkRegistrar

log = logging.getLogger(__name__)

MiB = 1024 * 1024
JANITOR_INTERVAL = 300.0  # seconds between catalog janitor runs (hbase.catalogjanitor.interval)


@dataclass(frozen=True)
class WalSettings:
    """Region servers and WAL behaviour. Durations are seconds (fractions allowed)."""

    region_servers: int = 2
    roll_size: int = 64 * MiB  # hbase.regionserver.logroll.multiplier x blocksize
    roll_period: float = 3600.0  # hbase.regionserver.logroll.period
    archive_ttl: float = 600.0  # hbase.master.logcleaner.ttl
    cleaner_interval: float = 10.0  # hbase.master.cleaner.interval (HBase: 600 s)
    split_delay: float = 10.0  # a dead server's -splitting dir is archived after this
    options: WalOptions = field(default_factory=WalOptions)
    host: str = "localhost"
    base_port: int = 16020

    def __post_init__(self) -> None:
        if self.region_servers < 1:
            raise ValueError("at least one region server is needed")
        if self.roll_size < 1 or self.roll_period <= 0 or self.archive_ttl < 0:
            raise ValueError("roll size and period must be positive, the TTL not negative")


@dataclass
class RegionServer:
    """One simulated region server."""

    slot: int
    name: ServerName
    wal: ServerWal | None = None
    alive: bool = True
    registrar: ZkRegistrar | None = None
    dirty: dict[str, RegionDescriptor] = field(default_factory=dict)  # unflushed regions

    def live_wal(self) -> ServerWal:
        if self.wal is None or not self.alive:
            raise ServerDownError(f"region server {self.name} is not running")
        return self.wal


def _stores(desc: TableDescriptor) -> tuple[mk.StoreDescriptor, ...]:
    return tuple(mk.StoreDescriptor(f.name, f.name.decode("latin-1")) for f in desc.families)


class RegionServers:
    """K region servers over one store; thread-safe through the store's lock."""

    def __init__(self, store: Store, root: str | Path, settings: WalSettings = WalSettings(),
                 clock: Callable[[], int] = now_ms,
                 registrar_factory: Callable[[], ZkRegistrar] | None = None,
                 replication: ReplicationQueues | None = None, ports: Sequence[int] = ()
                 ) -> None:
        """``ports``: each slot's RPC port (its server name's port); none given: the
        settings' ``base_port + slot``."""
        self.store = store
        self.ports = tuple(ports)
        self.root = Path(root)
        self.settings = settings
        self.clock = clock
        self.lock = store.lock
        self.registrar_factory = registrar_factory
        self.replication = replication
        self.leases = Leases()  # what the WebHDFS endpoint's "NameNode" knows of open files
        self.servers: list[RegionServer] = []
        self._assignment: dict[str, int] = {}
        self._moved: dict[str, tuple[int, int]] = {}  # encoded -> (slot it left, slot now)
        # split parents hbase:meta keeps (offline, split) until the catalog janitor:
        # encoded name -> (parent, its daughters)
        self.split_parents: dict[str, tuple[RegionDescriptor, tuple[RegionDescriptor, ...]]] = {}
        self._next_janitor = 0.0
        self.on_kill: list[Callable[[RegionServer], None]] = []  # told of each killed server
        self.on_restart: list[Callable[[RegionServer], None]] = []  # and of each restarted
        self._seq: dict[str, int] = {}
        self._splitting: dict[Path, float] = {}  # -splitting dir -> archive deadline (ms)
        self._rr = 0
        self._next_clean = 0.0
        self._cleaner_on = True
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.counters: dict[str, int] = {"entries": 0, "rolls": 0, "archived": 0,
                                         "cleaned": 0}

    # --- life cycle ---------------------------------------------------------------------

    def start(self) -> RegionServers:
        with self.lock:
            (self.root / WALS_DIR).mkdir(parents=True, exist_ok=True)
            (self.root / OLD_WALS_DIR).mkdir(parents=True, exist_ok=True)
            start_code = self.clock()
            s = self.settings
            if self.ports and len(self.ports) != s.region_servers:
                raise ValueError(f"{len(self.ports)} RPC ports for {s.region_servers} servers")
            self.servers = [RegionServer(i, ServerName(
                s.host, self.ports[i] if self.ports else s.base_port + i, start_code))
                for i in range(s.region_servers)]
            self._adopt_dead_dirs()
            for server in self.servers:
                self._start_server(server)
            if self.replication is not None:
                self.replication.adopt_dead_queues({s.name for s in self.servers},
                                                   self.servers[0].name)
            for encoded, (slot, seq) in self.store.region_states().items():
                self._seq[encoded] = seq
                self._assignment[encoded] = slot
            for info in self.store.tables():
                if info.enabled:
                    self.regions_opened(info.descriptor, info.regions)
            self._next_clean = self.clock() + s.cleaner_interval * 1000
        self._thread = threading.Thread(target=self._chores, name="minihbase-wal-chores",
                                        daemon=True)
        self._thread.start()
        return self

    def _start_server(self, server: RegionServer) -> None:
        server.wal = ServerWal(self.root, server.name, self.settings.options, self.clock,
                               self.leases)
        if self.replication is not None:
            self.replication.wal_created(server.name, server.wal.name)
        if self.registrar_factory is not None:
            server.registrar = self.registrar_factory()
            server.registrar.register_server(server.name)

    def _adopt_dead_dirs(self) -> None:
        """WAL directories of servers that are not live now belong to dead servers."""
        live = {str(s.name) for s in self.servers}
        deadline = self.clock() + self.settings.split_delay * 1000
        for path in sorted((self.root / WALS_DIR).iterdir()):
            if not path.is_dir() or path.name in live:
                continue
            target = path
            if not path.name.endswith(SPLITTING_SUFFIX):
                target = path.with_name(path.name + SPLITTING_SUFFIX)
                path.rename(target)
            self._splitting[target] = deadline

    def stop(self) -> None:
        """Clean shutdown: close regions, close and archive every WAL, leave ZooKeeper."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        with self.lock:
            for server in self.servers:
                if server.alive and server.wal is not None:
                    self._shutdown_server(server)

    def _shutdown_server(self, server: RegionServer) -> None:
        for encoded in sorted(self._hosted(server)):
            region = self._region(encoded)
            if region is not None:
                self._close_region(server, region)
        wal = server.live_wal()
        wal.close(trailer=True)
        for path in wal.files():
            archive_file(path, self.root)
            self.counters["archived"] += 1
            if self.replication is not None:
                self.replication.wal_closed(server.name, path.name)
        wal.dir.rmdir()
        server.alive = False
        if server.registrar is not None:
            server.registrar.unregister_server(server.name)
            server.registrar.close()
            server.registrar = None

    # --- placement ----------------------------------------------------------------------

    def live_servers(self) -> list[RegionServer]:
        return [s for s in self.servers if s.alive]

    def server(self, ref: str | int) -> RegionServer:
        """A server by slot number or name (``host,port,startcode``)."""
        for s in self.servers:
            if str(ref) in (str(s.slot), str(s.name)):
                return s
        raise MiniHBaseError(f"no region server {ref!r}; servers: "
                             f"{', '.join(str(s.name) for s in self.servers)}")

    def _next_live(self, exclude: RegionServer | None = None) -> RegionServer:
        live = [s for s in self.live_servers() if s is not exclude]
        if not live:
            raise ServerDownError("no live region server left")
        self._rr += 1
        return live[self._rr % len(live)]

    def _host(self, region: RegionDescriptor) -> RegionServer:
        encoded = region.encoded_name
        slot = self._assignment.get(encoded)
        if slot is None or slot >= len(self.servers) or not self.servers[slot].alive:
            slot = self._next_live().slot
            self._assignment[encoded] = slot
            self.store.save_region_state(encoded, slot, self._seq.get(encoded, 0))
        return self.servers[slot]

    def _hosted(self, server: RegionServer) -> list[str]:
        return [e for e, slot in self._assignment.items() if slot == server.slot]

    def _region(self, encoded: str) -> RegionDescriptor | None:
        """The open region (of an enabled table) with this encoded name."""
        for info in self.store.tables():
            for region in info.regions if info.enabled else ():
                if region.encoded_name == encoded:
                    return region
        return None

    def hosted(self, slot: int) -> dict[bytes, RegionDescriptor]:
        """The open regions (of enabled tables) server ``slot`` serves, by full region
        name; none while it is down."""
        with self.lock:
            server = self.servers[slot]
            if not server.alive:
                return {}
            return {r.region_name: r for info in self.store.tables() if info.enabled
                    for r in info.regions if self._host(r) is server}

    def moved_from(self, slot: int, encoded: str) -> ServerName | None:
        """Where a region that server ``slot`` gave away in a move is now (None: it did
        not, or the region moved on since)."""
        with self.lock:
            moved = self._moved.get(encoded)
            if moved is None or moved[0] != slot or self._assignment.get(encoded) != moved[1]:
                return None
            target = self.servers[moved[1]]
            return target.name if target.alive else None

    def server_of(self, region: RegionDescriptor) -> tuple[str, int, int]:
        with self.lock:
            name = self._host(region).name
        return name.host, name.port, name.start_code

    # --- writing ------------------------------------------------------------------------

    def _next_seq(self, encoded: str, slot: int) -> int:
        seq = self._seq.get(encoded, 0) + 1
        self._seq[encoded] = seq
        self.store.save_region_state(encoded, slot, seq)
        return seq

    def _append(self, server: RegionServer, region: RegionDescriptor, cells: Sequence[Cell],
                scopes: tuple[tuple[bytes, int], ...] = (), seq: int | None = None) -> int:
        wal = server.live_wal()
        encoded = region.encoded_name
        seq = seq if seq is not None else self._next_seq(encoded, server.slot)
        key = WalKey(encoded.encode("ascii"), region.table.encode("utf-8"), seq, self.clock(),
                     scopes)
        end = wal.append(key, cells)
        self.counters["entries"] += 1
        if self.replication is not None:
            self.replication.written(server.name, wal.name, end)
        return seq

    def _marker(self, server: RegionServer, region: RegionDescriptor,
                build: Callable[[int], Cell]) -> int:
        """Append a marker entry; ``build`` gets the entry's sequence id."""
        seq = self._next_seq(region.encoded_name, server.slot)
        self._append(server, region, [build(seq)], seq=seq)
        return seq

    def __call__(self, table: str, region: RegionDescriptor, cells: Sequence[Cell],
                 durability: Durability) -> None:
        """The store's write hook: log one client edit (unless SKIP_WAL)."""
        if durability == Durability.SKIP_WAL or not cells:
            return
        with self.lock:
            desc = self.store.table(table).descriptor
            scopes = tuple((f.name, f.scope) for f in desc.families if f.scope)
            server = self._host(region)
            self._append(server, region, cells, scopes)
            server.dirty[region.encoded_name] = region
            wal = server.live_wal()
            if wal.size >= self.settings.roll_size:
                self._roll(server)

    # --- markers ------------------------------------------------------------------------

    def _region_event(self, server: RegionServer, region: RegionDescriptor,
                      event: int) -> None:
        desc = self.store.table(region.table).descriptor
        sn = server.name

        def build(seq: int) -> Cell:
            d = mk.RegionEventDescriptor(event, region.table.encode(), region.encoded_name
                                         .encode(), seq, _stores(desc), sn, region.region_name)
            return mk.region_event_marker(d, self.clock(), start_key=region.start_key)
        self._marker(server, region, build)

    def _flush_region(self, server: RegionServer, region: RegionDescriptor) -> None:
        """START_FLUSH then COMMIT_FLUSH (one new store file per family)."""
        desc = self.store.table(region.table).descriptor
        table, encoded = region.table.encode(), region.encoded_name.encode()
        flush_seq = self._seq.get(region.encoded_name, 0) + 1

        def start(seq: int) -> Cell:
            stores = tuple(mk.StoreFlushDescriptor(f.name, f.name.decode("latin-1"))
                           for f in desc.families)
            d = mk.FlushDescriptor(mk.START_FLUSH, table, encoded, seq, stores,
                                   region.region_name)
            return mk.flush_marker(d, self.clock(), start_key=region.start_key)

        def commit(_: int) -> Cell:
            stores = tuple(mk.StoreFlushDescriptor(f.name, f.name.decode("latin-1"),
                                                   (uuid.uuid4().hex,))
                           for f in desc.families)
            d = mk.FlushDescriptor(mk.COMMIT_FLUSH, table, encoded, flush_seq, stores,
                                   region.region_name)
            return mk.flush_marker(d, self.clock(), start_key=region.start_key)
        self._marker(server, region, start)
        self._marker(server, region, commit)
        server.dirty.pop(region.encoded_name, None)

    def _close_region(self, server: RegionServer, region: RegionDescriptor) -> None:
        if region.encoded_name in server.dirty:
            self._flush_region(server, region)
        self._region_event(server, region, mk.REGION_CLOSE)

    def regions_opened(self, table: TableDescriptor,
                       regions: Sequence[RegionDescriptor]) -> None:
        """Assign (if needed) and open regions: a REGION_OPEN marker each."""
        with self.lock:
            for region in regions:
                self._region_event(self._host(region), region, mk.REGION_OPEN)

    def regions_closed(self, table: TableDescriptor,
                       regions: Sequence[RegionDescriptor]) -> None:
        with self.lock:
            for region in regions:
                self._close_region(self._host(region), region)

    # --- operations ---------------------------------------------------------------------

    def _roll(self, server: RegionServer) -> str:
        wal = server.live_wal()
        old = wal.roll()
        if self.replication is not None:
            self.replication.wal_created(server.name, wal.name)
        for region in list(server.dirty.values()):
            self._flush_region(server, region)
        archive_file(old, self.root)
        self.counters["rolls"] += 1
        self.counters["archived"] += 1
        if self.replication is not None:
            self.replication.wal_closed(server.name, old.name)
        log.debug("rolled %s to %s, archived %s", server.name, wal.name, old.name)
        return old.name

    def roll(self, server: str | int | None = None) -> list[str]:
        """Roll one server's WAL (or every live server's); return the archived names."""
        with self.lock:
            targets = [self.server(server)] if server is not None else self.live_servers()
            return [self._roll(s) for s in targets]

    def _regions_matching(self, table: str | None, region: str | None
                          ) -> list[tuple[RegionServer, RegionDescriptor]]:
        out = []
        for info in self.store.tables():
            if not info.enabled or (table is not None and info.name != table):
                continue
            for r in info.regions:
                if region is None or region in (r.encoded_name, r.region_name.decode("latin-1")):
                    out.append((self._host(r), r))
        if (table or region) and not out:
            raise MiniHBaseError(f"no open region matches table={table!r} region={region!r}")
        return out

    def flush(self, table: str | None = None, region: str | None = None) -> list[str]:
        """Flush regions (all, a table's, or one by encoded name): flush markers for each
        region holding edits, a CANNOT_FLUSH marker for the others. Returns encoded names."""
        with self.lock:
            done = []
            for server, r in self._regions_matching(table, region):
                if r.encoded_name in server.dirty:
                    self._flush_region(server, r)
                else:
                    self._cannot_flush(server, r)
                done.append(r.encoded_name)
            return done

    def _cannot_flush(self, server: RegionServer, region: RegionDescriptor) -> None:
        def build(seq: int) -> Cell:
            d = mk.FlushDescriptor(mk.CANNOT_FLUSH, region.table.encode(),
                                   region.encoded_name.encode(), seq, (), region.region_name)
            return mk.flush_marker(d, self.clock(), start_key=region.start_key)
        self._marker(server, region, build)

    def move(self, region: str, target: str | int | None = None) -> dict[str, str]:
        """Move a region (encoded name) to ``target`` (slot or name; default: another live
        server): flush + REGION_CLOSE on the old server, REGION_OPEN on the new one."""
        with self.lock:
            (source, r), = self._regions_matching(None, region)
            dest = self.server(target) if target is not None else self._next_live(source)
            if not dest.alive or dest is source:
                raise MiniHBaseError(f"cannot move {region} from {source.name} to {dest.name}")
            self._close_region(source, r)
            self._assignment[r.encoded_name] = dest.slot
            self._moved[r.encoded_name] = (source.slot, dest.slot)
            self.store.save_region_state(r.encoded_name, dest.slot, self._seq[r.encoded_name])
            self._region_event(dest, r, mk.REGION_OPEN)
            return {"region": r.encoded_name, "from": str(source.name), "to": str(dest.name)}

    def split(self, region: str, key: bytes) -> dict[str, Any]:
        """Split a region (encoded name) at ``key``: the parent closes (flushed first), its
        two daughters (region id now) open on the parent's server."""
        with self.lock:
            (server, parent), = self._regions_matching(None, region)
            region_id = max(self.clock(), parent.region_id + 1)
            self._close_region(server, parent)
            daughters = self.store.split_region(parent.table, parent.start_key, key, region_id)
            self.split_parents[parent.encoded_name] = (parent, tuple(daughters))
            for daughter in daughters:
                self._assignment[daughter.encoded_name] = server.slot
                self.store.save_region_state(daughter.encoded_name, server.slot, 0)
                self._region_event(server, daughter, mk.REGION_OPEN)
            return {"region": parent.encoded_name, "server": str(server.name),
                    "daughters": [d.encoded_name for d in daughters]}

    def kill(self, server: str | int) -> dict[str, Any]:
        """Crash a server: its WAL stops without trailer, its znode goes, its directory
        becomes ``-splitting``, its regions reopen on the live servers."""
        with self.lock:
            dead = self.server(server)
            if not dead.alive:
                raise MiniHBaseError(f"region server {dead.name} is not running")
            if len(self.live_servers()) < 2:
                raise MiniHBaseError("cannot kill the last live region server")
            wal = dead.live_wal()
            wal.close(trailer=False)
            dead.alive = False
            dead.dirty.clear()
            if dead.registrar is not None:
                dead.registrar.close()  # session ends: the ephemeral rs znode disappears
                dead.registrar = None
            splitting = wal.dir.with_name(wal.dir.name + SPLITTING_SUFFIX)
            wal.dir.rename(splitting)
            self._splitting[splitting] = self.clock() + self.settings.split_delay * 1000
            if self.replication is not None:
                self.replication.server_died(dead.name, self.live_servers()[0].name)
            moved = {}
            for encoded in sorted(self._hosted(dead)):
                r = self._region(encoded)
                if r is not None:
                    moved[encoded] = str(self._host(r).name)
                    self._region_event(self._host(r), r, mk.REGION_OPEN)
            for hook in self.on_kill:
                hook(dead)
            return {"server": str(dead.name), "splitting": splitting.name, "reassigned": moved}

    def restart(self, server: str | int) -> dict[str, Any]:
        """Start a crashed server's slot again, as a restarted HBase region server: a new
        start code (so a new server name and WAL directory), no regions until moved to it."""
        with self.lock:
            back = self.server(server)
            if back.alive:
                raise MiniHBaseError(f"region server {back.name} is running; kill it first")
            old = back.name
            back.name = ServerName(old.host, old.port, max(self.clock(), old.start_code + 1))
            back.alive = True
            self._start_server(back)
            for hook in self.on_restart:
                hook(back)
            return {"server": str(back.name), "was": str(old)}

    def finish_split(self, server: str | None = None) -> list[str]:
        """Finish "splitting" dead servers' WALs: archive their files, drop the directory."""
        with self.lock:
            done = []
            for path in sorted(self._splitting):
                if server is not None and path.name not in (server, server + SPLITTING_SUFFIX):
                    continue
                for f in sorted(path.iterdir()) if path.exists() else []:
                    self.leases.release(f)  # the lease is recovered: the length is final
                    archive_file(f, self.root)
                    self.counters["archived"] += 1
                    done.append(f.name)
                if path.exists():
                    path.rmdir()
                del self._splitting[path]
            return done

    def bulk_load(self, table: str, cells: Iterable[Cell]) -> list[dict[str, Any]]:
        """Store cells as a bulk load does: no WAL entries, one BULK_LOAD marker per region
        naming one store file per family. Cells at LATEST_TIMESTAMP get now."""
        with self.lock:
            info = self.store.table(table)
            now = self.clock()
            by_region: dict[str, tuple[RegionDescriptor, list[Cell]]] = {}
            for given in cells:
                if info.descriptor.family(given.family) is None:
                    raise MiniHBaseError(
                        f"bulk load: no family {given.family!r} in {info.name}")
                c = (given._replace(timestamp=now) if given.timestamp == LATEST_TIMESTAMP
                     else given)
                r = next(r for r in info.regions if r.contains(c.row))
                by_region.setdefault(r.encoded_name, (r, []))[1].append(c)
            with self.store.batch() as batch:
                return [self._bulk_load_region(batch.write, info.name, r, rc)
                        for r, rc in by_region.values()]

    def _bulk_load_region(self, write: Callable[[str, Sequence[Cell]], None], table: str,
                          region: RegionDescriptor, cells: list[Cell]) -> dict[str, Any]:
        write(table, cells)
        server = self._host(region)
        families = sorted({c.family for c in cells})
        namespace, qualifier = split_table_name(table)
        files: dict[bytes, str] = {}

        def build(seq: int) -> Cell:
            stores = []
            for fam in families:
                files[fam] = f"{uuid.uuid4().hex}_SeqId_{seq}_"
                size = sum(len(c.row) + len(c.qualifier) + len(c.value) + 32
                           for c in cells if c.family == fam)
                stores.append(mk.StoreDescriptor(fam, fam.decode("latin-1"), (files[fam],),
                                                 size))
            d = mk.BulkLoadDescriptor(TableName(namespace.encode(), qualifier.encode()),
                                      region.encoded_name.encode(), tuple(stores), seq)
            return mk.bulk_load_marker(d, self.clock(), start_key=region.start_key)
        seq = self._marker(server, region, build)
        return {"region": region.encoded_name, "server": str(server.name), "cells": len(cells),
                "bulkload_seq_num": seq,
                "files": {f.decode("latin-1"): n for f, n in files.items()}}

    # --- background chores --------------------------------------------------------------

    def cleaner_switch(self, on: bool) -> bool:
        """Turn the periodic log cleaner on or off (HBase's ``cleaner_chore_switch``);
        returns whether it was on. A pass under way finishes first."""
        with self.lock:
            was, self._cleaner_on = self._cleaner_on, on
            return was

    def catalog_janitor(self) -> list[str]:
        """HBase's CatalogJanitor: the split parents leave ``hbase:meta`` (the store keeps no
        reference files, so no daughter still needs its parent); their encoded names."""
        with self.lock:
            done = sorted(self.split_parents)
            self.split_parents.clear()
            return done

    def clean(self) -> list[str]:
        """The log cleaner: delete archived WALs older than the TTL and not pinned."""
        with self.lock:
            now = self.clock()
            pinned = self.replication.pinned() if self.replication is not None else set()
            deleted = []
            for path in sorted((self.root / OLD_WALS_DIR).iterdir()):
                if not path.is_file() or path.name in pinned:
                    continue
                age_ms = now - path.stat().st_mtime * 1000
                if age_ms > self.settings.archive_ttl * 1000:
                    path.unlink()
                    deleted.append(path.name)
            self.counters["cleaned"] += len(deleted)
            return deleted

    def _tick(self) -> None:
        now = self.clock()
        s = self.settings
        for server in self.live_servers():
            if server.wal is not None and now - server.wal.created_ms >= s.roll_period * 1000:
                self._roll(server)
        due = [p for p, deadline in self._splitting.items() if deadline <= now]
        for path in due:
            self.finish_split(path.name)
        if now >= self._next_janitor:
            if self._next_janitor:
                self.catalog_janitor()
            self._next_janitor = now + JANITOR_INTERVAL * 1000
        if now >= self._next_clean and self._cleaner_on:
            self.clean()
            self._next_clean = now + s.cleaner_interval * 1000
        if self.replication is not None:
            self.replication.sync()

    def _chores(self) -> None:
        s = self.settings
        wait = max(0.01, min(0.5, s.roll_period / 4, s.cleaner_interval / 2))
        while not self._stop.wait(wait):
            try:
                with self.lock:
                    self._tick()
            except Exception:  # keep the chore alive; the next tick retries
                log.exception("WAL chore failed")

    # --- reporting ----------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        with self.lock:
            servers = [{"name": str(s.name), "slot": s.slot, "alive": s.alive,
                        "wal": s.wal.name if s.alive and s.wal else None,
                        "wal_size": s.wal.size if s.alive and s.wal else None,
                        "regions": sorted(self._hosted(s))} for s in self.servers]
            out: dict[str, Any] = {
                "servers": servers,
                "splitting": sorted(p.name for p in self._splitting),
                "old_wals": len(list((self.root / OLD_WALS_DIR).iterdir())),
                "counters": dict(self.counters),
            }
            if self.replication is not None:
                out["replication"] = {"peer": self.replication.peer_id,
                                      "enabled": self.replication.enabled,
                                      "queues": self.replication.describe()}
            return out

    def sequence_ids(self) -> dict[str, int]:
        with self.lock:
            return dict(self._seq)
