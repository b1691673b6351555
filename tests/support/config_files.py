"""Migration configs as the tests write them: the smallest one the loader accepts, and a
file of any text under a test's folder."""

from __future__ import annotations

import textwrap
from pathlib import Path

# migration "users": source and target named by their Thrift gateways, no ledger
MINIMAL = """
[migration]
name = "users"
[source]
thrift = "a:9090"
hbase_root = "data/hbase"
[target]
thrift = "b:9090"
[[tables]]
source = "users"
"""


def write(tmp_path: Path, text: str, name: str = "m.toml") -> Path:
    """``text``, dedented, as ``tmp_path/conf/name``."""
    path = tmp_path / "conf" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path
