"""What the embedded region servers refuse rather than ignore: parts of a Get, a Scan or a
Multi (``Client.proto``, branch-2.6) that would change what HBase reads or writes but that
the embedded cluster does not serve. Each is answered with DoNotRetryIOException naming
it, so a client never gets rows HBase would not have given (a filter dropped)."""

from __future__ import annotations

from hbase_migrate.wal.protobuf import Message
from minihbase.rpc.listener import DO_NOT_RETRY, ServiceError

# field -> (what it is, whether a message): a message is refused when present, a number
# when not 0
Parts = dict[int, tuple[str, bool]]
GET_PARTS: Parts = {4: ("a filter", True), 8: ("a store limit", False),
                    9: ("a store offset", False), 13: ("a column family time range", True)}
SCAN_PARTS: Parts = {5: ("a filter", True), 9: ("a batch size", False),
                     11: ("a store limit", False), 12: ("a store offset", False),
                     19: ("a column family time range", True)}
SCAN_REQUEST_PARTS: Parts = {11: ("a row limit", False)}  # limit_of_rows
CONDITION = "a condition of the whole request"


def _refuse(what: str, where: str) -> None:
    raise ServiceError(DO_NOT_RETRY, f"{what} in {where} is not served by the embedded "
                       "cluster", do_not_retry=True)


def _check(data: bytes, kind: str, parts: Parts, where: str) -> None:
    m = Message(data, kind)
    for number, (what, message) in parts.items():
        if number in m and (message or m.opt_int(number)):
            _refuse(what, where)


def check_get(request: bytes) -> None:
    """A GetRequest's Get (field 2) holds nothing the embedded cluster would ignore."""
    get = Message(request, "GetRequest").opt_bytes(2)
    if get is not None:
        _check(get, "Get", GET_PARTS, "a Get")


def check_scan(request: bytes) -> None:
    """A ScanRequest (and the Scan it opens) holds nothing the embedded cluster ignores."""
    _check(request, "ScanRequest", SCAN_REQUEST_PARTS, "a Scan")
    scan = Message(request, "ScanRequest").opt_bytes(2)
    if scan is not None:
        _check(scan, "Scan", SCAN_PARTS, "a Scan")


def check_multi(request: bytes) -> None:
    """A MultiRequest carries no condition of its own (deprecated: RegionActions carry
    theirs) and its Gets nothing the embedded cluster would ignore."""
    m = Message(request, "MultiRequest")
    if 3 in m:
        _refuse(CONDITION, "a Multi")
    for data in m.repeated(1):
        region_action = Message(data, "RegionAction")
        for action in region_action.repeated(3):
            get = Message(action, "Action").opt_bytes(3)
            if get is not None:
                _check(get, "Get", GET_PARTS, "a Multi's Get")
