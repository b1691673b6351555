"""Reference encodings for the RPC messages' tests, made by Google's ``protobuf`` package
(not by the project's encoder) from message shapes written here by hand from HBase
branch-2.6's ``HBase.proto``, ``Client.proto``, ``Cell.proto``, ``Master.proto``,
``Admin.proto``, ``Snapshot.proto``, ``ClusterStatus.proto`` and ``ErrorHandling.proto``
(only the fields the tests use; nested messages of ``Client.proto`` under their own
names)."""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message_factory import GetMessageClass

# message -> (field name, number, type, label): "?" optional, "!" required, "*" repeated;
# a capitalised type is a message of this file, "enum" a non-negative int32.
SHAPES: dict[str, list[tuple[str, int, str, str]]] = {
    "TableName": [("namespace", 1, "bytes", "!"), ("qualifier", 2, "bytes", "!")],
    "BytesBytesPair": [("first", 1, "bytes", "!"), ("second", 2, "bytes", "!")],
    "NameStringPair": [("name", 1, "string", "!"), ("value", 2, "string", "!")],
    "ColumnFamilySchema": [("name", 1, "bytes", "!"), ("attributes", 2, "BytesBytesPair", "*"),
                           ("configuration", 3, "NameStringPair", "*")],
    "TableSchema": [("table_name", 1, "TableName", "?"),
                    ("attributes", 2, "BytesBytesPair", "*"),
                    ("column_families", 3, "ColumnFamilySchema", "*"),
                    ("configuration", 4, "NameStringPair", "*")],
    "CreateTableRequest": [("table_schema", 1, "TableSchema", "!"),
                           ("split_keys", 2, "bytes", "*"), ("nonce_group", 3, "uint64", "?"),
                           ("nonce", 4, "uint64", "?")],
    "CreateTableResponse": [("proc_id", 1, "uint64", "?")],
    "NamespaceDescriptor": [("name", 1, "bytes", "!"),
                            ("configuration", 2, "NameStringPair", "*")],
    "CreateNamespaceRequest": [("namespaceDescriptor", 1, "NamespaceDescriptor", "!"),
                               ("nonce_group", 2, "uint64", "?"), ("nonce", 3, "uint64", "?")],
    "ListNamespaceDescriptorsResponse": [("namespaceDescriptor", 1, "NamespaceDescriptor",
                                          "*")],
    "GetTableDescriptorsRequest": [("table_names", 1, "TableName", "*"),
                                   ("regex", 2, "string", "?"),
                                   ("include_sys_tables", 3, "bool", "?"),
                                   ("namespace", 4, "string", "?")],
    "NameBytesPair": [("name", 1, "string", "!"), ("value", 2, "bytes", "?")],
    "TimeRange": [("from_", 1, "uint64", "?"), ("to", 2, "uint64", "?")],
    "QualifierValue": [("qualifier", 1, "bytes", "?"), ("value", 2, "bytes", "?"),
                       ("timestamp", 3, "uint64", "?"), ("delete_type", 4, "enum", "?")],
    "ColumnValue": [("family", 1, "bytes", "!"), ("qualifier_value", 2, "QualifierValue", "*")],
    "MutationProto": [("row", 1, "bytes", "?"), ("mutate_type", 2, "enum", "?"),
                      ("column_value", 3, "ColumnValue", "*"), ("timestamp", 4, "uint64", "?"),
                      ("attribute", 5, "NameBytesPair", "*"),
                      ("time_range", 7, "TimeRange", "?"),
                      ("associated_cell_count", 8, "int32", "?")],
    "MutateRequest": [("region", 1, "RegionSpecifier", "!"),
                      ("mutation", 2, "MutationProto", "!"), ("condition", 3, "Condition", "?")],
    "Cell": [("row", 1, "bytes", "?"), ("family", 2, "bytes", "?"),
             ("qualifier", 3, "bytes", "?"), ("timestamp", 4, "uint64", "?"),
             ("cell_type", 5, "enum", "?"), ("value", 6, "bytes", "?")],
    "Result": [("cell", 1, "Cell", "*"), ("associated_cell_count", 2, "int32", "?"),
               ("exists", 3, "bool", "?"), ("stale", 4, "bool", "?")],
    "MutateResponse": [("result", 1, "Result", "?"), ("processed", 2, "bool", "?")],
    "Column": [("family", 1, "bytes", "!"), ("qualifier", 2, "bytes", "*")],
    "Get": [("row", 1, "bytes", "!"), ("column", 2, "Column", "*"), ("filter", 4, "Filter", "?"),
            ("max_versions", 6, "uint32", "?"), ("existence_only", 10, "bool", "?")],
    "GetRequest": [("region", 1, "RegionSpecifier", "!"), ("get", 2, "Get", "!")],
    "GetResponse": [("result", 1, "Result", "?")],
    "Action": [("index", 1, "uint32", "?"), ("mutation", 2, "MutationProto", "?"),
               ("get", 3, "Get", "?")],
    "RegionAction": [("region", 1, "RegionSpecifier", "!"), ("atomic", 2, "bool", "?"),
                     ("action", 3, "Action", "*"), ("condition", 4, "Condition", "?")],
    "MultiRequest": [("regionAction", 1, "RegionAction", "*"),
                     ("condition", 3, "Condition", "?")],
    "ResultOrException": [("index", 1, "uint32", "?"), ("result", 2, "Result", "?"),
                          ("exception", 3, "NameBytesPair", "?")],
    "RegionActionResult": [("resultOrException", 1, "ResultOrException", "*"),
                           ("exception", 2, "NameBytesPair", "?"),
                           ("processed", 3, "bool", "?")],
    "MultiResponse": [("regionActionResult", 1, "RegionActionResult", "*"),
                      ("processed", 2, "bool", "?")],
    "FlushTableRequest": [("table_name", 1, "TableName", "!"),
                          ("column_family", 2, "bytes", "*"), ("nonce_group", 3, "uint64", "?"),
                          ("nonce", 4, "uint64", "?")],
    "FlushTableResponse": [("proc_id", 1, "uint64", "?")],
    "TruncateTableRequest": [("tableName", 1, "TableName", "!"),
                             ("preserveSplits", 2, "bool", "?"),
                             ("nonce_group", 3, "uint64", "?"), ("nonce", 4, "uint64", "?")],
    "TruncateTableResponse": [("proc_id", 1, "uint64", "?")],
    "GetProcedureResultRequest": [("proc_id", 1, "uint64", "!")],
    "GetTableNamesRequest": [("regex", 1, "string", "?"), ("include_sys_tables", 2, "bool", "?"),
                             ("namespace", 3, "string", "?")],
    "GetTableNamesResponse": [("table_names", 1, "TableName", "*")],
    "ProcedureDescription": [("signature", 1, "string", "!"), ("instance", 2, "string", "?"),
                             ("creation_time", 3, "int64", "?"),
                             ("configuration", 4, "NameStringPair", "*")],
    "ExecProcedureRequest": [("procedure", 1, "ProcedureDescription", "!")],
    "ExecProcedureResponse": [("expected_timeout", 1, "int64", "?"),
                              ("return_data", 2, "bytes", "?")],
    "IsProcedureDoneRequest": [("procedure", 1, "ProcedureDescription", "?")],
    "IsProcedureDoneResponse": [("done", 1, "bool", "?"),
                                ("snapshot", 2, "ProcedureDescription", "?")],
    "Filter": [("name", 1, "string", "!"), ("serialized_filter", 2, "bytes", "?")],
    "ByteArrayComparable": [("value", 1, "bytes", "?")],
    "BinaryComparator": [("comparable", 1, "ByteArrayComparable", "!")],
    "CompareFilter": [("compare_op", 1, "enum", "!"), ("comparator", 2, "Comparator", "?")],
    "ValueFilter": [("compare_filter", 1, "CompareFilter", "!")],
    "Comparator": [("name", 1, "string", "!"), ("serialized_comparator", 2, "bytes", "?")],
    "Condition": [("row", 1, "bytes", "!"), ("family", 2, "bytes", "?"),
                  ("qualifier", 3, "bytes", "?"), ("compare_type", 4, "enum", "?"),
                  ("comparator", 5, "Comparator", "?"), ("time_range", 6, "TimeRange", "?")],
    "Scan": [("column", 1, "Column", "*"), ("start_row", 3, "bytes", "?"),
             ("filter", 5, "Filter", "?"), ("batch_size", 9, "uint32", "?")],
    "ScanRequest": [("region", 1, "RegionSpecifier", "?"), ("scan", 2, "Scan", "?"),
                    ("scanner_id", 3, "uint64", "?"), ("number_of_rows", 4, "uint32", "?"),
                    ("close_scanner", 5, "bool", "?"), ("next_call_seq", 6, "uint64", "?"),
                    ("client_handles_partials", 7, "bool", "?"), ("renew", 10, "bool", "?"),
                    ("limit_of_rows", 11, "uint32", "?")],
    "ScanResponse": [("cells_per_result", 1, "uint32", "*"), ("scanner_id", 2, "uint64", "?"),
                     ("more_results", 3, "bool", "?"), ("ttl", 4, "uint32", "?"),
                     ("results", 5, "Result", "*"), ("stale", 6, "bool", "?"),
                     ("partial_flag_per_result", 7, "bool", "*"),
                     ("more_results_in_region", 8, "bool", "?"),
                     ("heartbeat_message", 9, "bool", "?"), ("mvcc_read_point", 11, "uint64", "?")],
    "TableState": [("state", 1, "enum", "!")],
    "GetTableStateResponse": [("table_state", 1, "TableState", "!")],
    "GenericExceptionMessage": [("class_name", 1, "string", "?"), ("message", 2, "string", "?"),
                                ("error_info", 3, "bytes", "?")],
    "ForeignExceptionMessage": [("source", 1, "string", "?"),
                                ("generic_exception", 2, "GenericExceptionMessage", "?")],
    "GetProcedureResultResponse": [("state", 1, "enum", "!"),
                                   ("submitted_time", 2, "uint64", "?"),
                                   ("last_update", 3, "uint64", "?"),
                                   ("result", 4, "bytes", "?"),
                                   ("exception", 5, "ForeignExceptionMessage", "?")],
    "SnapshotDescription": [("name", 1, "string", "!"), ("table", 2, "string", "?"),
                            ("creation_time", 3, "int64", "?"), ("type", 4, "enum", "?"),
                            ("version", 5, "int32", "?"), ("owner", 6, "string", "?"),
                            ("ttl", 8, "int64", "?"), ("max_file_size", 9, "int64", "?")],
    "SnapshotRequest": [("snapshot", 1, "SnapshotDescription", "!"),
                        ("nonce_group", 2, "uint64", "?"), ("nonce", 3, "uint64", "?")],
    "SnapshotResponse": [("expected_timeout", 1, "int64", "!"), ("proc_id", 2, "int64", "?")],
    "GetCompletedSnapshotsResponse": [("snapshots", 1, "SnapshotDescription", "*")],
    "RestoreSnapshotRequest": [("snapshot", 1, "SnapshotDescription", "!"),
                               ("nonce_group", 2, "uint64", "?"), ("nonce", 3, "uint64", "?"),
                               ("restoreACL", 4, "bool", "?")],
    "ServerName": [("host_name", 1, "string", "!"), ("port", 2, "uint32", "?"),
                   ("start_code", 3, "uint64", "?")],
    "RegionSpecifier": [("type", 1, "enum", "!"), ("value", 2, "bytes", "!")],
    "PrepareBulkLoadRequest": [("table_name", 1, "TableName", "!"),
                               ("region", 2, "RegionSpecifier", "?")],
    "PrepareBulkLoadResponse": [("bulk_token", 1, "string", "!")],
    "FamilyPath": [("family", 1, "bytes", "!"), ("path", 2, "string", "!")],
    "DelegationToken": [("identifier", 1, "bytes", "?"), ("password", 2, "bytes", "?"),
                        ("kind", 3, "string", "?"), ("service", 4, "string", "?")],
    "BulkLoadHFileRequest": [("region", 1, "RegionSpecifier", "!"),
                             ("family_path", 2, "FamilyPath", "*"),
                             ("assign_seq_num", 3, "bool", "?"),
                             ("fs_token", 4, "DelegationToken", "?"),
                             ("bulk_token", 5, "string", "?"), ("copy_file", 6, "bool", "?"),
                             ("cluster_ids", 7, "string", "*"), ("replicate", 8, "bool", "?")],
    "BulkLoadHFileResponse": [("loaded", 1, "bool", "!")],
    "CleanupBulkLoadRequest": [("bulk_token", 1, "string", "!"),
                               ("region", 2, "RegionSpecifier", "?")],
    "RegionLoad": [("region_specifier", 1, "RegionSpecifier", "!"), ("stores", 2, "uint32", "?"),
                   ("storefiles", 3, "uint32", "?"), ("mem_store_size_MB", 6, "uint32", "?"),
                   ("read_requests_count", 8, "uint64", "?")],
    "ServerLoad": [("number_of_requests", 1, "uint64", "?"),
                   ("total_number_of_requests", 2, "uint64", "?"),
                   ("used_heap_MB", 3, "uint32", "?"), ("max_heap_MB", 4, "uint32", "?"),
                   ("region_loads", 5, "RegionLoad", "*")],
    "LiveServerInfo": [("server", 1, "ServerName", "!"), ("server_load", 2, "ServerLoad", "!")],
    "HBaseVersionFileContent": [("version", 1, "string", "!")],
    "ClusterId": [("cluster_id", 1, "string", "!")],
    "RegionState": [("state", 2, "enum", "?")],
    "RegionInTransition": [("spec", 1, "RegionSpecifier", "!"),
                           ("region_state", 2, "RegionState", "!")],
    "ClusterStatus": [("hbase_version", 1, "HBaseVersionFileContent", "?"),
                      ("live_servers", 2, "LiveServerInfo", "*"),
                      ("dead_servers", 3, "ServerName", "*"),
                      ("regions_in_transition", 4, "RegionInTransition", "*"),
                      ("cluster_id", 5, "ClusterId", "?"), ("master", 7, "ServerName", "?"),
                      ("backup_masters", 8, "ServerName", "*"),
                      ("balancer_on", 9, "bool", "?")],
    "GetClusterStatusRequest": [("options", 1, "enum", "*")],
    "GetClusterStatusResponse": [("cluster_status", 1, "ClusterStatus", "!")],
    "RegionInfo": [("region_id", 1, "uint64", "!"), ("table_name", 2, "TableName", "!"),
                   ("start_key", 3, "bytes", "?"), ("end_key", 4, "bytes", "?"),
                   ("offline", 5, "bool", "?"), ("split", 6, "bool", "?"),
                   ("replica_id", 7, "int32", "?")],
    "GetRegionInfoRequest": [("region", 1, "RegionSpecifier", "!"),
                             ("compaction_state", 2, "bool", "?")],
    "GetRegionInfoResponse": [("region_info", 1, "RegionInfo", "!"),
                              ("compaction_state", 2, "enum", "?"),
                              ("splittable", 4, "bool", "?")],
    "GetOnlineRegionResponse": [("region_info", 1, "RegionInfo", "*")],
    "FlushRegionRequest": [("region", 1, "RegionSpecifier", "!"),
                           ("if_older_than_ts", 2, "uint64", "?")],
    "FlushRegionResponse": [("last_flush_time", 1, "uint64", "!"), ("flushed", 2, "bool", "?")],
    "CompactRegionRequest": [("region", 1, "RegionSpecifier", "!"), ("major", 2, "bool", "?"),
                             ("family", 3, "bytes", "?")],
    "RollWALWriterResponse": [("region_to_flush", 1, "bytes", "*")],
    "GetRegionLoadRequest": [("table_name", 1, "TableName", "?")],
    "GetRegionLoadResponse": [("region_loads", 1, "RegionLoad", "*")],
}

