"""The migration's DAGs, one module each, declared when it is imported: its ``dag`` is the
DAG ``hbase_migrate_<module>``. Airflow finds DAGs in the files of its DAG folder only: a
file there importing the module's ``dag`` is enough (the repository's ``dags/`` holds one
per DAG; ``hbase-migrate airflow dags DIR`` writes them into any folder)."""
