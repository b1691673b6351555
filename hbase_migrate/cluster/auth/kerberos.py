"""Kerberos credentials of this process, and the one-line errors a failed login gives.

A cluster with ``auth = "kerberos"`` (:class:`~hbase_migrate.cluster.auth.security.ClusterSecurity`)
is reached with a ticket of its ``principal``; one process may log in as several (a source
and a target in two realms without a trust). Each keytab identity has its own credential
cache in one collection (``KRB5CCNAME=DIR:`` a folder of mode 0700, removed at exit or by a
later login once its process is gone): :func:`login` gets the ticket from the keytab into
the principal's cache (GSSAPI's credential store: the keytab's path goes to MIT Kerberos,
never its contents), and again whenever half its life has passed; every client names its
principal (Thrift SASL and ZooKeeper SASL through pure-sasl, WebHDFS and Thrift-over-HTTP
SPNEGO through requests-kerberos, which also refreshes before each token: :func:`http_auth`;
HBase's RPC through python-gssapi with the principal's own :func:`credentials`),
and MIT picks the cache of that principal from the collection, so no environment changes per
call and threads need no care. Two clusters with different ``krb5_conf`` files are read
through one merged file in the private folder (:mod:`hbase_migrate.cluster.auth.krb5conf`).
Child processes (Spark's Python workers) share the collection of the process that made it.
A Spark task on a worker that has none of this (:mod:`hbase_migrate.ranges.credentials`)
first names, with :func:`use_local_copies`, the shipped copies of a keytab and
``krb5.conf`` absent at their configured paths; its tickets stay in the process's keyring
(a private folder where keyrings are forbidden). Without a keytab the user's own ticket
cache (from ``kinit``) is used, and its expiry is an error saying so; such an identity is
the process's only one. Keytab contents and tickets never leave the library: only file names
and principals appear in messages.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
import threading
from typing import Any

from hbase_migrate.cluster.auth.krb5conf import Krb5ConfConflict, merge
from hbase_migrate.cluster.auth.security import ClusterSecurity, service_principal, warn_if_exposed
from hbase_migrate.cluster.errors import ClusterError
from hbase_migrate.processes import process_alive

log = logging.getLogger(__name__)

_lock = threading.RLock()
# The Kerberos identities this process holds: principal ("" for the ticket cache's) ->
# (principal, keytab, krb5_conf).
_process: dict[str, tuple[str | None, str | None, str | None]] = {}
# The krb5_conf files in use (None: the configuration the process started with), the
# credential cache collection, this process's private folder, KRB5_CONFIG at the start.
_configs: list[str | None] = []
_collection: list[str] = []
_folder: list[str] = []
_started_config: dict[str, str] = {}

# Names the cache collection this process made, for its child processes.
_CACHE_ENV = "HBASE_MIGRATE_KRB5_CACHES"
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


def sweep_caches(where: str) -> None:
    """Remove this user's private caches whose process is gone: a process killed, or ended
    without running atexit (``os._exit``), leaves its folder and tickets behind."""
    for entry in os.scandir(where):
        pid = entry.name.removeprefix(CACHE_PREFIX).partition("-")[0]
        if entry.name.startswith(CACHE_PREFIX) and pid.isdigit() and \
                entry.is_dir(follow_symlinks=False) and \
                entry.stat(follow_symlinks=False).st_uid == os.getuid() and \
                not process_alive(int(pid)):
            shutil.rmtree(entry.path, ignore_errors=True)


def login(security: ClusterSecurity | None, cluster: str, endpoint: str) -> None:
    """Make sure this process can authenticate as the cluster's principal before a client
    connects to ``endpoint``: a valid ticket (from the keytab, got again once half its life
    has passed), or a :class:`KerberosError` saying what is wrong. No-op for unsecured
    clusters."""
    if security is None or not security.kerberos:
        return
    with _lock:
        _take(security, cluster)
        _check_ticket(security, cluster, endpoint)


def refresh(security: ClusterSecurity) -> None:
    """Before a handshake on a connection made earlier (an HTTP token after a 401): a fresh
    ticket from the keytab once half the last one's life has passed. Failures are left to
    the handshake, which reports them."""
    if not security.keytab or security.principal not in _process:
        return
    import gssapi
    from gssapi.raw.misc import GSSError

    with _lock, contextlib.suppress(GSSError):
        gssapi.Credentials(name=_name(security), usage="initiate", store=_store(security))


def forget() -> None:
    """Forget the identities this process holds (a test that put its environment back)."""
    with _lock:
        for held in (_process, _configs, _collection, _started_config):
            held.clear()


def logins() -> list[dict[str, str | None]]:
    """The identities this process holds: principal, the keytab read (this host's copy)
    and the credential cache of each (file names only)."""
    with _lock:
        return [{"principal": p, "keytab": local_path(k) if k else None,
                 "ccache": _ccache(p) if k and p and _collection else None}
                for p, k, _ in _process.values()]


def _take(security: ClusterSecurity, cluster: str) -> None:
    """Hold ``security``'s identity beside those this process holds already: the merged
    ``krb5.conf`` of all of them, and a credential cache for each in one collection."""
    key = security.principal or ""
    from_caches = {k for k, held in _process.items() if not held[1]}
    if not security.keytab:
        from_caches.add(key)
    if from_caches and len({*_process, key}) > 1:
        held = next(k for k in _process if k != key) or "the ticket cache's principal"
        raise KerberosError(
            f"cluster {cluster!r}, principal {security.principal or 'of the ticket cache'}: "
            f"this process also logs in as {held} for another cluster, and two Kerberos "
            "identities in one process need a keytab each (one has only a ticket cache); "
            "set keytab and principal for every secured cluster")
    conf = local_path(security.krb5_conf) if security.krb5_conf else None
    if conf:
        _check_readable(conf, "krb5_conf", cluster)
    if conf not in _configs:
        _configs.append(conf)
        _use_configs(cluster)
    if security.keytab:
        _check_readable(local_path(security.keytab), "keytab", cluster)
        if not _collection:
            _collection.append(_shared_collection() or _private_collection())
            os.environ["KRB5CCNAME"] = _collection[0]
    _process[key] = (security.principal, security.keytab, security.krb5_conf)


def _use_configs(cluster: str) -> None:
    """Point ``KRB5_CONFIG`` at the one ``krb5.conf`` in use, or at one merged from all
    (a cluster without ``krb5_conf`` contributes the configuration this process started
    with)."""
    named = [c for c in _configs if c]
    if len(_configs) == 1 and named:
        os.environ["KRB5_CONFIG"] = named[0]
        return
    if len(_configs) == 1:
        return
    started = _started_config.setdefault("KRB5_CONFIG", os.environ.get(
        "KRB5_CONFIG", "/etc/krb5.conf"))
    paths = [p for c in _configs for p in ([c] if c else started.split(":"))
             if os.path.exists(p)]
    files = []
    for path in dict.fromkeys(paths):
        with open(path, encoding="utf-8") as handle:
            files.append((path, handle.read()))
    try:
        text, unmapped = merge(files)
    except Krb5ConfConflict as exc:
        raise KerberosError(f"cluster {cluster!r}: {exc}") from None
    if unmapped:
        log.info("Kerberos: hosts %s map to different realms in %s: their services' tickets "
                 "are asked of each client's own realm", ", ".join(unmapped),
                 ", ".join(p for p, _ in files))
    folder = _config_folder()
    merged = os.path.join(folder, f"krb5-{len(_configs)}.conf")  # a new name: not cached
    with open(merged, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.environ["KRB5_CONFIG"] = merged


def _config_folder() -> str:
    if not _folder:
        sweep_caches(tempfile.gettempdir())
        _folder.append(tempfile.mkdtemp(prefix=f"{CACHE_PREFIX}{os.getpid()}-"))  # 0700
        atexit.register(shutil.rmtree, _folder[0], True)
    return _folder[0]


def _shared_collection() -> str | None:
    """The cache collection of the parent process that made it (a Spark task's worker,
    which may end without running atexit), when this process is its child."""
    inherited = os.environ.get(_CACHE_ENV, "")
    if _local_copies or not inherited.startswith("DIR:") or \
            not os.path.isdir(inherited.removeprefix("DIR:")):
        return None
    return inherited


def _private_collection() -> str:
    """A new cache collection: in the kernel's keyring of this process for a Spark task
    (nothing on the worker's disk; a folder where keyrings are not allowed), else a folder
    of mode 0700 removed at exit, which child processes share."""
    if _local_copies and _keyring_usable():
        return f"KEYRING:process:hbase-migrate-{os.getpid()}"
    folder = os.path.join(_config_folder(), "ccaches")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if not _local_copies:
        os.environ[_CACHE_ENV] = f"DIR:{folder}"
    return f"DIR:{folder}"


def _keyring_usable() -> bool:
    """Whether the kernel's keyrings hold a cache (container sandboxes often forbid them)."""
    try:
        import krb5  # pykrb5, which requests-kerberos's pyspnego brings

        context = krb5.init_context()
        probe = krb5.cc_resolve(context, b"KEYRING:process:hbase-migrate-probe")
        krb5.cc_initialize(context, probe, krb5.parse_name_flags(context, b"probe@PROBE"))
        krb5.cc_destroy(context, probe)
    except Exception:  # any failure: no keyring for us
        return False
    return True


def _ccache(principal: str) -> str:
    """The credential cache of ``principal`` in the collection (the same name in every
    process sharing it)."""
    slug = hashlib.sha256(principal.encode()).hexdigest()[:16]
    collection = _collection[0]
    if collection.startswith("DIR:"):
        return f"DIR::{collection.removeprefix('DIR:')}/tkt-{slug}"
    return f"{collection}:{slug}"


def _name(security: ClusterSecurity) -> Any:
    import gssapi

    return (gssapi.Name(security.principal, gssapi.NameType.kerberos_principal)
            if security.principal else None)


def _store(security: ClusterSecurity) -> dict[bytes | str, bytes | str] | None:
    """Where a keytab identity's tickets come from and go: MIT gets them from the keytab
    into the principal's own cache, and again once half their life has passed."""
    if not security.keytab or not security.principal or not _collection:
        return None
    return {b"client_keytab": local_path(security.keytab).encode(),
            b"ccache": _ccache(security.principal).encode()}


def credentials(security: ClusterSecurity) -> Any:
    """The GSSAPI credentials of ``security``'s principal (after :func:`login`): its own
    cache in the collection, filled from its keytab; the ticket cache's without a keytab."""
    import gssapi

    with _lock:
        return gssapi.Credentials(name=_name(security), usage="initiate",
                                  store=_store(security))


def _check_ticket(security: ClusterSecurity, cluster: str, endpoint: str) -> None:
    import gssapi
    from gssapi.raw.misc import GSSError

    try:
        creds = gssapi.Credentials(name=_name(security), usage="initiate",
                                   store=_store(security))
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

    class Refreshing(HTTPKerberosAuth):  # type: ignore[misc]
        """A token made with a ticket refreshed from the keytab when half-lived."""

        def generate_request_header(self, *args: Any, **kwargs: Any) -> Any:
            refresh(security)
            return super().generate_request_header(*args, **kwargs)

    service, host = service_principal(security.http_principal, url_host)
    return Refreshing(mutual_authentication=OPTIONAL, service=service,
                      hostname_override=host, principal=security.principal,
                      force_preemptive=preemptive)


def kazoo_sasl_options(security: ClusterSecurity, zk_host: str) -> dict[str, Any]:
    """kazoo's ``sasl_options`` for ZooKeeper's SASL (GSSAPI)."""
    service, _ = service_principal(security.zookeeper_principal, zk_host)
    options: dict[str, Any] = {"mechanism": "GSSAPI", "service": service}
    if security.principal:
        options["principal"] = security.principal
    return options
