"""HBase's own protobuf RPC, spoken from Python (issue 45), in the rooms gohbase keeps:

* ``codec``: the bytes of a connection and of each call and reply (no I/O);
* ``messages``: the ``Client.proto`` messages of the data path;
* ``errors``: the errors, and the one classification of HBase's remote exceptions;
* ``connection``: one TCP connection to one server, many calls in flight by call id;
* ``locate``: region locations from ZooKeeper and ``hbase:meta``, cached per table;
* ``client``: ``NativeClient``, get, scan, write and regions with retries by class.

Imports run one way: codec -> messages -> connection -> locate -> client.
"""
