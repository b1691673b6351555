"""HBase's own RPC served by the embedded cluster: the listener, the region servers'
``ClientService`` and ``AdminService``, the master's ``MasterService`` and ``hbase:meta``."""
