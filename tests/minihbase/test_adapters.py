"""The product's typed adapters: ClusterEndpoints, the Thrift1 (happybase) client, and the
Thrift2 client's cell mapping and reconnects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.errors import ConfigError
from hbase_migrate.thrift.mutations import deletes_from_cells, puts_from_cells
from hbase_migrate.thrift.thrift1 import Thrift1Client, Thrift1Error
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.wal.model import Cell, CellType
from minihbase.server import MiniHBase
from tests.support.minicluster import EmbeddedClusters

pytestmark = pytest.mark.integration


def test_endpoints_json_round_trip(tmp_path: Path):
    """cluster.json keys load into ClusterEndpoints; extra keys are ignored; bad values fail."""
    ep = ClusterEndpoints("src", "127.0.0.1:9090", "127.0.0.1:9091", "framed", "compact",
                          zookeeper="127.0.0.1:2181", hbase_root="/hbase")
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({**ep.to_json(), "pid": 1, "dir": "/x"}))
    assert load_cluster_json(path) == ep
    with pytest.raises(ConfigError, match="host:port"):
        ClusterEndpoints("bad", "no-port")
    with pytest.raises(ConfigError, match="transport"):
        ClusterEndpoints("bad", "h:1", transport="carrier-pigeon")
    path.write_text("[]")
    with pytest.raises(ConfigError, match="JSON object"):
        load_cluster_json(path)


def test_cell_mapping_to_thrift2():
    """Put cells group per row with their own timestamps; each delete type maps to its
    TDeleteType with per-column timestamps, consecutive (row, type) runs share a TDelete."""
    puts = puts_from_cells([Cell(b"a", b"f", b"q", 1, CellType.PUT, b"x"),
                            Cell(b"b", b"f", b"q", 2, CellType.PUT, b"y"),
                            Cell(b"a", b"f", b"r", 3, CellType.PUT, b"z")])
    assert [(p.row, [(c.qualifier, c.timestamp) for c in p.columnValues]) for p in puts] == [
        (b"a", [(b"q", 1), (b"r", 3)]), (b"b", [(b"q", 2)])]
    deletes = deletes_from_cells([
        Cell(b"a", b"f", b"q", 1, CellType.DELETE), Cell(b"a", b"f", b"r", 2, CellType.DELETE),
        Cell(b"a", b"f", b"q", 3, CellType.DELETE_COLUMN),
        Cell(b"a", b"f", b"", 4, CellType.DELETE_FAMILY),
        Cell(b"b", b"f", b"", 5, CellType.DELETE_FAMILY_VERSION)])
    assert [(d.row, d.deleteType, [(c.qualifier, c.timestamp) for c in d.columns])
            for d in deletes] == [
        (b"a", 0, [(b"q", 1), (b"r", 2)]), (b"a", 1, [(b"q", 3)]), (b"a", 2, [(None, 4)]),
        (b"b", 3, [(None, 5)])]
    with pytest.raises(ValueError):
        deletes_from_cells([Cell(b"a", b"f", b"q", 1, CellType.PUT)])


def test_thrift1_adapter(mini: MiniHBase, t2: Thrift2Client, table_name):
    """Tables, descriptors, regions and scans through the happybase adapter."""
    t2.create_table(TableDescriptor(table_name, (FamilyDescriptor(b"f", max_versions=2),)),
                    [b"m"])
    t2.put_cells(table_name, [Cell(b"a", b"f", b"q", 5, CellType.PUT, b"1"),
                              Cell(b"a", b"f", b"q", 6, CellType.PUT, b"2"),
                              Cell(b"z", b"f", b"", 7, CellType.PUT, b"3")])
    with Thrift1Client(mini.endpoints.thrift) as t1:
        assert table_name in t1.tables()
        assert t1.table_descriptor(table_name).families[0].max_versions == 2
        assert [(r.start_key, r.end_key) for r in t1.regions(table_name)] == [
            (b"", b"m"), (b"m", b"")]
        assert t1.regions(table_name)[0].encoded_name.encode() in t1.regions(table_name)[0].name
        assert [[(c.row, c.qualifier, c.timestamp, c.value) for c in row]
                for row in t1.scan_cells(table_name)] == [[(b"a", b"q", 6, b"2")],
                                                          [(b"z", b"", 7, b"3")]]
        assert [c.timestamp for c in t1.cells(table_name, b"a", b"f:q")] == [6, 5]
        with pytest.raises(Thrift1Error, match="TableNotFound"):
            t1.table_descriptor("missing_table")


def test_thrift2_client_reconnects_after_server_restart(make_embedded: EmbeddedClusters):
    """A transport error (gateway restarted) is retried on a new connection."""
    first = make_embedded()
    port = first.thrift2.port
    client = Thrift2Client(first.endpoints.thrift2, retries=5, backoff=0.05)
    client.create_table(TableDescriptor("t", (FamilyDescriptor(b"f"),)))
    first.stop()
    make_embedded(folder=first.data_dir, thrift2_port=port)  # its gateway on the same port
    try:
        client.put_cells("t", [Cell(b"r", b"f", b"q", 1, CellType.PUT, b"v")])
        assert [c.value for c in client.get("t", b"r")] == [b"v"]
    finally:
        client.close()
