"""The errors of the Bigtable target."""

from __future__ import annotations

from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError
from hbase_migrate.errors import ConfigError, HBaseMigrateError


class BigtableError(ClusterError):
    """Bigtable (or its emulator) refused a call; the message names the table and row."""


class BigtableUnreachableError(ServiceUnreachableError):
    """Bigtable (or its emulator) did not answer: an outage a long run waits out."""

    service = "Bigtable"


class BigtableEmulatorError(HBaseMigrateError):
    """The Bigtable emulator (``cbtemulator``) is missing or did not start."""


class BigtablePreflightError(ConfigError):
    """The source holds cells, rows, keys or timestamps Bigtable cannot take, and the
    migration does not accept their loss by name (``[target] accept``): no retry can mend
    it."""
