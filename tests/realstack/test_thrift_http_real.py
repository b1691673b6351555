"""Thrift over HTTP with SPNEGO against real HBase 2.6.1: one ``realstack start --kerberos
--thrift-http`` stack for the module (both gateways with ``hbase.regionserver.thrift.http``;
HBase's ThriftHttpServlet asks every POST for a Negotiate token, as HTTP/127.0.0.1).

* A POST without credentials is refused with 401 (the proof SPNEGO is on).
* The project's Thrift1 and Thrift2 clients, with the cluster's credentials, create tables,
  write, read back and list regions over HTTP.
* A client without credentials gets one line, exit 2 from ``hbase-migrate prepare``.
* The lifecycle (prepare, snapshot, replay, validate) runs over HTTP and the copy matches.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth.kerberos import KerberosError
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import IN_PROCESS, load_config
from hbase_migrate.lifecycle import prepare, replay, snapshot, validate
from hbase_migrate.thrift.thrift1 import Thrift1Client
from hbase_migrate.thrift.thrift2 import Thrift2Client
from hbase_migrate.validate.compare import compare_tables
from hbase_migrate.wal.model import Cell, CellType
from realstack.hbase import RealHBase, RealHBaseOptions
from stackprocs.admin_client import call_admin
from tests.realstack.fixtures import kerberos_stack, stack_endpoints
from tests.realstack.lifecycle_parts import workload

pytestmark = [pytest.mark.own_stack, pytest.mark.integration, pytest.mark.realstack]
REPO = Path(__file__).resolve().parents[2]
SOURCE, TARGET = "http_orders", "http_orders_copy"


@pytest.fixture(scope="module")
def http_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealHBase]:
    yield from kerberos_stack(tmp_path_factory.mktemp("httphbase"), RealHBaseOptions(
        region_servers=1, heap="1g", kerberos=True, thrift_http=True, name="httpsecured"))


def test_gateways_refuse_a_post_without_spnego(http_stack: RealHBase) -> None:
    found = stack_endpoints(http_stack)
    assert found.transport == "http" and found.kerberos and found.thrift2
    for gateway in (found.thrift, found.thrift2):
        request = urllib.request.Request(f"http://{gateway}/", data=b"\x80\x01",
                                         headers={"Content-Type": "application/x-thrift"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 401
        assert refused.value.headers.get("WWW-Authenticate") == "Negotiate"


def test_clients_over_http_with_spnego_write_read_and_list_regions(
        http_stack: RealHBase) -> None:
    found = stack_endpoints(http_stack)
    assert found.thrift2
    cells = [Cell(b"a", b"d", b"q", 5, CellType.PUT, b"one"),
             Cell(b"n", b"d", b"q", 6, CellType.PUT, b"two" * 50_000),
             Cell(b"z", b"d", b"q", 7, CellType.PUT, b"three")]
    with Thrift2Client(found.thrift2, found.transport, **found.client_auth) as t2:
        t2.create_table(TableDescriptor("http_t2", (FamilyDescriptor(b"d", max_versions=3),)),
                        [b"m"])
        t2.put_cells("http_t2", cells)
        assert t2.get("http_t2", b"n") == [cells[1]]
        assert [c for batch in t2.scan("http_t2") for c in batch] == cells
        assert [(r.start_key, r.end_key) for r in t2.regions("http_t2")] == [
            (b"", b"m"), (b"m", b"")]
    with Thrift1Client(found.thrift, found.transport, **found.client_auth) as t1:
        t1.create_table("http_t1", [FamilyDescriptor(b"f")])
        t1.mutate_rows("http_t1", 11, {b"r1": [(b"f:a", b"x")], b"r2": [(b"f:b", b"y")]})
        assert t1.row("http_t1", b"r1") == {b"f:a": (b"x", 11)}
        assert [row for row, _ in t1.scan_rows("http_t1")] == [b"r1", b"r2"]
        assert {"http_t1", "http_t2"} <= set(t1.tables())
        assert [r.start_key for r in t1.regions("http_t1")] == [b""]
        assert t1.row("http_t2", b"z") == {b"d:q": (b"three", 7)}  # what Thrift2 wrote


def test_a_client_without_credentials_gets_one_line_and_exit_2(
        http_stack: RealHBase, tmp_path: Path) -> None:
    found = stack_endpoints(http_stack)
    assert found.thrift2
    with Thrift2Client(found.thrift2, "http", timeout=5, retries=2, cluster="httpsecured") \
            as t2, pytest.raises(KerberosError, match=r"requires SPNEGO .* no credentials"):
        t2.table_exists("hbase:meta")
    with Thrift1Client(found.thrift, "http", timeout=5, retries=2, cluster="httpsecured") \
            as t1, pytest.raises(KerberosError, match=r"requires SPNEGO .* no credentials"):
        t1.tables()
    assert found.security is not None  # a service principal the KDC does not know
    wrong = found.security.merged({"http_principal": "HTTP/nowhere@HBASE-MIGRATE.TEST"})
    with Thrift2Client(found.thrift2, "http", retries=2, security=wrong,
                       cluster="httpsecured") as t2, \
            pytest.raises(KerberosError, match=r"^cluster 'httpsecured', thrift2 gateway "
                          r"http://.* HTTP/nowhere@HBASE-MIGRATE.TEST is not known to the KDC"):
        t2.table_exists("hbase:meta")
    data = json.loads(http_stack.cluster_json.read_text())
    del data["security"]
    cluster = tmp_path / "plain.cluster.json"
    cluster.write_text(json.dumps(data), encoding="utf-8")
    config = tmp_path / "plain.toml"
    config.write_text(
        f'[migration]\nname = "plain"\nledger = "sqlite:///{tmp_path / "plain.db"}"\n'
        f'[source]\ncluster_json = "{cluster}"\n[target]\ncluster_json = "{cluster}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\n[gateway]\ncall_timeout = "3s"\n',
        encoding="utf-8")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KRB5")}
    done = subprocess.run([sys.executable, "-m", "hbase_migrate", "prepare", "--config",
                           str(config)], cwd=REPO, env=clean, capture_output=True, text=True,
                          timeout=120, check=False)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("hbase-migrate: error: "), done.stderr
    assert "cluster 'httpsecured'" in lines[0] and f"http://{found.thrift2}/" in lines[0]
    assert "requires SPNEGO (Kerberos) authentication" in lines[0], lines[0]


def test_lifecycle_over_http_prepare_snapshot_replay_validate(
        http_stack: RealHBase, tmp_path: Path) -> None:
    found = stack_endpoints(http_stack)
    assert found.thrift2
    workload(found, SOURCE, 41, ops=150)
    config = tmp_path / "migration.toml"
    config.write_text(
        f'[migration]\nname = "http"\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n'
        f'[source]\ncluster_json = "{http_stack.cluster_json}"\n'
        f'[target]\ncluster_json = "{http_stack.cluster_json}"\n'
        f'[[tables]]\nsource = "{SOURCE}"\ntarget = "{TARGET}"\n'
        f'[replay]\nroll_period = "1h"\nmargin = "1m"\n[spark]\nmaster = "{IN_PROCESS}"\n',
        encoding="utf-8")
    spec = load_config(config)
    assert prepare(spec).passed
    copied = snapshot(spec).to_json()
    assert copied["cells"] > 0
    workload(found, SOURCE, 42, ops=150)  # after the snapshot: only the replay brings it
    call_admin(http_stack.cluster_json, "roll")
    summary = replay(spec)
    assert summary.exit_code == 0, summary
    matched = validate(spec, recompare_wait=0).to_json()
    assert matched["verdict"] == "match", matched
    with Thrift2Client(found.thrift2, "http", **found.client_auth) as src, \
            Thrift2Client(found.thrift2, "http", **found.client_auth) as tgt:
        compared = compare_tables(src, tgt, SOURCE, TARGET)
    assert compared.equal and compared.source_cells > copied["cells"] // 2
