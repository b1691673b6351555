"""What a Spark job ships for Kerberos and what a task does without it (no Spark, no KDC:
the real thing is ``tests/spark/test_standalone_kerberos.py``)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.auth.tokens import Token, forget_tokens, token_for, use_token
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.ranges.credentials import TaskCredentials, authenticated, job_tokens, ships_to
from hbase_migrate.spark.errors import TaskRefused


def test_auto_ships_to_cluster_masters_only() -> None:
    masters = ("local", "local[2]", "local[*]", "spark://m:7077", "yarn", "k8s://h:6443")
    assert [ships_to(m, "auto") for m in masters] == [False] * 3 + [True] * 3
    assert all(ships_to(m, "always") and not ships_to(m, "never") for m in masters)


def test_a_task_without_the_files_fails_in_one_line_before_its_work(tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "migrate.keytab"
    security = ClusterSecurity(auth="kerberos", principal="migrate@EXAMPLE.COM",
                               keytab=str(missing))
    ran: list[int] = []
    task = authenticated(ran.append, TaskCredentials((("prod", security),)))
    with pytest.raises(TaskRefused) as failed:  # no retry brings the file: not retried
        task(1)
    assert ran == []  # no client opened, no work done
    assert str(failed.value) == (
        f"KerberosError: cluster 'prod', Spark executor on host {socket.gethostname()}, "
        f"principal migrate@EXAMPLE.COM: keytab {missing} is not on this host and was not "
        f"shipped with the job; set [spark] ship_keytab = \"auto\" (or \"always\") to send "
        f"it, or deploy it at {missing} on every worker")
    assert authenticated(ran.append, None)(2) is None and ran == [2]  # unsecured: as is


def test_tokens_only_for_secured_native_clusters_and_one_per_cluster() -> None:
    secured = ClusterSecurity(auth="kerberos", principal="migrate@EXAMPLE.COM")
    over_thrift = ClusterEndpoints("a", thrift="h:9090", thrift2="h:9091", zookeeper="h:2181",
                                   security=secured)
    unsecured = ClusterEndpoints("b", zookeeper="h:2181", client="native")
    assert job_tokens((over_thrift, unsecured)) == ()  # nothing asked of either
    first = Token("a", b"id-a", b"pw-a", owner="migrate@EXAMPLE.COM")
    other = Token("b", b"id-b", b"pw-b", owner="migrate@EXAMPLE.COM")
    use_token(first)
    use_token(other)
    forget_tokens("a")  # a job of cluster a without a token: back to Kerberos there only
    assert token_for("a") is None and token_for("b") == other
    forget_tokens()
    assert token_for("b") is None
