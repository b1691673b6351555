"""The bulk copy (``[snapshot] method = "bulk"``) on the session's real HBase 2.6.1: one table
copied into another of the same cluster through the lifecycle, its ranges written as HFiles
in the target family's settings and bulk-loaded over HBase's RPC. The target table's first
region is split before the copy (split points of its own). Judged by scans of both tables:
a raw scan of the target returns exactly every version a scan of the source returns before
T0 (no delete marker, none of the deleted cells), and ``auto`` with ``auto_bulk`` chooses
the bulk copy where the file copy cannot run (a watermark given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hbase_migrate.cluster.endpoints import load_cluster_json
from hbase_migrate.config import load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle import prepare, snapshot
from hbase_migrate.snapshot.choose import choose_method
from hbase_migrate.snapshot.probes import ClusterProbes
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase

from .bulk_rpc import fresh_table, split_first_region
from .fixtures import native_cluster_json

pytestmark = [pytest.mark.integration, pytest.mark.realstack]
SOURCE, TARGET = "bulk_copy_src", "bulk_copy_dst"
T = 1_700_000_000_000


def source_cells() -> list[Cell]:
    """Rows of several versions in both families, and deletes of each kind over some."""
    cells = [
        Cell(b"r%03d" % r, f, b"q%d" % q, T + v, CellType.PUT, b"v%d-%d-%d" % (r, q, v))
        for r in range(80)
        for f in (b"f", b"g")
        for q in range(3)
        for v in range(3)
    ]
    cells += [
        Cell(b"r010", b"f", b"q1", T + 1, CellType.DELETE),
        Cell(b"r020", b"g", b"q2", T + 2, CellType.DELETE_COLUMN),
        Cell(b"r030", b"f", b"", T + 1, CellType.DELETE_FAMILY),
        Cell(b"r040", b"g", b"", T + 0, CellType.DELETE_FAMILY_VERSION),
    ]
    return cells


def test_the_bulk_copy_loads_every_version_the_scan_copy_would_write(
    real_hbase: RealHBase, tmp_path: Path
) -> None:
    cluster_json = native_cluster_json(real_hbase, tmp_path)
    endpoints = load_cluster_json(cluster_json)
    config = tmp_path / "migration.toml"
    config.write_text(
        f'[migration]\nname = "bulkcopy"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{cluster_json}"\n[target]\ncluster_json = "{cluster_json}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGET}"\n'
        '[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "in-process"\n'
        '[ranges]\nmax_cells = 1200\n[snapshot]\nmethod = "bulk"\nauto_bulk = true\n',
        encoding="utf-8",
    )
    with fresh_table(endpoints, SOURCE), fresh_table(endpoints, TARGET):
        with connect(endpoints) as client:
            client.write_cells(SOURCE, source_cells())
            expected = [c for piece in client.scan(SOURCE) for c in piece]
        assert split_first_region(real_hbase.cluster_json, TARGET) == 3  # at LATER
        spec = load_config(config)
        assert choose_method(spec, ClusterProbes(), watermark=T + 10).method == "bulk"
        prepare(spec)

        result = snapshot(spec, watermark=T + 10).to_json()

        assert (result["state"], result["method"]) == ("copied", "bulk"), result
        with connect(endpoints) as client:
            copied = [c for piece in client.scan(TARGET, raw=True) for c in piece]
        assert copied == expected
        assert len(expected) < len([c for c in source_cells() if c.type == CellType.PUT])
        assert result["cells"] == len(expected) and result["ranges"] > 1
