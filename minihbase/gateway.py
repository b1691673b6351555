"""A threaded Thrift server for one IDL service, as HBase's ``hbase thrift``/``thrift2`` run.

One thread accepts on a loopback socket, one thread serves each client connection
(``minihbase.tcpserve``). Transport (``buffered``/``framed``) and protocol
(``binary``/``compact``) are fixed at start, like HBase's ``-f`` and ``-c`` options.
"""

from __future__ import annotations

import contextlib
import socket
from types import ModuleType

from thriftpy2.protocol import TBinaryProtocolFactory, TCompactProtocolFactory
from thriftpy2.thrift import TProcessor
from thriftpy2.transport import (
    TBufferedTransportFactory,
    TFramedTransportFactory,
    TSocket,
    TTransportException,
)

from minihbase.tcpserve import HOST, LoopbackServer
from stackprocs.process import EmbeddedStackError

__all__ = ["HOST", "ThriftGateway"]


def _factories(transport: str, protocol: str) -> tuple[object, object]:
    transports = {"buffered": TBufferedTransportFactory, "framed": TFramedTransportFactory}
    protocols = {"binary": TBinaryProtocolFactory, "compact": TCompactProtocolFactory}
    if transport not in transports or protocol not in protocols:
        raise EmbeddedStackError(
            f"unsupported transport/protocol {transport}/{protocol}: expected "
            "buffered|framed and binary|compact")
    return transports[transport](), protocols[protocol]()


class ThriftGateway(LoopbackServer):
    """Serves ``handler`` for ``service`` on ``HOST:port`` (0 = a free port)."""

    def __init__(self, name: str, service: ModuleType, handler: object, port: int = 0,
                 transport: str = "buffered", protocol: str = "binary") -> None:
        self.transport = transport
        self.protocol = protocol
        self._trans_factory, self._proto_factory = _factories(transport, protocol)
        self._processor = TProcessor(service, handler)
        super().__init__(name, port)

    def serve(self, client: socket.socket) -> None:
        trans = self._trans_factory.get_transport(TSocket(sock=client))  # type: ignore[attr-defined,no-untyped-call]
        proto = self._proto_factory.get_protocol(trans)  # type: ignore[attr-defined]
        try:
            while not self._closed.is_set():
                self._processor.process(proto, proto)
        except TTransportException:
            pass
        finally:
            with contextlib.suppress(OSError):
                trans.close()
