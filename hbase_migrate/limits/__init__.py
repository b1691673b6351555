"""Throttles: the ``[limits]`` of a migration enforced on the copy, the validation scans
and replay, across all tasks of a step (each task takes its share), changed while steps run
with ``hbase-migrate limits set`` (kept in the ledger), optionally adaptive (AIMD).

* :mod:`bucket` token buckets, :mod:`aimd` the adaptive cap, both without a clock;
* :mod:`watch` the plan a step hands its tasks and the limits in force (config + ledger;
  :func:`~watch.lending` a step's open ledger to the reads);
* :mod:`throttle` one task's throttle, :func:`~throttle.metered` for scans
  (:func:`~throttle.metered_batches` a reply at a time);
* :mod:`registry` the rates in force in this process (:func:`current_rates`).
"""

from hbase_migrate.limits.registry import current_rates, step_limits, throttle_for
from hbase_migrate.limits.throttle import Throttle, metered, metered_batches
from hbase_migrate.limits.watch import ThrottlePlan, lending

__all__ = ["Throttle", "ThrottlePlan", "current_rates", "lending", "metered",
           "metered_batches", "step_limits", "throttle_for"]
