"""HBase's own protobuf RPC, spoken from Python, in the rooms gohbase keeps (every module is
named here once; ``tests/test_package_docs.py`` keeps the list true):

* ``errors``: the errors, and the one classification of HBase's remote exceptions;
* ``codec``: the bytes of a connection, of each call and reply, of cell blocks (no I/O);
* ``messages`` (shared messages and Get), ``scan``, ``multi``, ``conditions`` (a
  checkAndMutate's condition): the ``Client.proto`` calls;
* ``tls``: TLS on a connection; ``sasl``: Kerberos on a connection (SASL GSSAPI, HBase's
  framing, the security layer of ``hbase.rpc.protection``); ``digest``: SASL DIGEST-MD5
  with a delegation token instead; ``principal``: which Kerberos principal a server runs as;
* ``connection``: one TCP connection per server, many calls in flight matched by call id;
* ``registry``: where ``hbase:meta`` and the active master are, asked of the cluster's own
  servers (HBase 2.5+) instead of ZooKeeper;
* ``locate``: region locations from the registry or ZooKeeper and ``hbase:meta``, cached per
  table;
* ``scanner``: ``NativeScanner``, a scan region after region, holding only its seam
  (locate, a connection, rows per call); ``writes``: ``MultiWriter``, rows grouped per
  region server into Multi calls;
* ``client``: ``NativeClient``: get, scan, write and regions, with the one retry loop;
* ``bulkload``: the bulk load's ``Client.proto`` calls (``PrepareBulkLoad``,
  ``BulkLoadHFile``, ``CleanupBulkLoad``) and ``NativeBulkLoad`` over a ``NativeClient``;
* the admin side: ``master_calls``, ``snapshots``, ``status`` (``MasterService``) and
  ``region_admin`` (``AdminService``) the messages; ``server_admin`` the region server calls;
  ``admin``: ``NativeAdmin`` on the active master; ``admin_channel`` the ``Admin`` and
  ``Compactor`` of ``hbase_migrate.cluster.admin`` over it;
* ``cluster``: ``NativeCluster``, the project's client protocol
  (``hbase_migrate.cluster.client``) over ``NativeClient`` and ``NativeAdmin``;
* ``tokens``: a delegation token from HBase's ``TokenProvider`` endpoint.

Authentication is SIMPLE, or Kerberos where a cluster's security says so, or a delegation
token where this process holds one of the cluster.
"""
