"""WAL storage: the files under a cluster's HBase root, over WebHDFS or a local folder."""
