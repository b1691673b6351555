"""Google Cloud Bigtable as a migration target (docs/guides/bigtable.md): the third
transport, beside HBase's own RPC and the Thrift gateways. Every module is named here once
(``tests/test_package_docs.py`` keeps the list true):

* ``schema``: its tables and column families from HBase descriptors;
* ``preflight``: Bigtable's limits, checked before any write;
* ``writer`` and ``masking``: HBase cells written with HBase's delete semantics;
* ``client``: the client protocol over Google's library, what the front door opens for
  such a target;
* ``losses``: what its writes left out, counted per process; ``accepted``: the accepted
  losses left out of the validation's source side;
* ``emulator``: the local emulator; ``errors``: its errors.

Its settings, a ``[target]`` with ``kind = "bigtable"``, are a part of the config
(:mod:`hbase_migrate.config_bigtable`). No package but the front door
(:mod:`hbase_migrate.hbase`) imports this one; the Google client is imported only here,
when a client is made.
"""
