"""HBase's own protobuf RPC, spoken from Python, in the rooms gohbase keeps:

* ``errors``: the errors, and the one classification of HBase's remote exceptions;
* ``codec``: the bytes of a connection, of each call and reply, of cell blocks (no I/O);
* ``messages`` (shared messages and Get), ``scan``, ``multi``: the ``Client.proto`` calls;
* ``sasl``: Kerberos on a connection (SASL GSSAPI, HBase's framing, the security layer of
  ``hbase.rpc.protection``), as the principal a cluster's security names; ``digest``: SASL
  DIGEST-MD5 with a delegation token instead, at the same protection;
* ``connection``: one TCP connection per server, many calls in flight matched by call id;
* ``locate``: region locations from ZooKeeper and ``hbase:meta``, cached per table;
* ``scanner``: ``NativeScanner``, a scan region after region, holding only its seam
  (locate, a connection, rows per call);
* ``client``: ``NativeClient``: get, scan, write and regions, with the one retry loop (its
  region locator given, or its own);
* the admin side: ``schema`` (table and namespace descriptors), ``master_calls``,
  ``snapshots``, ``status`` (``MasterService``) and ``region_admin`` (``AdminService``) the
  messages; ``server_admin`` the region server calls, ``admin``: ``NativeAdmin`` on the
  active master ZooKeeper names; ``admin_channel`` the ``Admin`` and ``Compactor`` of
  ``hbase_migrate.cluster.admin`` over it (what ``hbase_migrate.hbase`` hands the steps);
* ``cluster``: ``NativeCluster``, the project's client protocol
  (``hbase_migrate.cluster.client``) over ``NativeClient`` and ``NativeAdmin``;
* ``tokens``: a delegation token from HBase's ``TokenProvider`` endpoint.

Imports run one way, in that order. Authentication is SIMPLE, or Kerberos where a cluster's
security says so, or a delegation token where this process holds one of the cluster.
"""
