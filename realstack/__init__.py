"""Real Apache stacks for tests, run in the JVM from Maven Central artifacts.

Each sub-folder (``hbase/``, ``kafka/``) is a small Maven module: a ``pom.xml`` and, when it
needs one, a short Java launcher under ``src/main/java``. :mod:`realstack.maven` resolves a
module's run-time class path once (cached, offline afterwards) and builds the ``java``
command line with the flags Java 17 needs. The core (``hbase_migrate``) never imports this.
"""
