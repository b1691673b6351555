"""What the embedded region servers refuse rather than ignore: a part of a Multi
(``Client.proto``, branch-2.6) that would change what HBase writes but that the embedded
cluster does not serve, answered with DoNotRetryIOException naming it. Filters and
comparators not served are refused where they are read (``minihbase.rpc.filters``)."""

from __future__ import annotations

from hbase_migrate.wal.protobuf import Message
from minihbase.rpc.listener import DO_NOT_RETRY, ServiceError

CONDITION = "a condition of the whole request"


def _refuse(what: str, where: str) -> None:
    raise ServiceError(DO_NOT_RETRY, f"{what} in {where} is not served by the embedded "
                       "cluster", do_not_retry=True)


def check_multi(request: bytes) -> None:
    """A MultiRequest carries no condition of its own (deprecated: RegionActions carry
    theirs)."""
    if 3 in Message(request, "MultiRequest"):
        _refuse(CONDITION, "a Multi")
