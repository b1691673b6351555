"""What the steps use of a Bigtable target beside its handle's client, from the door: its
the pre-flight of Bigtable's limits,
its table ids, the losses its writes and the validations met (``[target] accept``), and the
local emulator. Each name is re-exported from :mod:`hbase_migrate.bigtable`, which the steps
never import (import-linter checks it); the losses counted per process and the delete
markers met are the handle's (:meth:`~hbase_migrate.hbase.Cluster.recorded_losses`,
:meth:`~hbase_migrate.hbase.Cluster.marker_memory`)."""

from __future__ import annotations

from hbase_migrate.bigtable.accepted import (
    AcceptedLosses,
    losses_line,
    not_accepted,
    step_line,
    without_accepted,
)
from hbase_migrate.bigtable.emulator import start_emulator, stop_emulator
from hbase_migrate.bigtable.losses import migration_losses, written_losses
from hbase_migrate.bigtable.preflight import Report, check_rows, check_wal_cells
from hbase_migrate.bigtable.schema import table_id
from hbase_migrate.bigtable.writer import MAX_MUTATIONS

__all__ = [
    "MAX_MUTATIONS",
    "AcceptedLosses",
    "Report",
    "check_rows",
    "check_wal_cells",
    "losses_line",
    "migration_losses",
    "not_accepted",
    "start_emulator",
    "step_line",
    "stop_emulator",
    "table_id",
    "without_accepted",
    "written_losses",
]
