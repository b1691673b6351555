"""How a cluster authenticates its clients: one frozen value per cluster, carried by its
endpoints (``cluster.json``'s ``security`` object, or the ``[source]``/``[target]`` keys of a
migration file).

::

    auth = "kerberos"                      # "none" (the default) or "kerberos"
    principal = "migrate@EXAMPLE.COM"      # who the client logs in as
    keytab = "/etc/security/migrate.keytab"  # log in from it; without: an existing ticket
    krb5_conf = "/etc/krb5.conf"           # the realm's configuration (KRB5_CONFIG)
    hbase_principal = "hbase/_HOST@EXAMPLE.COM"    # HBase's servers' and Thrift gateways'
    #                                                principal
    hbase_master_principal = "hbase-master/_HOST@EXAMPLE.COM"  # the masters', where it is
    #                                       not hbase_principal (hbase.master.kerberos.principal)
    http_principal = "HTTP/_HOST@EXAMPLE.COM"      # WebHDFS's SPNEGO principal
    zookeeper_principal = "zookeeper/_HOST@EXAMPLE.COM"
    qop = "auth"                           # hbase.thrift.security.qop: auth, auth-int, auth-conf
    rpc_protection = "authentication"      # hbase.rpc.protection: authentication, integrity,
    #                                        privacy, or a list of them, most wanted first
    tls_ca_file = "/etc/ssl/ca.pem"        # CA bundle for https:// WebHDFS and HBase's RPC TLS
    rpc_tls = "on"                         # TLS on HBase's own RPC (HBase 2.6+:
    #                                        hbase.client.netty.tls.enabled); "off" the default
    rpc_tls_verify_hostname = "true"       # hbase.client.netty.tls.verify.server.hostname
    tls_cert_file = "/etc/ssl/migrate.pem" # the client's certificate (PEM) and its key, for
    tls_key_file = "/etc/ssl/migrate.key"  # servers that want one (HBase's default, NEED)

``_HOST`` stands for the host of the endpoint a client connects to, as in HBase's and
Hadoop's own settings. The value names files, never holds a secret.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from hbase_migrate.errors import ConfigError

log = logging.getLogger(__name__)
_warned: set[str] = set()

AUTHS = ("none", "kerberos")
QOPS = ("auth", "auth-int", "auth-conf")
RPC_PROTECTIONS = ("authentication", "integrity", "privacy")
HOST_PLACEHOLDER = "_HOST"
PATH_KEYS = ("keytab", "krb5_conf", "tls_ca_file", "tls_cert_file", "tls_key_file")
SWITCHES = {"rpc_tls": ("off", "on"), "rpc_tls_verify_hostname": ("true", "false")}


@dataclass(frozen=True)
class ClusterSecurity:
    """A cluster's client authentication (see the module's docstring)."""

    auth: str = "none"
    principal: str | None = None
    keytab: str | None = None
    krb5_conf: str | None = None
    hbase_principal: str = "hbase/_HOST"
    hbase_master_principal: str | None = None  # None: hbase_principal
    http_principal: str = "HTTP/_HOST"
    zookeeper_principal: str = "zookeeper/_HOST"
    qop: str = "auth"
    rpc_protection: str = "authentication"
    tls_ca_file: str | None = None
    rpc_tls: str = "off"
    rpc_tls_verify_hostname: str = "true"
    tls_cert_file: str | None = None
    tls_key_file: str | None = None

    def __post_init__(self) -> None:
        if self.auth not in AUTHS:
            raise ConfigError(f"security: auth must be one of {AUTHS}, got {self.auth!r}")
        if self.qop not in QOPS:
            raise ConfigError(f"security: qop must be one of {QOPS}, got {self.qop!r}")
        wanted = [p.strip() for p in self.rpc_protection.split(",")]
        if not all(p in RPC_PROTECTIONS for p in wanted):
            raise ConfigError(f"security: rpc_protection must be one or more of "
                              f"{RPC_PROTECTIONS}, got {self.rpc_protection!r}")
        for key, allowed in SWITCHES.items():
            if getattr(self, key) not in allowed:
                raise ConfigError(f"security: {key} must be one of {allowed}, got "
                                  f"{getattr(self, key)!r}")
        if bool(self.tls_cert_file) != bool(self.tls_key_file):
            raise ConfigError("security: tls_cert_file and tls_key_file go together (the "
                              "client's certificate and its key); one is missing")
        if self.keytab and not self.principal:
            raise ConfigError(f"security: keytab {self.keytab} given without principal; "
                              "name the principal to log in as")
        for key in ("hbase_principal", "hbase_master_principal", "http_principal",
                    "zookeeper_principal"):
            if getattr(self, key) is None:
                continue
            service, _, _ = str(getattr(self, key)).partition("/")
            if not service or "@" in service:
                raise ConfigError(f"security: {key} must look like service/_HOST@REALM, got "
                                  f"{getattr(self, key)!r}")

    @property
    def kerberos(self) -> bool:
        return self.auth == "kerberos"

    @property
    def tls(self) -> bool:
        """Whether HBase's own RPC goes over TLS."""
        return self.rpc_tls == "on"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str,
                  folder: Path | None = None) -> ClusterSecurity:
        """From a JSON object or TOML keys; relative paths resolve against ``folder``."""
        values = cls.checked(data, source, folder)
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def checked(cls, data: dict[str, Any], source: str,
                folder: Path | None = None) -> dict[str, str]:
        """Some of the settings (overrides of another source's), each checked on its own:
        known keys, strings, allowed values; relative paths resolved against ``folder``."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: security: unknown key {unknown[0]!r}; expected one "
                              f"of {', '.join(sorted(known))}")
        for key, value in data.items():
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{source}: security: {key}: expected a string, got "
                                  f"{value!r}")
        values = {k: v for k, v in data.items() if v is not None}
        if folder is not None:
            for key in PATH_KEYS:
                if key in values and not Path(values[key]).is_absolute():
                    values[key] = str(folder / values[key])
        alone = {k: v for k, v in values.items()
                 if k not in ("keytab", "principal", "tls_cert_file", "tls_key_file")}
        try:
            cls(**alone)  # each value on its own (pairs of keys are checked when merged)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None
        return values

    def merged(self, overrides: dict[str, Any]) -> ClusterSecurity:
        return replace(self, **overrides)


SECURITY_KEYS = tuple(f.name for f in fields(ClusterSecurity))


def service_principal(pattern: str, host: str) -> tuple[str, str]:
    """``(service, host)`` of a service principal pattern for an endpoint's ``host``:
    ``hbase/_HOST@R`` -> ``("hbase", host)``; a fixed host in the pattern is kept."""
    name = pattern.partition("@")[0]
    service, _, fixed = name.partition("/")
    return service, (host if fixed in ("", HOST_PLACEHOLDER) else fixed)


def warn_if_exposed(path: str | os.PathLike[str], what: str) -> None:
    """Warn (once per file) when ``path``, a keytab or a file naming Kerberos settings, can
    be read or changed by users other than its owner."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO) and str(path) not in _warned:
        _warned.add(str(path))
        log.warning("%s can be read by other users (mode %o; %s); chmod 600 it", path, mode,
                    what)
