"""The Thrift transport: HBase's Thrift1 and Thrift2 gateways, over sockets, SASL or HTTP."""
