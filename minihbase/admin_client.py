"""The admin endpoint's client now lives in :mod:`stackprocs.admin_client`; the name still
imported from here (``crash.py``) is re-exported until its importer moves."""

from __future__ import annotations

from stackprocs.admin_client import call_admin

__all__ = ["call_admin"]
