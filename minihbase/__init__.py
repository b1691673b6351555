"""minihbase: an embedded HBase-compatible cluster in one process.

It keeps tables, column families, regions and cells with HBase's semantics in a durable
store (:mod:`minihbase.store`, :mod:`minihbase.cluster`, :mod:`minihbase.visibility`) and
serves them over HBase's two Thrift gateways (:mod:`minihbase.thrift1`,
:mod:`minihbase.thrift2`). :class:`minihbase.server.MiniHBase` runs it all;
``hbase-migrate minicluster start`` runs it in the foreground.
"""
