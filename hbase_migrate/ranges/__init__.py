"""The range engine: key ranges of a table and the work done range by range. Every module is
named here once (``tests/test_package_docs.py`` keeps the list true):

* ``keyrange``: the :class:`KeyRange` value, hex-rendered bounds;
* ``plan``: ranges from the source's region boundaries, split so none holds more than a
  cell budget; ``planned``: those ranges planned once and kept in the ledger; ``groups``:
  them grouped into the parts a copy or a validation is split into;
* ``stats``: rows, cells and a length-prefixed digest of one range;
* ``copy``: the copy of one range; ``tasks``: the work of one range as a Spark task (or the
  in-process engine) runs it, with clients from ``lent`` (kept per process, lent to one task
  at a time);
* ``engine``: running tasks in-process or as one Spark task per range; ``choice``: which
  engine a step's work runs on, and why;
* ``credentials``: the Kerberos files a Spark job ships and each task's login.
"""

from hbase_migrate.ranges.keyrange import KeyRange

__all__ = ["KeyRange"]
