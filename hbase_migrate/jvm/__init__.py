"""Java programs of the project run from Maven Central: class paths resolved once and cached
(:mod:`hbase_migrate.jvm.maven`), and the HBase admin helper built on them."""
