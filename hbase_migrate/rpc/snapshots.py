"""``MasterService`` snapshot calls (``Master.proto``, ``Snapshot.proto`` of HBase
branch-2.6)::

    SnapshotDescription           1 name  2 table (``ns:t``)  3 creation_time (int64 ms)
                                  4 type (DISABLED 0, FLUSH 1 (default), SKIPFLUSH 2)
                                  5 version  6 owner  7 users_and_permissions
                                  8 ttl (int64 s, 0: none)  9 max_file_size
    SnapshotRequest               1 snapshot  2 nonce_group  3 nonce
    SnapshotResponse              1 expected_timeout (int64 ms)  2 proc_id (int64)
    IsSnapshotDoneRequest         1 snapshot         Response  1 done  2 snapshot
    GetCompletedSnapshotsRequest  (empty)            Response  1 snapshots (repeated)
    DeleteSnapshotRequest         1 snapshot         Response  (empty)
    RestoreSnapshotRequest        1 snapshot  2 nonce_group  3 nonce  4 restoreACL
                                  5 customSFT        Response  1 proc_id (required)

Clone and restore are one call, ``RestoreSnapshot``: the description names the snapshot and
the table to fill; the master clones into a table that does not exist and restores one that
does (disabled). A snapshot's TTL is in its description; HBase keeps it as taken.
"""

from __future__ import annotations

from typing import NamedTuple

from hbase_migrate.cluster.admin import SnapshotInfo
from hbase_migrate.rpc.master_calls import Nonce
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, to_int64, varint_field

SNAPSHOT_FLUSH = 1
SNAPSHOT_SKIPFLUSH = 2


def snapshot_description(name: str, table: str = "", ttl: int = 0,
                         kind: int | None = None) -> bytes:
    """A ``SnapshotDescription`` naming the snapshot and, to take, clone or restore, its
    table (``ttl`` in seconds; ``kind`` FLUSH or SKIPFLUSH, else HBase's default, FLUSH)."""
    out = string_field(1, name)
    if table:
        out += string_field(2, table)
    if kind is not None:
        out += varint_field(4, kind)
    if ttl:
        out += varint_field(8, ttl)
    return out


def decode_snapshot_description(data: bytes) -> SnapshotInfo:
    m = Message(data, "SnapshotDescription")
    return SnapshotInfo(m.req_str(1, "name"), m.opt_str(2) or "",
                        to_int64(m.opt_int(3) or 0), to_int64(m.opt_int(8) or 0))


def snapshot_request(description: bytes, nonce: Nonce | None = None) -> bytes:
    out = bytes_field(1, description)
    if nonce is not None:
        out += varint_field(2, nonce.group) + varint_field(3, nonce.nonce)
    return out


class SnapshotStarted(NamedTuple):
    """``SnapshotResponse``: how long the master expects it to take, and its procedure
    (None from masters that take snapshots without one: then poll ``IsSnapshotDone``)."""

    expected_timeout_ms: int
    proc_id: int | None


def decode_snapshot_response(data: bytes) -> SnapshotStarted:
    m = Message(data, "SnapshotResponse")
    proc = m.opt_int(2, "proc_id")
    return SnapshotStarted(to_int64(m.req_int(1, "expected_timeout")),
                           None if proc is None else to_int64(proc))


def described_request(description: bytes) -> bytes:
    """The request of IsSnapshotDone and DeleteSnapshot: just the description."""
    return bytes_field(1, description)


def decode_is_snapshot_done(data: bytes) -> bool:
    return bool(Message(data, "IsSnapshotDoneResponse").opt_int(1, "done"))


def decode_completed_snapshots(data: bytes) -> list[SnapshotInfo]:
    return list(Message(data, "GetCompletedSnapshotsResponse")
                .msgs(1, decode_snapshot_description))


def restore_snapshot_request(description: bytes, nonce: Nonce | None = None,
                             restore_acl: bool = False) -> bytes:
    out = snapshot_request(description, nonce)
    if restore_acl:
        out += varint_field(4, 1)
    return out


def decode_restore_snapshot_response(data: bytes) -> int:
    return Message(data, "RestoreSnapshotResponse").req_int(1, "proc_id")
