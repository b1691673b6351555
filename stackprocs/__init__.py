"""What the project's stacks share of running children, below both: the embedded cluster
(``minihbase``) and the real services (``realstack``: HBase, Kafka, a KDC, YARN) start,
watch and stop their processes with :mod:`stackprocs.process`, and reach a cluster's admin
endpoint (the embedded one's, or the one a realstack HBase serves) with
:mod:`stackprocs.admin_client`. It imports neither stack: ``minihbase`` may use
``realstack``, never the reverse (import-linter checks both)."""
