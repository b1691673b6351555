"""The range engine: key ranges of a table and the work done range by range.

``keyrange`` (the :class:`KeyRange` value, hex-rendered bounds), ``plan`` (ranges from the
source's region boundaries, split so none holds more than a cell budget), ``stats`` (rows,
cells and a length-prefixed digest of one range), ``tasks`` (copy and statistics of one
range, each opening its own Thrift2 clients) and ``engine`` (running tasks in-process or as
one Spark task per range).
"""

from hbase_migrate.ranges.keyrange import KeyRange

__all__ = ["KeyRange"]
