"""ZooKeeper: an HBase cluster's znodes and the payloads HBase keeps in them."""
