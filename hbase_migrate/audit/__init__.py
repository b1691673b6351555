"""The audit ledger: what each migration did, in SQL (SQLite or PostgreSQL; schema in sql/).

``Ledger`` is the API; ``status`` computes the report of ``hbase-migrate status``.
"""
