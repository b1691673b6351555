"""A cluster's admin beyond its data client, as two protocols: :class:`Admin` (snapshots
taken, cloned, restored, listed and deleted, which neither Thrift gateway offers, and a table
dropped) and :class:`Compactor` (the major compaction that drops delete markers: over HBase's
own RPC, ``hbase_migrate.rpc.admin_channel.NativeCompactor``, or a Thrift1 gateway), both
opened by the front door's handle (:meth:`hbase_migrate.hbase.Cluster.admin` and
:meth:`~hbase_migrate.hbase.Cluster.compactor`, over ``hbase_migrate.hbase.admin``'s
``connect_admin`` and ``open_compactor``). :func:`run_shell` runs statements through an
``admin_shell`` (a repair's ``flush`` and ``major_compact``). ``connect_admin`` picks one
of three admin channels by the cluster's config:

* its ``admin_shell`` (``hbase shell -n``, or any command reading hbase shell statements on
  stdin): :class:`ShellAdmin`, here;
* HBase's own RPC, for a cluster whose client is native: ``NativeAdminChannel``
  (``hbase_migrate.rpc.admin_channel``), no JVM;
* else the project's Java helper (``hbase_migrate/jvm/admin``: HBase's client ``Admin``
  API) on a class path resolved from Maven Central, connected through the cluster's
  ZooKeeper quorum and znode parent: :class:`JavaAdmin`, here.

Every failure is one line naming the cluster role, the channel and the operation.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.errors import ClusterError

SHELL_TIMEOUT = 600.0  # seconds an admin operation may take (a flush, a compaction, a clone)
DEFAULT_HBASE_VERSION = "2.6.1"  # the client the Java helper is built against
ADMIN_MODULE = Path(__file__).resolve().parents[1] / "jvm" / "admin"
SHORT_LIVED = ("-XX:TieredStopAtLevel=1", "-Xshare:auto")  # one operation per JVM: start fast
_ILLEGAL = re.compile(r"[^A-Za-z0-9_.-]")


class AdminShellError(ClusterError):
    """A cluster's admin channel could not run, or failed."""


def snapshot_name(migration: str, table: str, t0: int) -> str:
    """``hbase_migrate_<migration>_<table>_<T0>`` in HBase's legal snapshot-name
    characters (letters, digits, ``_``, ``-``, ``.``; others, like a namespace's ``:``,
    become ``_``)."""
    return _ILLEGAL.sub("_", f"hbase_migrate_{migration}_{table}_{t0}")


def run_shell(command: str, statements: str, role: str, what: str,
              timeout: float = SHELL_TIMEOUT) -> str:
    """Run hbase shell ``statements`` through ``command`` (on its stdin, as ``hbase shell
    -n`` reads them); its stdout. One-line errors name the ``role``'s command and ``what``
    it was asked."""
    try:
        done = subprocess.run(shlex.split(command), input=statements, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except (OSError, ValueError) as exc:
        raise AdminShellError(f"{role} admin_shell {command!r}: cannot run it ({exc})") from None
    except subprocess.TimeoutExpired:
        raise AdminShellError(f"{role} admin_shell {command!r}: no end within {timeout:g}s "
                              f"of {what!r}") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())[-300:]
        raise AdminShellError(f"{role} admin_shell {command!r}: {what!r} exited with "
                              f"{done.returncode}: {said}")
    return done.stdout


@dataclass(frozen=True)
class SnapshotInfo:
    """A snapshot as the cluster lists it; times in ms, ``ttl`` in seconds (0: none)."""

    name: str
    table: str
    creation_time: int
    ttl: int


class Admin(Protocol):
    """The admin calls of one cluster (``role``: source or target) that neither Thrift
    gateway offers: snapshots and dropping a table. The steps hold an ``Admin`` from
    :func:`hbase_migrate.hbase.admin.connect_admin`, never a transport's class."""

    role: str

    def snapshot(self, table: str, name: str, ttl_seconds: int) -> None:
        """Take a flushed, online snapshot ``name`` of ``table`` that expires after
        ``ttl_seconds``."""

    def clone(self, name: str, table: str) -> None:
        """Create ``table`` from snapshot ``name``."""

    def restore(self, name: str, table: str) -> None:
        """Replace the content of ``table`` (disabled meanwhile) with snapshot ``name``."""

    def delete(self, name: str) -> None:
        """Delete snapshot ``name`` (its files stay as long as a table links to them)."""

    def snapshots(self, prefix: str) -> list[str]:
        """The names of the snapshots starting with ``prefix``."""

    def drop(self, table: str) -> None:
        """Disable and delete ``table``."""


