"""HBase's Thrift2 IDL (``hbase2.thrift``, THBaseService), loaded once for the client, the
mutation mapping and the embedded cluster's server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import thriftpy2

IDL_PATH = Path(__file__).with_name("hbase2.thrift")
hbase2: Any = thriftpy2.load(str(IDL_PATH), module_name="hbase2_thrift")
