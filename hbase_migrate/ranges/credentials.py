"""Kerberos for Spark tasks: what the driver sends with a job, and the login each task makes
before it opens a client.

In ``local[*]`` a task's Python worker is a child of the driver and shares its credential
cache (:mod:`hbase_migrate.cluster.auth.kerberos`). On a cluster master (``spark://``, ``yarn``,
``k8s://``) executors start from the worker's environment, often on another host: the
driver's cache, and perhaps the keytab and ``krb5.conf`` at their configured paths, are not
there. So, as ``[spark] ship_keytab`` says (``"auto"``: to cluster masters; ``"always"``;
``"never"``: the files are deployed at the same paths on every worker), the driver adds the
secured clusters' keytab and ``krb5.conf`` to the job (``SparkContext.addFile``: Spark
fetches them into each executor's files folder; the UI and the event log show their paths,
never their contents), and every task logs in before its work: from the configured path
where it exists on its host, else from the shipped copy (``SparkFiles.get``), with its
tickets in memory. A task that cannot log in fails with one line naming the executor host,
cluster and principal and what to do; one whose files are not on its host is refused at its
first attempt (:class:`~hbase_migrate.spark.errors.TaskRefused`), not retried by Spark.
Task arguments carry file names and principals, never contents or tickets.

Where a secured cluster is reached over HBase's own RPC (``client = "native"``) and issues
delegation tokens (its regions load HBase's ``TokenProvider``), the driver obtains one token
per cluster, by Kerberos, and each task's HBase connections to that cluster authenticate
with it (DIGEST-MD5, :mod:`hbase_migrate.rpc.digest`) instead of the keytab; the token is
kept for later jobs of the process until half its lifetime has passed. ZooKeeper and WebHDFS
still take the Kerberos login. A cluster that issues none (one info line says so) is reached
with the keytab as before. The token travels inside the task (never in arguments, logs or
the ledger; its ``repr`` hides the password).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import PurePosixPath
from typing import Any, TypeVar
from urllib.parse import urlsplit

from hbase_migrate.cluster.auth.kerberos import KerberosError, local_path, login, use_local_copies
from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.cluster.auth.tokens import Token, forget_tokens, use_token
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.hbase import Cluster, open_cluster
from hbase_migrate.spark.errors import TaskRefused

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
_SHIP = "[spark] ship_keytab"


@dataclass(frozen=True)
class TaskCredentials:
    """What each task of a job needs to log in: the secured clusters (name, security) and
    the files the driver shipped (configured path, name in ``SparkFiles``)."""

    clusters: tuple[tuple[str, ClusterSecurity], ...]
    shipped: tuple[tuple[str, str], ...] = ()
    tokens: tuple[Token, ...] = ()  # the delegation tokens of the job's clusters


def ships_to(master: str, ship_keytab: str) -> bool:
    """Whether a job on ``master`` gets the Kerberos files (``ship_keytab``: SHIP_KEYTAB)."""
    if ship_keytab == "auto":
        return not (master == "local" or master.startswith("local["))
    return ship_keytab == "always"


def ship_credentials(spark: Any, spec: MigrationSpec) -> TaskCredentials | None:
    """Add the secured clusters' keytab and ``krb5.conf`` to ``spark``'s jobs when
    ``[spark] ship_keytab`` says so; None when no cluster of ``spec`` is secured."""
    clusters = (open_cluster(spec.source), open_cluster(spec.target))
    secured = [(e.name, e.security) for e in (c.endpoints for c in clusters)
               if e.security is not None and e.security.kerberos]
    if not secured:
        return None
    tokens = job_tokens(clusters)
    context = spark.sparkContext
    master = str(context.master)
    if not ships_to(master, spec.engine.ship_keytab):
        return TaskCredentials(tuple(secured), tokens=tokens)
    paths = sorted({p for _, s in secured for p in (s.keytab, s.krb5_conf) if p})
    names = {os.path.basename(p): p for p in paths}
    if len(names) < len(paths):
        raise ConfigError(f"{_SHIP}: the keytab and krb5_conf of migration {spec.name!r} "
                          f"({', '.join(paths)}) share a file name, which Spark's files "
                          f"cannot tell apart; rename one")
    added = {PurePosixPath(urlsplit(f).path).name for f in context.listFiles}
    fresh = [p for p in paths if os.path.basename(p) not in added]  # once per session
    for path in fresh:
        context.addFile(path)
    if any(s.keytab in fresh for _, s in secured) and \
            context.getConf().get("spark.authenticate", "false") != "true":
        log.warning("the keytab of migration %r goes to the executors of %s while "
                    "spark.authenticate is off: anyone who reaches the driver can fetch it; "
                    "turn on spark.authenticate and spark.network.crypto.enabled", spec.name,
                    master)
    return TaskCredentials(tuple(secured), tuple((p, os.path.basename(p)) for p in paths),
                           tokens)


_issued: dict[str, Token | None] = {}  # per cluster: this process's token (None: issues none)


def job_tokens(clusters: tuple[ClusterEndpoints | Cluster, ...]) -> tuple[Token, ...]:
    """A delegation token of each cluster asked for them (Kerberos-secured and reached
    natively: :attr:`Cluster.issues_tokens`) that issues them: kept from an earlier job until
    half its lifetime has passed, else obtained now."""
    tokens = []
    for cluster in clusters:
        handle = cluster if isinstance(cluster, Cluster) else open_cluster(cluster)
        if not handle.issues_tokens:
            continue
        name = handle.name
        token = _issued.get(name)
        if name not in _issued or (token is not None and not _fresh(token)):
            try:
                token = handle.delegation_token()
            except ClusterError as exc:  # not kept: the next job asks again
                log.warning("cluster %r: no delegation token (%s); Spark tasks log in from "
                            "the keytab", name, " ".join(str(exc).split()))
                continue
            _issued[name] = token
        if token is not None:
            tokens.append(token)
    return tuple(tokens)


def _fresh(token: Token) -> bool:
    """Whether less than half of ``token``'s lifetime has passed."""
    half = (token.expires_ms - token.issued_ms) // 2
    return not token.expires_ms or time.time() * 1000 < token.issued_ms + half


