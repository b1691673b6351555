"""What the project's stacks share of running children, below both: the embedded cluster
(:mod:`minihbase`) and the real services (:mod:`realstack`: HBase, Kafka, a KDC, YARN). Every
module is named here once (``tests/test_package_docs.py`` keeps the list true):

* ``process``: free ports, Java, children that die with their parent, and the life cycle
  of a child process the stacks share;
* ``admin_client``: a cluster's admin endpoint (the embedded one's, or the one a realstack
  HBase serves), from a client's side.

It imports neither stack: :mod:`minihbase` may use :mod:`realstack`, never the reverse
(import-linter checks both).
"""
