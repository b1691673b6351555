"""The methods of HBase's RPC services as branch-2.6 declares them
(``hbase-protocol-shaded/src/main/protobuf``: ``service ClientService`` of ``Client.proto``,
``MasterService`` of ``Master.proto``, ``AdminService`` of ``Admin.proto``), in declaration
order: what a client of HBase may send, written out from the .proto files, not from any
server's table."""

from __future__ import annotations

METHODS: dict[str, tuple[str, ...]] = {
    "ClientService": (
        "Get", "Mutate", "Scan", "BulkLoadHFile", "PrepareBulkLoad", "CleanupBulkLoad",
        "ExecService", "ExecRegionServerService", "Multi",
    ),
    "MasterService": (
        "GetSchemaAlterStatus", "GetTableDescriptors", "ListTableDescriptorsByState",
        "GetTableNames", "ListTableNamesByState", "GetClusterStatus", "IsMasterRunning",
        "AddColumn", "DeleteColumn", "ModifyColumn", "MoveRegion", "MergeTableRegions",
        "AssignRegion", "UnassignRegion", "OfflineRegion", "SplitRegion",
        "TruncateRegion", "DeleteTable", "truncateTable", "EnableTable", "DisableTable",
        "ModifyTable", "FlushTable", "CreateTable", "Shutdown", "StopMaster",
        "IsMasterInMaintenanceMode", "Balance", "SetBalancerRunning",
        "IsBalancerEnabled", "SetSplitOrMergeEnabled", "IsSplitOrMergeEnabled",
        "Normalize", "SetNormalizerRunning", "IsNormalizerEnabled", "RunCatalogScan",
        "EnableCatalogJanitor", "IsCatalogJanitorEnabled", "RunCleanerChore",
        "SetCleanerChoreRunning", "IsCleanerChoreEnabled", "ExecMasterService",
        "Snapshot", "GetCompletedSnapshots", "DeleteSnapshot", "IsSnapshotDone",
        "RestoreSnapshot", "SwitchSnapshotCleanup", "IsSnapshotCleanupEnabled",
        "ExecProcedure", "ExecProcedureWithRet", "IsProcedureDone", "ModifyNamespace",
        "CreateNamespace", "DeleteNamespace", "GetNamespaceDescriptor",
        "ListNamespaceDescriptors", "ListTableDescriptorsByNamespace",
        "ListTableNamesByNamespace", "GetTableState", "SetQuota",
        "getLastMajorCompactionTimestamp", "getLastMajorCompactionTimestampForRegion",
        "getProcedureResult", "getSecurityCapabilities", "AbortProcedure",
        "GetProcedures", "GetLocks", "AddReplicationPeer", "RemoveReplicationPeer",
        "EnableReplicationPeer", "DisableReplicationPeer", "GetReplicationPeerConfig",
        "UpdateReplicationPeerConfig", "ListReplicationPeers",
        "IsReplicationPeerEnabled", "ReplicationPeerModificationSwitch",
        "GetReplicationPeerModificationProcedures",
        "IsReplicationPeerModificationEnabled", "ListDecommissionedRegionServers",
        "DecommissionRegionServers", "RecommissionRegionServer",
        "GetSpaceQuotaRegionSizes", "GetQuotaStates", "ClearDeadServers",
        "SwitchRpcThrottle", "IsRpcThrottleEnabled", "SwitchExceedThrottleQuota",
        "Grant", "Revoke", "GetUserPermissions", "HasUserPermissions", "ListNamespaces",
        "GetLogEntries", "ModifyTableStoreFileTracker", "ModifyColumnStoreFileTracker",
        "FlushMasterStore",
    ),
    "AdminService": (
        "GetRegionInfo", "GetStoreFile", "GetOnlineRegion", "OpenRegion",
        "WarmupRegion", "CloseRegion", "FlushRegion", "CompactionSwitch",
        "CompactRegion", "ReplicateWALEntry", "Replay", "RollWALWriter",
        "GetServerInfo", "StopServer", "UpdateFavoredNodes", "UpdateConfiguration",
        "GetRegionLoad", "ClearCompactionQueues", "ClearRegionBlockCache",
        "GetSpaceQuotaSnapshots", "ExecuteProcedures", "GetSlowLogResponses",
        "GetLargeLogResponses", "ClearSlowLogsResponses", "GetLogEntries",
        "GetCachedFilesList",
    ),
}
