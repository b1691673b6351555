"""One module per command group of the ``hbase-migrate`` command line."""
