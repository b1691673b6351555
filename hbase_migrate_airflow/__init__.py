"""Airflow adapters over the hbase_migrate core. Every module is named here once
(``tests/test_package_docs.py`` keeps the list true):

* one folder per role: ``hooks`` (the only code reading a Connection), ``triggers`` and
  ``sensors`` (new WAL files), ``operators`` (one lifecycle step each), and ``dags`` (the
  DAG declarations the DAG folder's files import);
* ``migration``: the migrations a run works on, as references its tasks hand on;
  ``params``: the DAGs' typed Params forms; ``dag_defaults``: what the DAG files share;
  ``ledgers``: the ledgers the schedules look in; ``ledger_guard``: no per-worker ledger.

Importing any of them is cheap: the core and Airflow's heavier parts are imported inside
``execute()`` and the trigger's ``run()``.
"""
