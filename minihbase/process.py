"""The stacks' process helpers now live in :mod:`stackprocs.process`; the names still
imported from here (``crash_steps.py``) are re-exported until their importer moves."""

from __future__ import annotations

from stackprocs.process import die_with_parent, log_tail

__all__ = ["die_with_parent", "log_tail"]
