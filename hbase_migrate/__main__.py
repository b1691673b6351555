"""``python -m hbase_migrate`` runs the command line."""

from hbase_migrate.cli import main

main()