class Compactor(Protocol):
    """What major-compacts a table so its delete markers drop. ``waits``: the table is
    flushed and major-compacted as a whole and :meth:`compact` returns once that ended
    (HBase's own RPC); else only the regions named are asked to compact (a Thrift1
    gateway), and the caller polls."""

    waits: bool

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's regions by start key."""

    def compact(self, table: str, regions: Sequence[RegionDescriptor], asked: set[bytes]
                ) -> None:
        """Compact ``table`` where ``regions`` are, skipping what ``asked`` holds (each
        compaction asked is added to it: once per table, or once per region)."""


class AdminChannel(Admin):
    """The base of the admin channels below: holds the cluster's ``role``."""

    def __init__(self, role: str) -> None:
        self.role = role


class ShellAdmin(AdminChannel):
    """The channel of a cluster's ``admin_shell`` command."""

    def __init__(self, role: str, command: str) -> None:
        super().__init__(role)
        self.command = command

    def run(self, statements: str, what: str) -> str:
        return run_shell(self.command, statements, self.role, what)

    def snapshot(self, table: str, name: str, ttl_seconds: int) -> None:
        self.run(f"snapshot '{table}', '{name}', {{TTL => {ttl_seconds}}}\n", f"snapshot {name}")

    def clone(self, name: str, table: str) -> None:
        self.run(f"clone_snapshot '{name}', '{table}'\n", f"clone_snapshot {name}")

    def restore(self, name: str, table: str) -> None:
        self.run(f"disable '{table}'\nrestore_snapshot '{name}'\nenable '{table}'\n",
                 f"restore_snapshot {name}")

    def delete(self, name: str) -> None:
        self.run(f"delete_snapshot '{name}'\n", f"delete_snapshot {name}")

    def drop(self, table: str) -> None:
        self.run(f"disable '{table}'\ndrop '{table}'\n", f"drop {table}")

    def snapshots(self, prefix: str) -> list[str]:
        said = self.run(f"list_snapshots '{re.escape(prefix)}.*'\n", "list_snapshots")
        found = re.findall(rf"(?<![\w.-]){re.escape(prefix)}[\w.-]*", said)
        return sorted(set(found))


class JavaAdmin(AdminChannel):
    """The channel of the project's Java helper (HBase's client ``Admin`` API), connected
    through ``zookeeper`` (``host:port,...``) and ``znode_parent``."""

    def __init__(self, role: str, zookeeper: str, znode_parent: str = "/hbase",
                 hbase_version: str = DEFAULT_HBASE_VERSION, heap: str = "256m") -> None:
        super().__init__(role)
        self.zookeeper, self.znode_parent = zookeeper, znode_parent
        self.hbase_version, self.heap = hbase_version, heap

    def call(self, *words: str, timeout: float = SHELL_TIMEOUT) -> Any:
        """Run one operation of the helper; the JSON it printed."""
        from hbase_migrate.jvm.maven import JvmError, java_command, module_classpath

        what = " ".join(words[:2])
        try:
            classpath = module_classpath(ADMIN_MODULE, {"hbase.version": self.hbase_version})
            command = java_command(classpath, "hbasemigrate.admin.SnapshotAdmin",
                                   ["--zookeeper", self.zookeeper, "--znode-parent",
                                    self.znode_parent, *words], heap=self.heap,
                                   jvm_options=SHORT_LIVED)
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                                  check=False)
        except JvmError as exc:
            raise AdminShellError(f"{self.role} admin helper: {exc}") from None
        except subprocess.TimeoutExpired:
            raise AdminShellError(f"{self.role} admin helper (ZooKeeper {self.zookeeper}): no "
                                  f"end within {timeout:g}s of {what!r}") from None
        if done.returncode != 0:
            errors = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR ")]
            said = errors[-1][6:] if errors else " ".join(done.stderr.split())[-300:]
            raise AdminShellError(f"{self.role} admin helper (ZooKeeper {self.zookeeper}"
                                  f"{self.znode_parent}): {what!r} failed: {said}")
        lines = done.stdout.strip().splitlines()
        return json.loads(lines[-1]) if lines else None

    def snapshot(self, table: str, name: str, ttl_seconds: int) -> None:
        self.call("snapshot", table, name, str(ttl_seconds))

    def clone(self, name: str, table: str) -> None:
        self.call("clone", name, table)

    def restore(self, name: str, table: str) -> None:
        self.call("restore", name, table)

    def delete(self, name: str) -> None:
        self.call("delete", name)

    def drop(self, table: str) -> None:
        self.call("drop", table)

    def listed(self, pattern: str) -> list[SnapshotInfo]:
        """The snapshots whose names match the Java regular expression ``pattern``."""
        return [SnapshotInfo(s["name"], s["table"], int(s["creation_time"]), int(s["ttl"]))
                for s in self.call("list", pattern)]

    def snapshots(self, prefix: str) -> list[str]:
        return sorted(s.name for s in self.listed(f"{re.escape(prefix)}.*"))
