"""What to do about each error the tool prints: the troubleshooting page's groups and remedies,
keyed by error class (``scripts/gen_reference.py`` adds each class's own docstring as the
cause). ``tests/docs/`` fails when an ``HBaseMigrateError`` subclass has no entry here."""

from __future__ import annotations

INTRO = """
No command prints a traceback: an error escaping a command is **one line** (what, and where:
file, byte offset, table, range, endpoint, principal) with exit code **2** for the project's
own errors and **1** for anything unexpected, whose traceback goes to a file named in that
line (`$HBASE_MIGRATE_LOG_DIR`, default the temp folder) or to the screen with `-v`.
`replay` and `status` exit **3** when a WAL gap is open; `validate` exits **1** when ranges
still differ; `cutover check` exits **1** on no-go. `kill -USR1 <pid>` prints the threads'
stacks of any running `hbase-migrate` command.

Find the line you got under *Find your message* (or search the page for its words): every
message the code gives is there, leading to its entry. Each entry shows what it says,
**Cause** (the error's own description) and **Remedy** (what to do). The page is generated
from the sources: a new error class without a remedy fails the docs tests.

Outages are not errors at first: a run that finds a gateway, WebHDFS, ZooKeeper, a PostgreSQL
ledger or the Kafka brokers unreachable waits (1 s doubling to 30 s), records an `outage`
step, and goes on by itself; only after `[replay] outage_tolerance` does it end with one of
the *unreachable* errors below.
"""

GROUPS: list[tuple[str, str, list[str]]] = [
    ("Configuration and input", "A file, a value or a name given to the tool is wrong; "
     "nothing was written.",
     ["HBaseMigrateError", "ConfigError", "InvalidTableNameError", "StepRefusedError",
      "WorkFolderError", "SplitKeysError", "StepInterrupted", "Stopped"]),
    ("Tables and schema", "A table or a column family is missing or different on one side.",
     ["MissingSchemaError", "MissingTableError", "MissingFamilyError", "MissingTargetError",
      "SchemaMismatchError"]),
    ("Reaching the clusters", "A gateway, WebHDFS, ZooKeeper or a region server did not "
     "answer, or refused a call.",
     ["ClusterError", "ServiceUnreachableError", "GatewayUnreachableError",
      "WebHdfsUnreachableError", "NameNodeError", "NameNodeUnreachableError",
      "ZooKeeperUnreachableError",
      "ZooKeeperNeverAnsweredError",
      "ZkPayloadError",
      "Thrift1Error", "Thrift1UnreachableError", "Thrift2Error", "Thrift2UnreachableError",
      "PutTimeoutError", "ScanFailedError", "RegionsInTransitionError", "TargetUnavailableError",
      "OutageTooLongError", "NeverAnsweredError", "MigrationLockedError", "AdminShellError"]),
    ("HBase's native RPC", "Errors of the client that speaks HBase's own protobuf RPC to the "
     "master and region servers.",
     ["RpcError", "RpcFrameError", "RemoteError", "RpcConnectionError", "RpcTimeoutError",
      "RegionNotFoundError", "NativeCallError", "NativeUnreachableError", "BulkLoadCallError",
      "AdminCallError",
      "_NoMaster", "RegistryError"]),
    ("Kerberos", "Logins and handshakes of secured clusters.",
     ["KerberosError", "Krb5ConfConflict", "SaslError", "RpcTlsError"]),
    ("WAL files", "A WAL file that cannot be read; the line names the file and the byte "
     "offset.",
     ["WalError", "WalSourceError", "WalUnsupportedError", "WalEmptyError", "WalCorruptError",
      "CellCorruptError", "ValueDecodeError", "MissingEntryError", "MarkerError",
      "ProtobufError", "BadCall"]),
    ("HFiles", "An HFile (a store file of a table or a snapshot) that cannot be read, or "
     "cells an HFile cannot be written with; the line names the file and the block's byte "
     "offset, or the cell.",
     ["HFileError", "HFileCorruptError", "HFileUnsupportedError", "HFileWriteError"]),
    ("Replay", "A WAL file that cannot be replayed as asked; nothing after its position was "
     "recorded, and the next run starts there again.",
     ["ReplayError", "UnknownCellTypeError", "MarkerReadError", "InexpressibleMutationError",
      "ReplayWriteError", "BulkWindowError", "BulkLoadError", "SpillError",
      "SpillSpaceError"]),
    ("Copy and validation", "The snapshot copy (scan or HBase snapshots) and the range work "
     "of copy and checksums.",
     ["RangeError", "SnapshotExportError", "SnapshotMethodError", "SnapshotManifestError",
      "JvmError", "ExecutorError", "TaskRefused", "TailError"]),
    ("The ledger", "The audit ledger database and the facts it refuses to lose.",
     ["LedgerError", "LedgerOpenError", "LedgerUnreachableError", "LedgerFullError",
      "LedgerSchemaError", "LedgerMissingError", "LedgerForeignError",
      "MigrationMismatchError", "MigrationStateError", "WalStateError"]),
    ("The CDC stream", "Kafka brokers and topics; offsets already acknowledged are kept.",
     ["KafkaUnavailableError", "KafkaTopicError", "KafkaRefusedError", "KafkaDeliveryError"]),
    ("Local stacks (Airflow, embedded, real)", "What `airflow up`, `make run`, the embedded "
     "cluster and `realstack` start on this machine.",
     ["AirflowStackError", "PortTakenError", "PgServerError", "RedisError", "EmbeddedStackError",
      "RealStackError", "TaskKillError"]),
    ("Bigtable as a target", "A migration to Google Cloud Bigtable (`hbase-migrate bigtable`) "
     "and its local emulator.",
     ["BigtableError", "BigtableUnreachableError", "BigtablePreflightError",
      "BigtableEmulatorError"]),
    ("Answers of the embedded cluster", "`minihbase` answers as HBase would; a client of the "
     "project prints these as the gateway's refusal.",
     ["MiniHBaseError", "ServerDownError", "TableNotFoundError", "TableExistsError",
      "NamespaceNotFoundError", "NamespaceExistError", "TableStateError", "TableDisabledError",
      "NoSuchFamilyError", "IllegalArgumentError", "IllegalSplitError"]),
]

