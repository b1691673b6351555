"""Spark for a cluster of other hosts. Every module is named here once
(``tests/test_package_docs.py`` keeps the list true):

* ``executors``: what the executors run and how they get it (the archive ``archive``
  builds, or the Python ``[spark] python`` names, and the ``[spark] conf`` settings);
* ``shipped``: the migration as tasks see it (endpoints resolved here, no ledger);
* ``preflight``: the job that checks every executor first, running ``probe`` there;
* ``jobs``: each call's jobs in a group of their own, which a stop cancels;
* ``yarn``: what is checked on the driver before a session on YARN starts;
* ``errors``: a failed job's cause in one line, and which masters run tasks here.

pyspark is imported by callers, never here.
"""
