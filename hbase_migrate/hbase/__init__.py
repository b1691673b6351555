"""The one front door to HBase: the steps reach a cluster through :mod:`.connect` (data and
table admin: a :class:`~hbase_migrate.cluster.client.Client`, or a Thrift1 gateway for the
calls only it has), :mod:`.admin` (snapshots, compaction, the master's status, delegation
tokens) and :mod:`.bulk` (a bulk load's calls), and never import a transport
(``hbase_migrate.rpc``, ``hbase_migrate.cluster.thrift``). Both transports sit below this
package, beside :mod:`hbase_migrate.cluster`, their shared base, which imports neither."""