_RETRY = "Rerun the step: it resumes where the ledger says and redoes nothing already done."
_UNREACHABLE = ("Check that the service named in the line runs and is reachable from this host "
                "(`hbase-migrate cluster info --config M.toml` probes every endpoint); the "
                "run waits outages out up to `[replay] outage_tolerance`. " + _RETRY)

REMEDIES: dict[str, str] = {
    "HBaseMigrateError": "The base of all the project's errors; the line says what and where.",
    "ConfigError": "Fix the file, key or option the line names (it says what was expected); "
                   "see [Migration file keys](reference/config.md). Check a file with "
                   "`hbase-migrate ledger info --config M.toml`.",
    "InvalidTableNameError": "Use a name HBase accepts: `[namespace:]qualifier` of letters, "
                             "digits, `_`, `-` and `.`, not starting with `.` or `-`.",
    "StepRefusedError": "Run the earlier steps first (`prepare`, then `snapshot`); "
                        "`hbase-migrate status --config M.toml` shows the migration's state.",
    "WorkFolderError": "Give a new or empty folder, or stop the other run using it.",
    "SplitKeysError": "Give distinct, non-empty split keys.",
    "StepInterrupted": "Nothing to repair: run the same command again; it goes on from what "
                       "the ledger holds (exit code 130).",
    "Stopped": "A piece of work ended because the step was stopped; the step's own line says "
               "what was kept. Run the same command again.",
    "MissingSchemaError": "Create the table or family on the side named, or fix `[[tables]]`.",
    "MissingTableError": "Create the table on the side named (on the target: `hbase-migrate "
                         "prepare --config M.toml`), or fix the name in `[[tables]]`.",
    "MissingFamilyError": "Add the family on that side (`alter` in the hbase shell), or remove "
                          "it from `families`.",
    "MissingTargetError": "Run `prepare` (it creates the target tables with every family), or "
                          "fix the table mapping.",
    "SchemaMismatchError": "Drop or rename the target table you made by hand (after checking "
                           "it holds nothing you need) and run `prepare`, or alter its "
                           "families to match the source's.",
    "ClusterError": _UNREACHABLE,
    "ServiceUnreachableError": _UNREACHABLE,
    "GatewayUnreachableError": "Start the Thrift gateway named (`hbase thrift start`, "
                               "`hbase thrift2 start`) or fix `thrift`/`thrift2`. " + _RETRY,
    "WebHdfsUnreachableError": "Check the NameNode (safe mode, a standby answering: point "
                               "`webhdfs` at the active one or an HttpFS gateway). " + _RETRY,
    "NameNodeError": "Check `namenode` (the active NameNode's RPC `host:port`, "
                     "`fs.defaultFS`'s) and that this host reaches it; on a Kerberos-secured "
                     "cluster leave `namenode` unset (store files are then read over "
                     "WebHDFS). " + _RETRY,
    "NameNodeUnreachableError": "Check that the NameNode named by `namenode` is up and "
                                "active and that this host reaches its RPC port. " + _RETRY,
    "ZooKeeperUnreachableError": "Check the quorum and `znode_parent`. Replay goes on without "
                                 "ZooKeeper (retention then unknown); commands that need it "
                                 "wait.",
    "ZooKeeperNeverAnsweredError": "Fix `zookeeper` (host and port) of the cluster named, in the "
                                   "config or its `cluster.json`, or start the quorum; nothing "
                                   "was retried, so the command failed at once.",
    "ZkPayloadError": "The znode named is not what HBase writes there: check `znode_parent` "
                      "(another application's tree?).",
    "Thrift1Error": "Read the gateway's reason in the line; fix what it names (table state, "
                    "permissions), then rerun.",
    "Thrift1UnreachableError": "Start the Thrift1 gateway (`hbase thrift start`) or fix "
                               "`thrift`. " + _RETRY,
    "Thrift2Error": "Read the gateway's reason in the line; fix what it names (table state, "
                    "permissions, region server down), then rerun.",
    "Thrift2UnreachableError": "Start the Thrift2 gateway (`hbase thrift2 start`) or fix "
                               "`thrift2`. " + _RETRY,
    "PutTimeoutError": "Raise `[gateway] call_timeout` or lower `[gateway] max_put_bytes`; "
                       "check the target region server holding the row.",
    "ScanFailedError": "Raise `[gateway] call_timeout` (or `timeout_retries`), or lower "
                       "`[gateway] max_result_bytes`, as the line says; check the region "
                       "server of the range.",
    "RegionsInTransitionError": "Wait for the split, merge or move to finish (the master's UI "
                                "lists regions in transition), or raise `[gateway] "
                                "region_wait`; then rerun.",
    "TargetUnavailableError": "Bring back what the line names (the target's Thrift gateway, "
                              "its region servers or ZooKeeper, the Kafka brokers) or fix "
                              "its endpoint. Every offset the target acknowledged is kept. "
                              + _RETRY,
    "OutageTooLongError": "Bring the service back, then rerun; raise `[replay] "
                          "outage_tolerance` to wait longer.",
    "NeverAnsweredError": "The endpoint never answered: check host and port in the config or "
                          "`cluster.json`.",
    "MigrationLockedError": "Another replay (or CDC run) of this migration holds its lock: "
                            "let it finish, or stop it; `--lock-timeout` waits longer.",
    "AdminShellError": "Run the `admin_shell` command by hand on that host to see why (HBase "
                       "installed, a Kerberos ticket held), or remove it to use the Java "
                       "helper.",
    "RpcError": "Read the call and server in the line; check that server's log.",
    "RpcFrameError": "Something other than an HBase server answers on that port, or the "
                     "connection was cut mid-reply: check the endpoint. " + _RETRY,
    "RemoteError": "HBase refused the call: the Java exception class in the line says why "
                   "(a `TableNotFoundException`, an `AccessDeniedException`); fix that.",
    "RpcConnectionError": "Check that the server named runs and its port is reachable. " + _RETRY,
    "RegistryError": "Name, in the cluster's `uri = \"hbase+rpc://...\"`, region servers or "
                     "masters of an HBase 2.5+ cluster with their RPC ports (16020, 16000 by "
                     "default), reachable from here; an older cluster has no RPC registry: "
                     "give it by `zookeeper` instead. " + _RETRY,
    "NativeUnreachableError": "Check that the region server or master named runs and that its "
                              "RPC port (16020, 16000 by default) is reachable from here. "
                              + _RETRY,
    "SaslError": "Match the cluster's security to the servers': `hbase_principal` as HBase's "
                 "`hbase.regionserver.kerberos.principal` (`hbase_master_principal` as "
                 "`hbase.master.kerberos.principal` where it differs), and `rpc_protection` "
                 "to a level "
                 "the servers' `hbase.rpc.protection` offers; a server that answers with "
                 "SIMPLE is unsecured (`auth = \"none\"`).",
    "RpcTlsError": "Match the cluster's TLS settings to the servers': `rpc_tls` as their "
                   "`hbase.server.netty.tls.enabled`, `tls_ca_file` the CA that signed their "
                   "keystore's certificate, `tls_cert_file`/`tls_key_file` a certificate "
                   "their truststore's CA signed; a name mismatch: reach the servers by a "
                   "name their certificates carry.",
    "RpcTimeoutError": "The server is overloaded or stuck; check its log and rerun.",
    "RegionNotFoundError": "The table has no region serving that row yet (a region in "
                           "transition, or the table is disabled): wait and rerun, or enable "
                           "the table.",
    "NativeCallError": "Read the table, region and server in the line; check that region "
                       "server's log; rerun once it serves the region.",
    "AdminCallError": "Read HBase's exception in the line (a snapshot that exists, a "
                      "namespace missing, permissions) and fix that.",
    "_NoMaster": "Start the master, or wait for a backup master to take over.",
    "KerberosError": "Do what the line says: `kinit` (no or expired ticket), fix `principal` "
                     "or `keytab` (`klist -kt KEYTAB` lists its principals), sync the clock "
                     "with the KDC, set `qop` to the gateways' `hbase.thrift.security.qop`; "
                     "see [Secure clusters](guides/security.md).",
    "Krb5ConfConflict": "Make the two `krb5_conf` files describe the realm the same way, or "
                        "give both clusters one file.",
    "WalError": "See the file and offset in the line.",
    "WalSourceError": "The storage (NameNode, a DataNode) refused the read: the file is "
                      "marked `failed` and read again on the next run; check HDFS if it "
                      "repeats.",
    "WalUnsupportedError": "The file is of a kind the reader refuses by name (a legacy "
                           "HLog, an encrypted WAL, a custom codec, LZO): migrate these "
                           "tables' edits another way, e.g. re-copy their ranges after the "
                           "writes stop.",
    "WalEmptyError": "Nothing to do: an empty WAL holds no edits and is skipped with this "
                     "reason.",
    "WalCorruptError": "Keep the file for analysis (`hbase-migrate wal dump FILE` shows the "
                       "entries before the offset). The file fails; validation then finds the "
                       "ranges that miss its edits and `validate --repair` re-copies them.",
    "CellCorruptError": "As for a corrupt WAL: keep the file, repair the ranges through "
                        "validation.",
    "ValueDecodeError": "Check `hbase.regionserver.wal.value.compression.type`; a damaged "
                        "file: as for a corrupt WAL.",
    "MissingEntryError": "A dictionary-compressed file read from a wrong offset or damaged: "
                         "as for a corrupt WAL.",
    "MarkerError": "A damaged marker: as for a corrupt WAL.",
    "ProtobufError": "A damaged file or znode: as for a corrupt WAL.",
    "BadCall": "Served by the embedded cluster to a client whose call it could not read: the "
               "client gets HBase's remote exception for it; check the client's framing.",
    "BulkLoadCallError": "One BulkLoadHFile call: the bulk load lists the regions again "
                         "and retries it when the region moved, split or was busy; a "
                         "refusal retrying cannot cure (no such family, access denied) "
                         "ends the load: see the region server's log for the files named.",
    "HFileError": "See the file and offset in the line.",
    "HFileCorruptError": "Keep the file for analysis (`hbase-migrate hfile info FILE` reads "
                         "its trailer); read the table from a new snapshot, or validate it "
                         "by a live scan.",
    "HFileUnsupportedError": "The file is of a kind the reader refuses by name (an "
                             "encoding, a compression, encryption, an old format): validate "
                             "that table by a live scan.",
    "HFileWriteError": "The cells were given out of order, of another family than the "
                       "file's, or over HBase's limits: the line names the cell; sort the "
                       "cells as a scan returns them, one family a file.",
    "BulkWindowError": "A WAL edit of the window names a family the target table lacks: "
                       "create the family on the target (`hbase-migrate prepare`) or leave "
                       "the family out of the migration's tables.",
    "BulkLoadError": "Read the last failure named for each file: a region that kept "
                     "refusing them (\"did not load them\": the region server's log says "
                     "why, e.g. a file it cannot read or a family it lacks) or a call that "
                     "kept failing. What was loaded stays loaded and the staging folder is "
                     "removed; load the files named again once the cause is gone. From "
                     "a replay run (`[replay] bulk`): none of the WAL files named was "
                     "recorded as replayed, so run the replay again once the cause is gone "
                     "(or with `bulk = \"never\"` to write them through the target's "
                     "write path).",
    "SpillError": "The folder a bulk replay's window writes its sorted runs and files in "
                  "(`TMPDIR`) failed as the line says (removed under the run, unreadable): "
                  "mend it or point `TMPDIR` elsewhere, then run the same command; none of "
                  "the window's WAL files was recorded as replayed.",
    "SpillSpaceError": "The folder a bulk replay's window spills its sorted runs to "
                       "(`TMPDIR`) has not the room the line names for the next one: free "
                       "that much there, point `TMPDIR` to a larger folder, or lower "
                       "`[replay] bulk_window` (a window spills what it holds past "
                       "`[replay] bulk_memory`); none of the window's WAL files was recorded "
                       "as replayed, so run the replay again once there is room.",
    "TailError": "A region wrote after the source's snapshot but is not in it (split or "
                 "merged meanwhile): validate again, from a new snapshot or by a live scan.",
    "ReplayError": "Read the file and reason in the line; the next run starts at the same "
                   "offset.",
    "UnknownCellTypeError": "The WAL holds a cell type HBase's public types lack: keep the "
                            "file and repair its ranges through validation.",
    "MarkerReadError": "The region of a bulk load is unknown: run `validate --repair` on "
                       "the table to re-copy what differs.",
    "InexpressibleMutationError": "Give the target a Thrift2 gateway (exact deletes), or allow "
                                  "the approximation with `[replay] allow_lossy_deletes = "
                                  "true` (counted in the ledger).",
    "ReplayWriteError": "Check the target (region servers, quotas); rerun: the file resumes "
                        "at its last acknowledged offset.",
    "RangeError": "Read the range in the line; rerun the step (done ranges are skipped).",
    "ExecutorError": "The line names the executor and what it lacks, and for its Python the "
                     "setting that mends it: a Python of the driver's minor version with "
                     "pyspark of the driver's version (`--conf spark.pyspark.python=PATH`, "
                     "or `\"spark.pyspark.python\"` in `[spark] conf`; `[spark] python` for "
                     "one with the project installed), the project (leave `[spark] python` "
                     "unset to ship it), or a route to the clusters; see Running on a Spark "
                     "cluster.",
    "TaskRefused": "A Spark task's own error, which no other attempt of it would cure (a file "
                   "the job needs is not on the executor's host): do what its line says, "
                   "then rerun the step (done ranges are skipped).",
    "SnapshotExportError": "Rerun `snapshot`: only the files the target lacks or holds "
                           "different are copied again. If files vanished, raise the target's "
                           "`hbase.master.hfilecleaner.ttl` (`[snapshot] target_hfile_ttl`).",
    "SnapshotMethodError": "Do what the line says (give the cluster an `admin_shell`, start "
                           "over after an expired snapshot), or use `--method scan`.",
    "SnapshotManifestError": "The snapshot's manifest is damaged: delete that snapshot and "
                             "rerun `snapshot`.",
    "JvmError": "Install Java 17 and Maven (`scripts/system-deps.sh`), or check the Maven "
                "log named in the line.",
    "LedgerError": "Read the ledger URL or record named in the line.",
    "LedgerOpenError": "Fix the URL (`[migration] ledger`, `ledger_env`, "
                       "`$HBASE_MIGRATE_LEDGER`) or start the database.",
    "LedgerUnreachableError": "Start the ledger's database again (or mend the network to "
                              "it), then run the same command: it goes on from what was "
                              "recorded.",
    "LedgerFullError": "Free space on the disk the line names (the SQLite ledger's folder, or "
                       "the PostgreSQL server's data folder), then run the same command: "
                       "nothing was recorded half.",
    "LedgerSchemaError": "Upgrade hbase-migrate (the ledger is newer than this code), or "
                         "restore the `sql/` files.",
    "LedgerMissingError": "Point at the ledger the migration used, or create one with "
                          "`hbase-migrate ledger upgrade --config M.toml`.",
    "LedgerForeignError": "Give the ledger a database (or schema) of its own.",
    "MigrationMismatchError": "Clusters or tables changed after the copy began: restore them, "
                              "or start over under another `[migration] name`.",
    "MigrationStateError": "The step would move the migration back: start a new migration "
                           "for a new copy.",
    "WalStateError": "Two runs disagree about a WAL file: make sure only one replay per "
                     "migration runs (the lock), then rerun.",
    "KafkaUnavailableError": "Start the brokers or fix `[cdc] bootstrap`; rerun: "
                             "unacknowledged messages are sent again.",
    "KafkaTopicError": "Create the topic named (or allow auto-creation), then rerun.",
    "KafkaRefusedError": "Fix the TLS or SASL settings in `[cdc] producer` (see "
                         "[The CDC stream](guides/cdc.md)).",
    "KafkaDeliveryError": "Raise the topic's `max.message.bytes` (a large row) or grant the "
                          "producer access, then rerun.",
    "AirflowStackError": "Read the part named (api-server, scheduler, a port); its log is in "
                         "`DIR/airflow/logs`. `hbase-migrate airflow down --dir DIR` stops "
                         "what is left.",
    "PortTakenError": "Another process listens on the api-server's port: `airflow up` "
                      "without `--port` picks another by itself (three tries); with "
                      "`--port`, name a free one.",
    "PgServerError": "Install Debian's `postgresql` (`scripts/system-deps.sh celery`).",
    "RedisError": "Install `redis-server` (`scripts/system-deps.sh celery`).",
    "BigtableError": "Bigtable refused the call named in the line (table, row): check the "
                     "instance, the table (`hbase-migrate prepare` creates it) and "
                     "the app profile's permissions.",
    "BigtableUnreachableError": "Bigtable (or the emulator named in the line) did not answer: "
                                "check emulator_host or the network; run the step again.",
    "BigtablePreflightError": "Bigtable cannot take the cell, row or key named in the line: "
                              "change it at the source, or accept its loss by the name the "
                              "line gives in `[target] accept` (recorded as a known loss).",
    "BigtableEmulatorError": "Install Debian's `google-cloud-cli-bigtable-emulator` "
                             "(`scripts/system-deps.sh bigtable`), or read the emulator's "
                             "log named in the line.",
    "EmbeddedStackError": "Read the part and its log named in the line; stop what is left "
                          "and start again in a fresh `--dir`.",
    "RealStackError": "Install a JDK 17 and Maven; check the Maven log named in the line.",
    "TaskKillError": "`soak-crash --airflow` did not see the task it was to kill running, or "
                     "its process: read why in the Airflow logs under the run's folder "
                     "(`airflow/logs`), then run the harness again.",
    "MiniHBaseError": "The embedded cluster refused the request as HBase would: fix it.",
    "ServerDownError": "A killed embedded region server: `hbase-migrate minicluster restart "
                       "N --cluster C`, or wait for its regions to move.",
    "TableNotFoundError": "Create the table, or fix its name.",
    "TableExistsError": "Nothing to create; use the existing table or another name.",
    "NamespaceNotFoundError": "Create the namespace first.",
    "NamespaceExistError": "Nothing to create.",
    "TableStateError": "Enable (or disable) the table as the call needs.",
    "TableDisabledError": "Enable the table.",
    "NoSuchFamilyError": "Add the family, or fix the request.",
    "IllegalArgumentError": "Fix the request the line shows.",
    "IllegalSplitError": "Split at a key strictly inside a region of the table (not its start "
                         "key, not outside it).",
}