_T = descriptor_pb2.FieldDescriptorProto
_TYPES = {"bytes": _T.TYPE_BYTES, "string": _T.TYPE_STRING, "uint64": _T.TYPE_UINT64,
          "int64": _T.TYPE_INT64, "uint32": _T.TYPE_UINT32, "int32": _T.TYPE_INT32,
          "bool": _T.TYPE_BOOL, "enum": _T.TYPE_INT32}
_LABELS = {"?": _T.LABEL_OPTIONAL, "!": _T.LABEL_REQUIRED, "*": _T.LABEL_REPEATED}


def _pool() -> descriptor_pool.DescriptorPool:
    proto = descriptor_pb2.FileDescriptorProto(name="hbase_admin_reference.proto",
                                               package="hbase.pb", syntax="proto2")
    for name, fields in SHAPES.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, label in fields:
            f = message.field.add(name=field, number=number, label=_LABELS[label])
            if kind in _TYPES:
                f.type = _TYPES[kind]
            else:
                f.type, f.type_name = _T.TYPE_MESSAGE, f".hbase.pb.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return pool


_POOL = _pool()


def message(kind: str, /, **fields: Any) -> Any:
    """A message of the reference schema, its fields set (sub-messages as dicts)."""
    cls = GetMessageClass(_POOL.FindMessageTypeByName(f"hbase.pb.{kind}"))
    return _fill(cls(), fields)


def _fill(msg: Any, fields: dict[str, Any]) -> Any:
    for key, value in fields.items():
        target = getattr(msg, key)
        if isinstance(value, dict):
            _fill(target, value)
        elif isinstance(value, list):  # repeated: dicts are messages
            for item in value:
                if isinstance(item, dict):
                    _fill(target.add(), item)
                else:
                    target.append(item)
        else:
            setattr(msg, key, value)
    return msg


def encode(kind: str, /, **fields: Any) -> bytes:
    return bytes(message(kind, **fields).SerializeToString())


def decode(kind: str, data: bytes) -> Any:
    msg = message(kind)
    msg.ParseFromString(data)
    return msg
