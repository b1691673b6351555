"""The first task of a DAG that acts on several migrations: which ones this run acts on.

:class:`MigrationsOperator` returns their refs (:func:`hbase_migrate_airflow.migration.
run_migrations`: the one the run's Params name, those the triggering WAL events carry, or
every migration in progress in the ledgers), for the DAG to map its work over, one mapped
task per migration (:func:`per_migration`), so that one migration's failure does not hold
back another's work. With none to act on the task is skipped, the reason in its log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseOperator

if TYPE_CHECKING:
    from airflow.sdk import Context

LABEL = "{{ task.label }}"  # a mapped task's name in the grid: its migration


class MigrationsOperator(BaseOperator):
    """Lists the migrations the run acts on (their refs)."""

    ui_color = "#f0ece3"

    def execute(self, context: Context) -> list[dict[str, Any]]:
        from airflow.sdk.exceptions import AirflowFailException

        from hbase_migrate.errors import ConfigError
        from hbase_migrate_airflow.migration import NoMigration, ref_name, run_migrations
        from hbase_migrate_airflow.operators.lifecycle import skip

        try:
            refs = run_migrations(context, self.dag_id)
        except NoMigration as nothing:
            skip(self, str(nothing))
        except ConfigError as exc:  # the ledger's URL, a ledger that cannot be read
            raise AirflowFailException(f"migrations: {exc}") from exc
        self.log.info("%d migration(s) to act on: %s", len(refs),
                      ", ".join(map(ref_name, refs)))
        return refs


def per_migration(operator: type[BaseOperator], task_id: str, **kwargs: Any) -> Any:
    """``migrations`` >> ``operator`` mapped over them (``migration=ref``, each mapped task
    named after its migration); returns the ``migrations`` task and the mapped one."""
    migrations = MigrationsOperator(task_id="migrations")
    mapped = operator.partial(task_id=task_id, map_index_template=LABEL, **kwargs).expand(
        migration=migrations.output)
    return migrations, mapped
