"""HDFS over its own protocols (the NameNode's RPC, the DataNodes' data transfer): a
store file's bytes read as a region server reads them, with no WebHDFS in the path."""
