"""A Spark session for a task, on the master of a ``spark`` connection."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def spark_session(master: str, app_name: str) -> Iterator[Any]:
    """A session on ``master`` (loopback driver, this interpreter on the executors),
    stopped at the end."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = SparkSession.builder.master(master).appName(app_name).getOrCreate()
    try:
        yield session
    finally:
        session.stop()
