"""Airflow adapters over the hbase_migrate core, one folder per role: ``hooks`` (the
``hbase`` and ``spark`` connections), ``triggers`` and ``sensors`` (new WAL files),
``operators`` (one lifecycle step each). Importing any of them is cheap: the core and
Airflow's heavier parts are imported inside ``execute()`` and the trigger's ``run()``."""
