"""Errors of WAL replay: each names the WAL file, byte offset and entry it concerns, and the
target table (and row, family, type where one is at fault)."""

from __future__ import annotations

from hbase_migrate.errors import ConfigError, HBaseMigrateError


class ReplayError(HBaseMigrateError):
    """A WAL file cannot be replayed as asked; nothing after its position was recorded."""


class UnknownCellTypeError(ReplayError):
    """A cell whose KeyValue type code is none of Put/Delete/DeleteColumn/DeleteFamily/
    DeleteFamilyVersion: replaying it would guess, so the file fails."""


class MarkerReadError(ReplayError):
    """A BULK_LOAD marker whose descriptor does not parse: the region to re-copy is unknown."""


class MissingTargetError(ReplayError, ConfigError):
    """The target lacks the table or column family a mapping or a WAL cell refers to (no
    retry mends that: a configuration error)."""


class InexpressibleMutationError(ReplayError):
    """The gateway cannot express a delete exactly and lossy deletes were not allowed."""


class ReplayWriteError(ReplayError):
    """The target did not acknowledge a write after the client's retries."""


class SpillError(HBaseMigrateError):
    """The local folder a bulk window spills its sorted runs to, or writes its files in,
    failed (removed under the run, unreadable, full): not the fault of the file being
    replayed, so the run stops, none of the window's files recorded as replayed. ``folder``
    names it."""

    def __init__(self, message: str, *, folder: str) -> None:
        super().__init__(message)
        self.folder = folder


class SpillSpaceError(SpillError):
    """The local folder a bulk window spills its sorted runs to has no room for the next
    one (:mod:`hbase_migrate.replay.bulkfiles`). ``needed`` and ``free`` say how many
    bytes."""

    def __init__(self, message: str, *, folder: str, needed: int, free: int) -> None:
        super().__init__(message, folder=folder)
        self.needed, self.free = needed, free
