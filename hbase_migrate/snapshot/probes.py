"""The clusters' answers :mod:`hbase_migrate.snapshot.choose` asks for, each cheap and
read-only: a WebHDFS status of the HBase root, the NameNode's own access check of the
target's, where the admin calls would go (a shell on PATH, HBase's RPC, or Java and the
helper's class path), the master's version and the tables' descriptors."""

from __future__ import annotations

import shlex
import shutil

from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.config import ClusterSpec
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.source import hdfs_user

STATUS_WAIT = 10.0  # seconds a master has to give its status


class ClusterProbes:
    """:class:`~hbase_migrate.snapshot.choose.Probes` over the clusters themselves."""

    def file_root(self, cluster: ClusterSpec) -> str | None:
        from hbase_migrate.hbase import open_cluster
        from hbase_migrate.snapshot.hbase_method import LAYOUT_FILE, hdfs_root

        handle = open_cluster(cluster)
        root = handle.file_root()
        if root is None:
            return (f"the {cluster.role} cluster {handle.name!r} names no webhdfs URL and "
                    "hbase_root, and the file copy reads and writes HBase roots over WebHDFS")
        try:
            hdfs_root(cluster)
        except HBaseMigrateError as exc:
            if LAYOUT_FILE not in str(exc):
                raise
            return (f"the {cluster.role} cluster {handle.name!r} has no {LAYOUT_FILE} "
                    f"under its HBase root over WebHDFS ({root.url}), so it is no "
                    "HBase that keeps its tables in HFiles there (the embedded cluster "
                    "keeps none) and takes no snapshots to export")
        return None

    def writable_root(self, cluster: ClusterSpec) -> str | None:
        from hbase_migrate.snapshot.export import open_root

        root = open_root(cluster)
        allowed = root.may_write("")
        if allowed is None:  # a NameNode without CHECKACCESS: the permission bits
            allowed = _bits_allow_write(root.status("") or {})
        if allowed:
            return None
        return (f"the target's HBase root ({root.where('')}) is not writable by "
                f"{hdfs_user()}, and the file copy writes archive/ and .hbase-snapshot/ there")

    def admin(self, cluster: ClusterSpec, hbase_version: str) -> str | None:
        if cluster.admin_shell:
            words = shlex.split(cluster.admin_shell)
            if words and shutil.which(words[0]) is None:
                return (f"the {cluster.role}'s admin_shell {cluster.admin_shell!r} is not "
                        "on PATH here, and the file copy takes and clones snapshots with it")
            return None
        from hbase_migrate.hbase import open_cluster

        handle = open_cluster(cluster)
        if handle.reached_natively:
            return None  # HBase's own RPC to the master: no JVM
        endpoints = handle.endpoints
        if endpoints.kerberos or not endpoints.zookeeper:
            return (f"the {cluster.role} cluster {endpoints.name!r} has no admin channel "
                    "for snapshots here (no admin_shell, no HBase RPC, and the Java helper "
                    "needs a ZooKeeper quorum and no Kerberos)")
        return _java_helper(cluster.role, hbase_version)

    def release(self, cluster: ClusterSpec) -> str | None:
        from hbase_migrate.hbase import open_cluster

        status = open_cluster(cluster).master_status(STATUS_WAIT)
        if "error" in status:
            raise HBaseMigrateError(f"its master's status: {status['error']}")
        return str(status.get("version") or "") or None

    def descriptor(self, cluster: ClusterSpec, table: str) -> TableDescriptor | None:
        from hbase_migrate.hbase import open_cluster

        with open_cluster(cluster).client() as client:
            return client.table_descriptor(table) if client.table_exists(table) else None


def _java_helper(role: str, hbase_version: str) -> str | None:
    """Why the Java admin helper cannot run here: no Java 17, or no class path built and no
    Maven to build it."""
    from hbase_migrate.cluster.admin import ADMIN_MODULE
    from hbase_migrate.jvm.maven import JvmError, cached_classpath, find_java, find_maven

    try:
        find_java()
        if cached_classpath(ADMIN_MODULE, {"hbase.version": hbase_version}) is None:
            find_maven()
    except JvmError as exc:
        return f"the {role}'s snapshots need the Java admin helper, which cannot run: {exc}"
    return None


def _bits_allow_write(status: dict[str, object]) -> bool:
    """Whether a folder's owner and octal permission let this user write it: the owner's
    bit for its owner, else the others' (group membership is not known here)."""
    try:
        mode = int(str(status.get("permission", "0")), 8)
    except ValueError:
        return False
    if status.get("owner") == hdfs_user():
        return bool(mode & 0o200)
    return bool(mode & 0o002)
