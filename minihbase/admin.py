"""The embedded cluster's admin endpoint: operations as JSON over HTTP on loopback.

``GET /info`` describes the servers and WALs; ``POST /<op>`` with a JSON object runs one
operation of :class:`minihbase.regionserver.RegionServers` and answers ``{"result": ...}``::

    /roll        {"server": NAME_OR_SLOT?}
    /flush       {"table": T?, "region": ENCODED?}
    /move        {"region": ENCODED, "server": NAME_OR_SLOT?}
    /split       {"region": ENCODED, "key": KEY}   daughters open on the parent's server
    /kill        {"server": NAME_OR_SLOT}
    /restart     {"server": NAME_OR_SLOT}   a killed server back, under a new start code
    /finish-split {"server": NAME?}
    /clean       {}
    /janitor     {}   the catalog janitor: split parents leave hbase:meta (else every 5 min)
    /replication {"enabled": BOOL}
    /bulk-load   {"table": T, "cells": [{"row", "family", "qualifier", "timestamp"?,
                  "value"}]}   byte strings in Bytes.toStringBinary form

and the cluster's own operations (``extra``): ``/service {"name": "thrift"|"thrift2"|"webhdfs"|
"rpc", "running": BOOL}`` closes or reopens a front door (an outage; ``rpc``: the master's and
every region server's RPC port), ``/webhdfs-latency {"seconds": S}`` delays every WebHDFS
request by S (a slow NameNode), ``/rpc-latency {"seconds": S}`` every RPC call (a slow
server).

Errors answer 400 with ``{"error": message}``. The URL goes into ``cluster.json`` as ``admin``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from hbase_migrate.bytesutil import to_bytes_binary
from hbase_migrate.errors import HBaseMigrateError
from hbase_migrate.wal.model import Cell, CellType
from minihbase.httpserve import BackgroundHttpServer
from minihbase.model import LATEST_TIMESTAMP
from minihbase.regionserver import RegionServers

log = logging.getLogger(__name__)


def cell_from_json(data: dict[str, Any]) -> Cell:
    """A bulk-load cell from JSON (byte strings as ``Bytes.toStringBinary`` renders them)."""
    def b(key: str) -> bytes:
        return to_bytes_binary(str(data.get(key, "")))
    ts = data.get("timestamp")
    return Cell(b("row"), b("family"), b("qualifier"),
                LATEST_TIMESTAMP if ts is None else int(ts), int(CellType.PUT), b("value"))


def _operations(rs: RegionServers) -> dict[str, Callable[[dict[str, Any]], Any]]:
    return {
        "roll": lambda a: rs.roll(a.get("server")),
        "flush": lambda a: rs.flush(a.get("table"), a.get("region")),
        "move": lambda a: rs.move(a["region"], a.get("server")),
        "split": lambda a: rs.split(a["region"], to_bytes_binary(str(a["key"]))),
        "kill": lambda a: rs.kill(a["server"]),
        "janitor": lambda a: rs.catalog_janitor(),
        "restart": lambda a: rs.restart(a["server"]),
        "finish-split": lambda a: rs.finish_split(a.get("server")),
        "clean": lambda a: rs.clean(),
        "replication": lambda a: _set_replication(rs, bool(a["enabled"])),
        "bulk-load": lambda a: rs.bulk_load(a["table"],
                                            [cell_from_json(c) for c in a["cells"]]),
    }


def _set_replication(rs: RegionServers, enabled: bool) -> dict[str, Any]:
    if rs.replication is None:
        raise HBaseMigrateError("this cluster has no replication peer (--replication-peer)")
    with rs.lock:
        rs.replication.set_enabled(enabled)
        return {"peer": rs.replication.peer_id, "enabled": enabled}


class AdminServer:
    """Serves the operations of ``region_servers`` on ``http://127.0.0.1:<port>``."""

    def __init__(self, region_servers: RegionServers, port: int = 0,
                 describe: Callable[[], dict[str, Any]] | None = None,
                 extra: dict[str, Callable[[dict[str, Any]], Any]] | None = None) -> None:
        self.region_servers = region_servers
        self.extra = extra or {}
        self.requested_port = port
        self.describe = describe
        self._server: BackgroundHttpServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("admin endpoint is not started")
        return f"http://127.0.0.1:{self._server.port}"

    def start(self) -> Self:
        ops = {**_operations(self.region_servers), **self.extra}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                log.debug("admin: " + format, *args)

            def _answer(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/info":
                    self._answer(404, {"error": f"unknown path {self.path}"})
                    return
                info = server.region_servers.info()
                if server.describe is not None:
                    info = {**server.describe(), **info}
                self._answer(200, {"result": info})

            def do_POST(self) -> None:
                op = ops.get(self.path.strip("/"))
                if op is None:
                    self._answer(404, {"error": f"unknown operation {self.path}"})
                    return
                try:
                    length = int(self.headers.get("Content-Length") or 0)
                    args = json.loads(self.rfile.read(length) or b"{}")
                    self._answer(200, {"result": op(args)})
                except HBaseMigrateError as exc:  # its message names the thing
                    self._answer(400, {"error": str(exc)})
                except (KeyError, ValueError, TypeError, OSError) as exc:
                    self._answer(400, {"error": f"{type(exc).__name__}: {exc}"})

        self._server = BackgroundHttpServer("127.0.0.1", self.requested_port, Handler,
                                            "minihbase-admin")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
