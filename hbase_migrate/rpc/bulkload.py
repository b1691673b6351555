"""The ``ClientService`` calls of a bulk load (``Client.proto`` of HBase branch-2.6 and
branch-3.0, alike), and :class:`NativeBulkLoad`, the three calls on a cluster::

    PrepareBulkLoadRequest   1 table_name (TableName, required)  2 region (RegionSpecifier)
    PrepareBulkLoadResponse  1 bulk_token (string, required)
    BulkLoadHFileRequest     1 region (RegionSpecifier, required)  2 family_path (repeated)
                             3 assign_seq_num  4 fs_token (DelegationToken)  5 bulk_token
                             6 copy_file (default false)  7 cluster_ids (repeated string)
                             8 replicate (default true)
      FamilyPath             1 family (bytes, required)  2 path (string, required)
    BulkLoadHFileResponse    1 loaded (bool, required)
    DelegationToken          1 identifier  2 password  3 kind (string)  4 service (string)
    CleanupBulkLoadRequest   1 bulk_token (string, required)  2 region (RegionSpecifier)
    CleanupBulkLoadResponse  (empty)

The flow is HBase's ``SecureBulkLoadClient`` (the one every 2.x/3.x client uses, secured or
not): ``PrepareBulkLoad`` on the table's first region makes a staging folder (world-writable,
under the root's ``staging``) and answers its path, the bulk token; the caller puts the files
at ``<token>/<family>/<name>`` (a file already there is neither copied nor renamed by the
region server); ``BulkLoadHFile`` per region moves them into the region's stores, all
families at once; ``CleanupBulkLoad`` deletes the folder.

``BulkLoadHFile`` answers ``loaded: false`` rather than failing when a file no longer fits
the region (split since the files were grouped) and when any step of a secured load fails on
the server (``SecureBulkLoadManager`` logs the cause): the caller lists the regions again,
splits the files that span a new boundary and tries again, a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from hbase_migrate.cluster.descriptors import RegionDescriptor
from hbase_migrate.cluster.schema import table_name_message
from hbase_migrate.errors import Kind
from hbase_migrate.rpc.client import NativeCallError, NativeClient, _Retry
from hbase_migrate.rpc.cluster import region_descriptor
from hbase_migrate.rpc.errors import CALL_FAILURES, RegionNotFoundError
from hbase_migrate.rpc.locate import Region
from hbase_migrate.rpc.messages import region_specifier
from hbase_migrate.wal.protobuf import Message, bytes_field, string_field, varint_field


class FsToken(NamedTuple):
    """A filesystem delegation token for a secured cluster's region server to read the
    files as the caller (Hadoop's ``Token``: identifier, password, kind, service)."""

    identifier: bytes
    password: bytes
    kind: str
    service: str


def prepare_bulk_load_request(table: str, region: bytes | None = None) -> bytes:
    out = bytes_field(1, table_name_message(table))
    return out + bytes_field(2, region_specifier(region)) if region is not None else out


def decode_prepare_bulk_load_response(data: bytes) -> str:
    return Message(data, "PrepareBulkLoadResponse").req_str(1, "bulk_token")


def family_path_message(family: bytes, path: str) -> bytes:
    return bytes_field(1, family) + string_field(2, path)


def fs_token_message(token: FsToken) -> bytes:
    return (bytes_field(1, token.identifier) + bytes_field(2, token.password)
            + string_field(3, token.kind) + string_field(4, token.service))


def bulk_load_hfile_request(region: bytes, family_paths: Sequence[tuple[bytes, str]], *,
                            assign_seq_num: bool, bulk_token: str | None,
                            copy_file: bool = False, fs_token: FsToken | None = None,
                            replicate: bool = True) -> bytes:
    """A ``BulkLoadHFileRequest`` as ``RequestConverter.buildBulkLoadHFileRequest`` sets
    it: ``assign_seq_num``, ``copy_file`` and ``replicate`` always present; no cluster ids
    (those are for replication's own loads)."""
    out = [bytes_field(1, region_specifier(region))]
    out += [bytes_field(2, family_path_message(f, p)) for f, p in family_paths]
    out.append(varint_field(3, int(assign_seq_num)))
    if fs_token is not None:
        out.append(bytes_field(4, fs_token_message(fs_token)))
    if bulk_token is not None:
        out.append(string_field(5, bulk_token))
    out += [varint_field(6, int(copy_file)), varint_field(8, int(replicate))]
    return b"".join(out)


def decode_bulk_load_hfile_response(data: bytes) -> bool:
    return bool(Message(data, "BulkLoadHFileResponse").req_int(1, "loaded"))


def cleanup_bulk_load_request(bulk_token: str, region: bytes | None = None) -> bytes:
    out = string_field(1, bulk_token)
    return out + bytes_field(2, region_specifier(region)) if region is not None else out


class BulkLoadCallError(NativeCallError):
    """One ``BulkLoadHFile`` call that failed: names table, region, server and the files;
    ``kind`` says whether listing the regions again and retrying may help (a region moved,
    split or not served, a server busy or unreachable) or not (``NEVER``)."""

    def __init__(self, table: str, region: Region | None, call: str, reason: str,
                 kind: Kind) -> None:
        super().__init__(table, region, call, reason)
        self.kind = kind


class NativeBulkLoad:
    """The bulk-load calls on the cluster ``client`` reaches (not closed here)."""

    def __init__(self, client: NativeClient) -> None:
        self.client = client

    def regions(self, table: str) -> list[RegionDescriptor]:
        """The table's online regions by start key, as ``hbase:meta`` lists them now."""
        return [region_descriptor(r) for r in self.client.regions(table)]

    def prepare(self, table: str) -> str:
        """A new staging folder for ``table`` (its path, the bulk token), made by the server
        of the table's first region; retried as every call is."""
        def run(region: Region) -> str:
            reply = self.client.pool.get(region.host, region.port).call(
                "PrepareBulkLoad", prepare_bulk_load_request(table, region.name))
            return decode_prepare_bulk_load_response(reply.response or b"")

        return self.client._at_row(table, b"", "PrepareBulkLoad", run)

    def cleanup(self, table: str, bulk_token: str) -> None:
        """Delete the staging folder ``bulk_token`` (what was not loaded with it)."""
        def run(region: Region) -> None:
            self.client.pool.get(region.host, region.port).call(
                "CleanupBulkLoad", cleanup_bulk_load_request(bulk_token, region.name))

        self.client._at_row(table, b"", f"CleanupBulkLoad {bulk_token}", run)

    def load(self, table: str, region: RegionDescriptor,
             family_paths: Sequence[tuple[bytes, str]], bulk_token: str, *,
             assign_seq_num: bool = True, fs_token: FsToken | None = None,
             timeout: float | None = None) -> bool:
        """One ``BulkLoadHFile`` call: the files (``(family, path)``, each under
        ``bulk_token``) into ``region``, all or none; whether the server loaded them.
        A failure is one :class:`BulkLoadCallError` whose ``kind`` says what may help; a
        region it proved gone is forgotten by the client's locator first. ``timeout``:
        seconds the server may take (the server reads every file first; default the
        client's call timeout)."""
        files = ", ".join(p for _, p in family_paths)
        call = f"BulkLoadHFile of {files}"
        where = Region(table, region.start_key, region.end_key, region.region_id,
                       region.region_name, region.server_host, region.server_port,
                       region.server_start_code)
        request = bulk_load_hfile_request(region.region_name, family_paths,
                                          assign_seq_num=assign_seq_num,
                                          bulk_token=bulk_token, fs_token=fs_token)
        try:
            if not where.host:
                raise RegionNotFoundError(f"region {where.encoded} has no server (in "
                                          "transition)", retryable=True)
            server = self.client.pool.get(where.host, where.port)
            reply = server.call("BulkLoadHFile", request, timeout=timeout)
            return decode_bulk_load_hfile_response(reply.response or b"")
        except CALL_FAILURES as exc:
            kind = _Retry(self.client, table, call).kind(exc, where)
            raise BulkLoadCallError(table, where, call, str(exc), kind) from exc
