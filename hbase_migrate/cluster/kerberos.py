"""Kerberos credentials of this process, and the one-line errors a failed login gives.

A cluster with ``auth = "kerberos"`` (:class:`~hbase_migrate.cluster.security.ClusterSecurity`)
is reached with a ticket of its ``principal``. With a ``keytab``, :func:`login` points MIT
Kerberos at it as the process's client keytab (``KRB5_CLIENT_KTNAME``) and at a private
credential cache (``KRB5CCNAME``, a folder of mode 0700 removed at exit, or by a later
login once its process is gone, killed or ended without exit handlers): the library then
gets the first ticket from the keytab and a fresh one whenever the cached one nears its end,
for every client of the process (Thrift SASL, ZooKeeper SASL, WebHDFS SPNEGO), so a long
``--follow`` rides out ticket expiry. Child processes of the same identity (Spark's Python
workers) share the cache of the process that made it. A Spark task on a worker that has none
of this (:mod:`hbase_migrate.ranges.credentials`) first names, with :func:`use_local_copies`,
the shipped copies of a keytab and ``krb5.conf`` absent at their configured paths; its
tickets stay in the process's memory. Without a keytab the user's own ticket
cache (from ``kinit``) is used, and its expiry is an error saying so. Keytab contents and
tickets never leave the library: only file names and principals appear in messages.

One process holds one Kerberos identity (principal, keytab, ``krb5.conf``): two clusters
with different ones are refused with an error naming both.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
from typing import Any

from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.cluster.security import ClusterSecurity, service_principal, warn_if_exposed

log = logging.getLogger(__name__)

_lock = threading.Lock()
# The Kerberos identity this process took (principal, keytab, krb5_conf), under "held".
_process: dict[str, tuple[str | None, str | None, str | None]] = {}

# Names the identity whose private cache KRB5CCNAME is, for child processes.
_IDENTITY_ENV = "HBASE_MIGRATE_KRB5_IDENTITY"
# In a Spark task: configured path -> this host's copy (see use_local_copies).
_local_copies: dict[str, str] = {}

# What MIT Kerberos says, and what it means for the user (first match wins).
_CAUSES = (
    (r"clock skew", "clock skew: this machine's clock differs from the KDC's by more than "
     "the allowed skew; synchronise the clocks (NTP)"),
    (r"client \S* ?not found|key table entry|no suitable keys",
     "wrong principal {principal}: it is not in the keytab or not known to the KDC; check "
     "principal and keytab"),
    (r"preauthentication failed|password incorrect|integrity check|bad encryption type|"
     r"key version", "wrong keytab: its keys for {principal} do not match the KDC's (an old "
     "or another realm's keytab); export a fresh keytab"),
    (r"server \S* ?not found",
     "the service principal {service} is not known to the KDC; check the cluster's "
     "hbase_principal/http_principal/zookeeper_principal"),
    (r"expired", "the ticket of {principal} has expired; run kinit again, or set keytab "
     "so that tickets are renewed from it"),
    (r"no (kerberos )?credentials|credentials cache",
     "no ticket for {principal}: run kinit, or set keytab to log in from it"),
    (r"cannot (contact|find) any kdc",
     "no KDC answered for the realm; check krb5_conf and that the KDC is reachable"),
)


class KerberosError(ClusterError):
    """A Kerberos login or handshake failed; the message names cluster, endpoint and
    principal and what to do."""


def explain(exc: BaseException | str, security: ClusterSecurity, cluster: str, endpoint: str,
            service: str = "") -> KerberosError:
    """The one-line error of a failed login or handshake."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    principal = security.principal or "the ticket cache's principal"
    for pattern, advice in _CAUSES:
        if re.search(pattern, lowered):
            what = advice.format(principal=principal, service=service or "of the service")
            break
    else:
        what = f"Kerberos failed ({text}); check principal, keytab and krb5_conf"
    return KerberosError(f"cluster {cluster!r}, {endpoint}, principal {principal}: {what}",
                         endpoint=endpoint)


def _check_readable(path: str, what: str, cluster: str) -> None:
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise KerberosError(f"cluster {cluster!r}: {what} {path} is unreadable "
                            f"({exc.strerror}); give a {what} file this user can read") from None
    if what == "keytab":
        warn_if_exposed(path, f"the keytab of cluster {cluster!r}")


def use_local_copies(copies: dict[str, str]) -> None:
    """Log in from ``copies[path]`` wherever a cluster's settings name ``path`` (a keytab
    or ``krb5.conf`` a Spark task received from the driver), with tickets kept in this
    process's memory: nothing of them is left on the worker's disk."""
    with _lock:
        _local_copies.update(copies)


def local_path(path: str) -> str:
    """Where this process reads the file the settings name ``path``."""
    return _local_copies.get(path, path)


CACHE_PREFIX = "hbase-migrate-krb5-"  # + the owner's pid, "-", random