def authenticated(task: Callable[[T], R], credentials: TaskCredentials | None
                  ) -> Callable[[T], R]:
    """``task`` preceded by the login of :func:`login_in_task` (``task`` itself without
    credentials)."""
    return task if credentials is None else partial(_logged_in, credentials, task)


def _logged_in(credentials: TaskCredentials, task: Callable[[T], R], item: T) -> R:
    login_in_task(credentials)
    return task(item)


def login_in_task(credentials: TaskCredentials) -> None:
    """In a Spark task: log in as each secured cluster's principal, from the configured
    files where this host has them, else from the driver's shipped copies; a file in
    neither place refuses the task (:class:`TaskRefused`, ``KerberosError: ...``)."""
    host = socket.gethostname()
    shipped = dict(credentials.shipped)
    copies = {}
    for path, name in shipped.items():
        if not os.path.exists(path):
            from pyspark import SparkFiles

            copies[path] = SparkFiles.get(name)
            os.chmod(copies[path], 0o600)  # the worker's copy: its owner's only
    if copies:
        use_local_copies(copies)
    for cluster, security in credentials.clusters:
        where = f"Spark executor on host {host}"
        for what, file in (("keytab", security.keytab), ("krb5_conf", security.krb5_conf)):
            if file and not os.path.exists(local_path(file)):  # no retry brings it
                raise TaskRefused.of(KerberosError(
                    f"cluster {cluster!r}, {where}, principal {security.principal}: {what} "
                    f"{file} is not on this host and was not shipped with the job; set "
                    f"{_SHIP} = \"auto\" (or \"always\") to send it, or deploy it at {file} "
                    f"on every worker", endpoint=where))
        try:
            login(security, cluster, where)
        except KerberosError as exc:
            raise KerberosError(f"{exc} (in a Spark task: the keytab and krb5_conf are sent "
                                f"with the job as {_SHIP} says; without a keytab each "
                                f"worker needs its own ticket)", endpoint=where) from None
    # Exactly this job's tokens: a reused worker may hold an earlier job's.
    forget_tokens(*(cluster for cluster, _ in credentials.clusters))
    for token in credentials.tokens:
        use_token(token)
