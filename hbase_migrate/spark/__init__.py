"""Spark for a cluster of other hosts: what the executors run and how they get it
(``executors``: the archive of ``archive`` or the Python ``[spark] python`` names, and the
``[spark] conf`` settings), the migration as tasks see it (``shipped``: endpoints resolved
here, no ledger) and the pre-flight job that checks every executor first (``preflight``,
running ``probe``). pyspark is imported by callers, never here."""
