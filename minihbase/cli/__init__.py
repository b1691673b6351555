"""Commands the embedded cluster adds to `hbase-migrate`."""
