"""The parts of the next catch-up (:func:`hbase_migrate.lifecycle.replay.replay_parts`: one
per WAL chain, chains a region move ties together in one), for the replay DAG to map one
``ReplayOperator`` over: the grid shows each part, and a retry redoes only the failed one.
Nothing is recorded; a run that names no migration is skipped."""

from __future__ import annotations

from typing import TYPE_CHECKING

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context


class ReplayPartsOperator(BaseOperator):
    """Returns the parts (lists of chain ids) of the replay the run's migration waits for."""

    ui_color = "#e8eef7"

    def execute(self, context: Context) -> list[list[str]]:
        from airflow.sdk.exceptions import AirflowFailException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate.lifecycle.replay import replay_parts
        from hbase_migrate_airflow.migration import NoMigration, migration_spec, run_params
        from hbase_migrate_airflow.operators.lifecycle import skip

        try:
            spec = migration_spec(run_params(context), self.dag_id)
            parts = replay_parts(spec)
        except NoMigration as nothing:
            skip(self, str(nothing))
        except ConfigError as exc:
            raise AirflowFailException(f"replay parts: {exc}") from exc
        self.log.info("migration %s: %d part(s) to replay: %s", spec.name, len(parts),
                      "; ".join(", ".join(p) for p in parts) or "none")
        return parts