def _private_cache() -> str:
    if _local_copies:
        return "MEMORY:hbase-migrate"
    sweep_caches(tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=f"{CACHE_PREFIX}{os.getpid()}-")  # mode 0700
    atexit.register(shutil.rmtree, folder, True)
    return f"FILE:{os.path.join(folder, 'ccache')}"


def sweep_caches(where: str) -> None:
    """Remove this user's private caches whose process is gone: a process killed, or ended
    without running atexit (``os._exit``), leaves its folder and tickets behind."""
    for entry in os.scandir(where):
        pid = entry.name.removeprefix(CACHE_PREFIX).partition("-")[0]
        if entry.name.startswith(CACHE_PREFIX) and pid.isdigit() and \
                entry.is_dir(follow_symlinks=False) and \
                entry.stat(follow_symlinks=False).st_uid == os.getuid() and \
                not _alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def login(security: ClusterSecurity | None, cluster: str, endpoint: str) -> None:
    """Make sure this process can authenticate as the cluster's principal before a client
    connects to ``endpoint``: a valid ticket (from the keytab, renewed by the library), or
    a :class:`KerberosError` saying what is wrong. No-op for unsecured clusters."""
    if security is None or not security.kerberos:
        return
    identity = (security.principal, security.keytab, security.krb5_conf)
    with _lock:
        held = _process.get("held")
        if held is not None and held != identity:
            raise KerberosError(
                f"cluster {cluster!r}: this process already uses the Kerberos identity "
                f"{held[0]} (keytab {held[1]}, krb5_conf {held[2]}); one "
                f"process holds one identity: give both clusters the same principal, keytab "
                f"and krb5_conf, or run the steps in separate processes")
        if held is None:
            if security.krb5_conf:
                _check_readable(local_path(security.krb5_conf), "krb5_conf", cluster)
                os.environ["KRB5_CONFIG"] = local_path(security.krb5_conf)
            if security.keytab:
                _check_readable(local_path(security.keytab), "keytab", cluster)
                os.environ["KRB5_CLIENT_KTNAME"] = local_path(security.keytab)
                # A child of a process that logged in as the same identity (a Spark task's
                # worker, which may end without running atexit) shares its parent's cache.
                if os.environ.get(_IDENTITY_ENV) != repr(identity):
                    os.environ["KRB5CCNAME"] = _private_cache()
                    if not _local_copies:  # a memory cache is no child's to share
                        os.environ[_IDENTITY_ENV] = repr(identity)
            _process["held"] = identity
        _check_ticket(security, cluster, endpoint)


def _check_ticket(security: ClusterSecurity, cluster: str, endpoint: str) -> None:
    import gssapi
    from gssapi.raw.misc import GSSError

    try:
        name = (gssapi.Name(security.principal, gssapi.NameType.kerberos_principal)
                if security.principal else None)
        creds = gssapi.Credentials(name=name, usage="initiate")
        if not creds.lifetime:
            raise KerberosError("ticket expired")
    except (GSSError, KerberosError) as exc:
        raise explain(_keytab_login_error(security) or exc, security, cluster,
                      endpoint) from None


def _keytab_login_error(security: ClusterSecurity) -> str | None:
    """Why a login from the keytab fails, in MIT's words: GSSAPI reports every failed
    keytab login as "no credentials", so ask ``kinit`` (into a memory cache: nothing is
    written) for the reason. None without a keytab or without ``kinit``."""
    kinit = shutil.which("kinit")
    if not security.keytab or not security.principal or not kinit:
        return None
    done = subprocess.run([kinit, "-c", "MEMORY:diagnosis", "-k", "-t",
                           local_path(security.keytab), security.principal],
                          capture_output=True, text=True, timeout=30, check=False)
    return (done.stderr.strip() or None) if done.returncode else None


def http_auth(security: ClusterSecurity, url_host: str, *, preemptive: bool = False) -> Any:
    """SPNEGO for WebHDFS and Thrift-over-HTTP requests (``requests`` auth), for a cluster's
    HTTP principal; ``preemptive``: the token goes with the first request (a gateway that
    wants one on every POST), not after a 401."""
    from requests_kerberos import OPTIONAL, HTTPKerberosAuth

    service, host = service_principal(security.http_principal, url_host)
    return HTTPKerberosAuth(mutual_authentication=OPTIONAL, service=service,
                            hostname_override=host, principal=security.principal,
                            force_preemptive=preemptive)


def kazoo_sasl_options(security: ClusterSecurity, zk_host: str) -> dict[str, Any]:
    """kazoo's ``sasl_options`` for ZooKeeper's SASL (GSSAPI)."""
    service, _ = service_principal(security.zookeeper_principal, zk_host)
    options: dict[str, Any] = {"mechanism": "GSSAPI", "service": service}
    if security.principal:
        options["principal"] = security.principal
    return options
