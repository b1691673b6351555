"""A deferrable sensor for new WAL files in the source's ``WALs/`` and ``oldWALs/``.

``execute()`` looks once; with nothing new it defers to :class:`NewWalFilesTrigger` with a
deadline ``timeout`` seconds away, and frees its worker slot. It returns its migration's ref
and the new files (for XCom: path, server, size, creation time), and reports them to
OpenLineage as its inputs. At the deadline it raises ``AirflowSensorTimeout`` naming the
migration, the folders and the wait (``AirflowSkipException`` with ``soft_fail``). Mapped
over the migrations a run acts on, it gets each one's ref as ``migration``; a migration
that cannot be named (a configuration error, an unknown connection) fails it at once.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseSensorOperator

from hbase_migrate_airflow.triggers.wal import NewWalFilesTrigger, listing_spec, unseen_files

if TYPE_CHECKING:
    from airflow.sdk import Context

    from hbase_migrate.config import MigrationSpec
    from hbase_migrate_airflow.operators.lifecycle import Datasets

# The trigger's own deadline comes first; the deferral's timeout is a backstop.
BACKSTOP = 60.0


class NewWalFilesSensor(BaseSensorOperator):
    """Waits for WAL files the migration's ledger has never listed."""

    ui_color = "#e8eef7"
    found: tuple[MigrationSpec, list[str]] | None = None  # the new files, once found

    def __init__(self, *, timeout: float = 600.0, poke_interval: float = 5.0,
                 migration: dict[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(timeout=timeout, poke_interval=poke_interval, **kwargs)
        self.migration = migration  # the ref of the migration (mapped), else the Params'

    @property
    def label(self) -> str:
        """The mapped task's name in the grid: its migration."""
        from hbase_migrate_airflow.migration import ref_name

        return ref_name(self.migration) if self.migration else self.task_id

    def _params(self, context: Context) -> dict[str, Any]:
        from hbase_migrate_airflow.migration import run_params, with_ref

        return (with_ref(context["params"], self.migration) if self.migration
                else run_params(context))

    def _spec(self, context: Context) -> MigrationSpec:
        """The run's migration; a run that names none is skipped, saying why."""
        from airflow.sdk.exceptions import AirflowFailException, AirflowNotFoundException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate_airflow.migration import NoMigration, migration_spec
        from hbase_migrate_airflow.operators.lifecycle import skip

        try:
            return migration_spec(self._params(context), self.dag_id)
        except NoMigration as nothing:
            skip(self, str(nothing))
        except (ConfigError, AirflowNotFoundException) as exc:  # no retry can mend it
            raise AirflowFailException(f"{self.task_id}: {exc}") from exc

    def _wait(self, context: Context) -> tuple[float, float]:
        """(seconds to wait, seconds between listings): the ``wait_seconds`` and
        ``poll_seconds`` Params when the run has them, else the sensor's own."""
        params = context["params"]
        return (float(params.get("wait_seconds") or self.timeout),
                float(params.get("poll_seconds") or self.poke_interval))

    def poke(self, context: Context) -> bool:
        return bool(unseen_files(listing_spec(self._spec(context))))

    def _found(self, context: Context, files: list[dict[str, Any]]) -> dict[str, Any]:
        from hbase_migrate_airflow.migration import ref_of

        spec = self._spec(context)
        self.found = (spec, [f["path"] for f in files])
        return {"migration": self.migration or ref_of(self._params(context)), "files": files}

    def get_openlineage_facets_on_complete(self, task_instance: Any) -> Datasets:
        """The new WAL files, as inputs, for the OpenLineage provider."""
        from hbase_migrate.lifecycle.lineage import wal_lineage
        from hbase_migrate_airflow.operators.lifecycle import openlineage

        return openlineage(wal_lineage(*self.found) if self.found else None)

    def execute(self, context: Context) -> dict[str, Any]:
        spec = listing_spec(self._spec(context))
        files = unseen_files(spec)
        if files:
            return self._found(context, files)
        wait, every = self._wait(context)
        self.defer(trigger=NewWalFilesTrigger(spec, time.time() + wait, every),
                   method_name="execute_complete",
                   timeout=timedelta(seconds=wait + BACKSTOP))
        return {}  # not reached: defer() raises

    def execute_complete(self, context: Context, event: dict[str, Any]) -> dict[str, Any]:
        from airflow.sdk.exceptions import AirflowSensorTimeout, AirflowSkipException

        if event.get("status") == "new":
            return self._found(context, list(event["files"]))
        params = self._params(context)
        name = params.get("config") or params.get("migration")
        wait, every = self._wait(context)
        message = (f"no new WAL file in the source's WALs/ or oldWALs/ for migration {name} "
                   f"within {wait:g} s ({event.get('polls')} listings, every {every:g} s)")
        self.log.warning("%s", message)  # soft_fail replaces the exception's own words
        if self.soft_fail:
            raise AirflowSkipException(message)
        raise AirflowSensorTimeout(message)
