"""The bulk load's ``Client.proto`` messages are the bytes Google's ``protobuf`` package
writes for the same values (``proto_reference``: shapes transcribed by hand from HBase's
``Client.proto``), set as HBase's ``RequestConverter`` sets them; replies it writes decode."""

from __future__ import annotations

import pytest

from hbase_migrate.rpc.bulkload import (
    FsToken,
    bulk_load_hfile_request,
    cleanup_bulk_load_request,
    decode_bulk_load_hfile_response,
    decode_prepare_bulk_load_response,
    prepare_bulk_load_request,
)
from hbase_migrate.wal.protobuf import ProtobufError
from tests.rpc.proto_reference import encode

REGION = b"ns:t,row-5,1700000000000.0123456789abcdef0123456789abcdef."
TOKEN = "hdfs://127.0.0.1:8020/hbase/staging/me__ns_t__4kq0"
SPECIFIER = {"type": 1, "value": REGION}


def test_prepare_names_the_table_and_its_first_region() -> None:
    assert prepare_bulk_load_request("ns:t", REGION) == encode(
        "PrepareBulkLoadRequest", table_name={"namespace": b"ns", "qualifier": b"t"},
        region=SPECIFIER)
    assert prepare_bulk_load_request("t") == encode(
        "PrepareBulkLoadRequest", table_name={"namespace": b"default", "qualifier": b"t"})
    assert decode_prepare_bulk_load_response(
        encode("PrepareBulkLoadResponse", bulk_token=TOKEN)) == TOKEN


def test_bulk_load_request_sets_what_hbase_client_sets() -> None:
    paths = [(b"f", f"{TOKEN}/f/a"), (b"g", f"{TOKEN}/g/b"), (b"f", f"{TOKEN}/f/c")]
    expected = encode(
        "BulkLoadHFileRequest", region=SPECIFIER,
        family_path=[{"family": f, "path": p} for f, p in paths], assign_seq_num=True,
        bulk_token=TOKEN, copy_file=False, replicate=True)
    assert bulk_load_hfile_request(REGION, paths, assign_seq_num=True,
                                   bulk_token=TOKEN) == expected


def test_bulk_load_request_without_token_or_with_a_filesystem_token() -> None:
    assert bulk_load_hfile_request(REGION, [(b"f", "/x")], assign_seq_num=False,
                                   bulk_token=None, copy_file=True) == encode(
        "BulkLoadHFileRequest", region=SPECIFIER, family_path=[{"family": b"f", "path": "/x"}],
        assign_seq_num=False, copy_file=True, replicate=True)
    token = FsToken(b"\x00id", b"pw\xff", "HDFS_DELEGATION_TOKEN", "127.0.0.1:8020")
    assert bulk_load_hfile_request(REGION, [], assign_seq_num=True, bulk_token=TOKEN,
                                   fs_token=token) == encode(
        "BulkLoadHFileRequest", region=SPECIFIER, assign_seq_num=True,
        fs_token={"identifier": b"\x00id", "password": b"pw\xff",
                  "kind": "HDFS_DELEGATION_TOKEN", "service": "127.0.0.1:8020"},
        bulk_token=TOKEN, copy_file=False, replicate=True)


def test_loaded_answer_and_cleanup() -> None:
    assert decode_bulk_load_hfile_response(encode("BulkLoadHFileResponse", loaded=True))
    assert not decode_bulk_load_hfile_response(encode("BulkLoadHFileResponse", loaded=False))
    with pytest.raises(ProtobufError, match="loaded"):
        decode_bulk_load_hfile_response(b"")
    assert cleanup_bulk_load_request(TOKEN, REGION) == encode(
        "CleanupBulkLoadRequest", bulk_token=TOKEN, region=SPECIFIER)
    assert cleanup_bulk_load_request(TOKEN) == encode("CleanupBulkLoadRequest",
                                                      bulk_token=TOKEN)
