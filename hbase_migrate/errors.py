"""The exception hierarchy of hbase-migrate.

Every error names what it is about (file and byte offset, table, range, endpoint) and says
what was expected, so that an operator can act on the message alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from enum import Enum
from typing import ClassVar


class Kind(Enum):
    """What is decided about an error, the one thing callers read of it: retried after a
    backoff, relocated, a scanner reopened, an outage waited out, or never retried (the
    table of HBase's exception classes: :mod:`hbase_migrate.cluster.retry`)."""

    RETRY = "retry after backoff"
    RELOCATE = "relocate and retry"
    SCANNER = "reopen the scanner after its last row"
    OUTAGE = "outage: retry, then wait for the service"
    NEVER = "never retry"

class HBaseMigrateError(Exception):
    """Base class of every error this package raises on purpose. ``at_once``: running the
    step again cannot mend an error of the class (a wrong configuration or address), so a
    scheduler fails the step at its first try instead of retrying it (:func:`fails_at_once`).
    """

    at_once: ClassVar[bool] = False


def fails_at_once(exc: BaseException) -> bool:
    """Whether ``exc`` is of a class that fails a step at once, no retry of it helping."""
    return isinstance(exc, HBaseMigrateError) and type(exc).at_once


def causes(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and the errors it came from (``raise ... from``, or raised while handling
    one), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


class StepInterrupted(HBaseMigrateError):
    """A step was stopped by the user (Ctrl-C); the message says what was done and kept,
    and that running the same command again goes on from there."""


class ConfigError(HBaseMigrateError):
    """A migration config, a cluster.json or a command-line value is wrong."""

    at_once = True


class WalError(HBaseMigrateError):
    """A WAL file cannot be read. ``file`` is the path or URL as the caller gave it."""

    def __init__(self, file: str, message: str) -> None:
        self.file = file
        super().__init__(f"{file}: {message}")


class WalSourceError(WalError):
    """The storage holding a WAL refused or dropped a read (WebHDFS: the NameNode, a
    DataNode, the network): the file may be fine, and a later read may succeed.
    ``unreachable`` when the storage did not answer at all (``endpoint``: where): its
    ``kind`` is then an outage a long run waits out, not a fault of the file."""

    def __init__(self, file: str, message: str, *, unreachable: bool = False,
                 endpoint: str = "") -> None:
        super().__init__(file, message)
        self.kind = Kind.OUTAGE if unreachable else Kind.RETRY
        self.endpoint = endpoint


class WalUnsupportedError(WalError):
    """A valid file of a kind this reader refuses: legacy SequenceFile HLog, encrypted WAL,
    custom cell codec, LZO or unknown value compression."""


class WalEmptyError(WalError):
    """A zero-length or header-less file (a roller created it, or its server died first)."""


class WalCorruptError(WalError):
    """Bytes that are neither a valid entry nor a cut-off tail.

    ``offset`` is the byte offset where the bad entry starts (or the bad bytes, when that is
    more precise), ``entry_index`` the zero-based index of the entry being decoded.
    """

    def __init__(self, file: str, offset: int, entry_index: int, reason: str) -> None:
        self.offset = offset
        self.entry_index = entry_index
        self.reason = reason
        super().__init__(
            file, f"corrupt WAL at byte offset {offset} (entry #{entry_index}): {reason}"
        )


class HFileError(HBaseMigrateError):
    """An HFile cannot be read. ``file`` is the path as the caller gave it."""

    def __init__(self, file: str, message: str) -> None:
        self.file = file
        super().__init__(f"{file}: {message}")


class HFileCorruptError(HFileError):
    """Bytes of an HFile that do not parse or fail their checksum; ``offset`` is the byte
    offset of the block (or trailer) concerned."""

    def __init__(self, file: str, offset: int, reason: str) -> None:
        self.offset = offset
        self.reason = reason
        super().__init__(file, f"corrupt HFile at byte offset {offset}: {reason}")


class HFileUnsupportedError(HFileError):
    """A valid HFile of a kind this reader refuses (an encoding, a compression, encryption,
    a format version); ``offset`` is where it was found."""

    def __init__(self, file: str, offset: int, found: str) -> None:
        self.offset = offset
        self.found = found
        super().__init__(file, f"not readable here at byte offset {offset}: {found}")
