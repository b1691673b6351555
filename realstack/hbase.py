"""Real Apache HBase in one JVM: ``RealHBase`` starts the ``hbase`` Maven module's launcher
(HBase's own test utility: mini HDFS with WebHDFS, ZooKeeper, master, region servers; HBase's
Thrift1 and Thrift2 servers) and waits for its ready line, the same ``cluster.json`` as the
embedded cluster's. The admin endpoint it names answers the embedded cluster's operations
(``roll``, ``flush``, ``move``, ``kill``, ``clean``, ``finish-split``, ``replication``,
``bulk-load``, ``info``), so ``stackprocs.admin_client.call_admin`` works on both; ``split``
(``{"table", "at"}``) is its own.

With ``kerberos`` the stack is secured (:mod:`realstack.kdc`): a KDC with a temporary realm
starts first in the stack folder, which then holds, beside ``cluster.json`` (and its
``security`` object, ``rpc_protection`` among its keys), the client's ``client.keytab`` and
``krb5.conf``; its regions load HBase's ``TokenProvider``, so it issues delegation tokens
(unless ``token_provider`` is False). With ``thrift_http`` both gateways speak Thrift over HTTP
(``transport = "http"`` in ``cluster.json``), asking for SPNEGO when the stack is secured.
With ``rpc_tls`` (HBase 2.6+) the master and region servers speak their RPC over TLS only
(or beside plain RPC with ``rpc_tls_plaintext``), from certificates made at start in
``tls/`` (:mod:`realstack.tls`); ``cluster.json``'s ``security`` names the client's."""

from __future__ import annotations

import json
import logging
import os
import re
import select
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from hbase_migrate.cluster.auth.security import RPC_PROTECTIONS
from realstack.kdc import HOST, Kdc, realm_for
from realstack.maven import (
    RealStackError,
    cache_root,
    java_command,
    module_classpath,
    module_key,
)
from realstack.tls import make_tls
from stackprocs.process import die_with_parent, log_tail, stop_child

log = logging.getLogger(__name__)

MAIN_CLASS = "hbasemigrate.realstack.RealHBase"
DEFAULT_VERSION = "2.6.1"
WAL_COMPRESSION = ("none", "dict", "dict+tags")
QOPS = ("auth", "auth-int", "auth-conf")
CLIENT_PRINCIPAL = "hbase-migrate"
# The stack's service principals (RealHBase.java: principal()).
SERVICES = ("hbase/localhost", f"HTTP/{HOST}", f"zookeeper/{HOST}")
PHOENIX_WAL_CODEC = "org.apache.hadoop.hbase.regionserver.wal.IndexedWALEditCodec"


@dataclass(frozen=True)
class RealHBaseOptions:
    """What the launcher is asked for; durations in milliseconds, as HBase's settings."""

    hbase_version: str = DEFAULT_VERSION
    region_servers: int = 2
    masters: int = 1                   # more: backup masters (`kill-master` fails over)
    wal_compression: str = "none"      # none | dict | dict+tags
    value_compression: str = "none"    # none | gz | snappy | lz4 | zstd | ...
    roll_period_ms: int = 3_600_000
    roll_size: int = 64 * 1024 * 1024
    archive_ttl_ms: int = 600_000
    cleaner_interval_ms: int = 10_000
    replication_peer: str | None = None
    name: str = "realhbase"
    heap: str = "1g"
    kerberos: bool = False
    qop: str = "auth"                  # hbase.thrift.security.qop of both gateways
    rpc_protection: str = "authentication"  # hbase.rpc.protection: a level, or a list of
    #                                         them the servers offer (most wanted first)
    client_ticket_lifetime: str = "10h"  # the client principal's tickets (short: renewals)
    thrift_http: bool = False          # both gateways in HTTP mode (SPNEGO with kerberos)
    gateways: bool = True              # False: no Thrift gateway (cluster.json: client native)
    token_provider: bool = True        # with kerberos: HBase's TokenProvider on every region
    #                                    (HBase issues delegation tokens); False: none
    client_superuser: bool = False     # with kerberos: the client principal in HDFS's
    #                                    superuser group, as ExportSnapshot's user (the copy
    #                                    by HBase snapshot writes the target's HBase root)
    kdc: str | None = None             # with kerberos: another stack's folder, whose KDC
    #                                    (and realm) this one uses instead of its own
    rpc_tls: bool = False              # TLS on HBase's RPC (hbase.server.netty.tls.enabled)
    rpc_tls_plaintext: bool = False    # with rpc_tls: plain RPC accepted too (supportplaintext)
    phoenix: str | None = None         # a Phoenix release (phoenix-core 4.x for 1.x, 5.x for
    #                                    2.x): Phoenix in the stack, its WAL codec, "sql"

    def arguments(self, data_dir: Path) -> list[str]:
        if self.wal_compression not in WAL_COMPRESSION:
            raise RealStackError(f"WAL compression must be one of {WAL_COMPRESSION}, got "
                                 f"{self.wal_compression!r}")
        args = {"dir": str(data_dir), "name": self.name,
                "region-servers": str(self.region_servers),
                "wal-compression": self.wal_compression,
                "value-compression": self.value_compression,
                "roll-period": str(self.roll_period_ms), "roll-size": str(self.roll_size),
                "archive-ttl": str(self.archive_ttl_ms),
                "cleaner-interval": str(self.cleaner_interval_ms)}
        if self.masters != 1:
            args["masters"] = str(self.masters)
        if self.replication_peer:
            args["replication-peer"] = self.replication_peer
        if self.thrift_http:
            args["thrift-http"] = "true"
        if not self.gateways:
            args["gateways"] = "false"
        if self.phoenix:
            args["wal-codec"] = PHOENIX_WAL_CODEC
        if self.qop not in QOPS:
            raise RealStackError(f"QOP must be one of {QOPS}, got {self.qop!r}")
        check_rpc_protection(self.rpc_protection)
        if self.rpc_tls and not has_rpc_tls(self.hbase_version):
            raise RealStackError(f"HBase {self.hbase_version}: TLS on HBase's RPC (--rpc-tls) "
                                 "came with HBase 2.6")
        if is_1x(self.hbase_version):
            self._check_1x()
        return [part for key, value in args.items() for part in (f"--{key}", value)]

    def _check_1x(self) -> None:
        """What the HBase 1.x stack does not run, refused before any JVM starts."""
        unsupported = {"--value-compression": self.value_compression != "none",
                       "--kerberos": self.kerberos, "--thrift-http": self.thrift_http,
                       "--no-gateways": not self.gateways}
        named = [option for option, asked in unsupported.items() if asked]
        if named:
            raise RealStackError(f"HBase {self.hbase_version}: the 1.x stack does not run "
                                 f"{', '.join(named)} (WAL value compression is HBase 2.5+; "
                                 "the others are not built for 1.x)")


def is_1x(version: str) -> bool:
    """HBase 1.x, whose stack is the ``hbase1`` module (the 1.x API, on its own Hadoop)."""
    return version.startswith("1.")


def has_rpc_tls(version: str) -> bool:
    """Whether HBase ``version`` serves its RPC over TLS (``X509Util``: 2.6 and later)."""
    numbers = [int(part) for part in version.partition("-")[0].split(".")[:2]
               if part.isdigit()]
    return numbers >= [2, 6]


# hbase-thrift is on Maven Central up to 1.4.13 only; later 1.x releases run its gateways.
LAST_1X_THRIFT = "1.4.13"


def _thrift_version(version: str) -> str:
    release = version.partition("-")[0]
    numbers = tuple(int(part) for part in release.split(".") if part.isdigit())
    return LAST_1X_THRIFT if numbers > (1, 4, 13) else version


def check_rpc_protection(value: str) -> str:
    """``value`` if it is an ``hbase.rpc.protection`` HBase takes (levels separated by
    commas, no spaces), else RealStackError naming it."""
    if not all(level in RPC_PROTECTIONS for level in value.split(",")):
        raise RealStackError(f"RPC protection must be one or more of "
                             f"{', '.join(RPC_PROTECTIONS)} separated by commas, got {value!r}")
    return value


# The hbase module's optional artifacts (a property naming each), replaced by hbase-common
# where the mirror has none of the version: HBase 2.4 has no codec modules, and hbase-thrift
# is there for a few releases only (a stack of such a version runs with no gateway).
OPTIONAL_ARTIFACTS = {"hbase.codecs.artifact": "hbase-compression-",
                      "hbase.brotli.artifact": "hbase-compression-",
                      "hbase.thrift.artifact": "hbase-thrift"}

# The DataNode's WebHDFS answers OPEN with Netty 4's HTTP codec: where the resolved tree has
# none (HBase 2.4 on Hadoop 2.10.0: every OPEN's connection closed, NoClassDefFoundError
# HttpRequestDecoder in the log), the netty-all Hadoop 2.10.2 brings to HBase 2.5 and 2.6.
NETTY_HTTP = ("/netty-all/", "/netty-codec-http/")
NETTY_ALL = {"webhdfs.netty.group": "io.netty", "webhdfs.netty.artifact": "netty-all",
             "webhdfs.netty.version": "4.1.50.Final"}
# The NameNode's WebHDFS (Jersey 1) needs JAX-RS 1.1's API: where the tree has JAX-RS 2's
# only (HBase 3.0 on Hadoop 3.2: every WebHDFS call answered 500, AbstractMethodError in
# UriBuilder), the jsr311-api Hadoop itself depends on, first.
JAXRS_1 = "/jsr311-api/"
JSR311_API = {"webhdfs.jaxrs.group": "javax.ws.rs", "webhdfs.jaxrs.artifact": "jsr311-api",
              "webhdfs.jaxrs.version": "1.1.1"}


def hbase_classpath(version: str = DEFAULT_VERSION, phoenix: str | None = None) -> list[str]:
    """The launcher's class path for an HBase version (resolved once, then cached). HBase
    1.x is the ``hbase1`` module, with the Hadoop the release depends on. ``phoenix`` (a
    phoenix-core 4.x release for 1.x, a Phoenix 5.x for 2.x) adds Apache Phoenix. Where the
    codec modules cannot be had, the stack runs without them (SNAPPY, LZ4 and ZSTD then need
    Hadoop's native library, BROTLI fails); without hbase-thrift, with no gateway; without
    Netty's HTTP codec, with :data:`NETTY_ALL`; without JAX-RS 1.1, with :data:`JSR311_API`.
    What a version's class path was settled with is kept (:func:`settled_properties`): later
    calls read the cached class path and run no Maven, nor ask again for what the version
    does not publish."""
    base = {"hbase.version": version, **({"phoenix.version": phoenix} if phoenix else {})}
    if is_1x(version):
        return module_classpath("hbase1", {**base,
                                           "hbase.thrift.version": _thrift_version(version)})
    record = settled_path(base)
    settled = settled_properties(record)
    if settled is not None:
        try:
            return module_classpath("hbase", settled)  # cached: no Maven at all
        except RealStackError as exc:  # what was settled cannot be had any more: again
            log.info("HBase %s: the class path settled before failed (%s); settling it again",
                     version, exc)
    properties = dict(base)
    while True:
        try:
            entries = module_classpath("hbase", properties)
        except RealStackError as exc:
            missing = {key for key, artifact in OPTIONAL_ARTIFACTS.items()
                       if artifact in str(exc) and key not in properties}
            if not missing:
                raise
            log.info("HBase %s: Maven Central has no %s of it; resolving without", version,
                     ", ".join(unpublished(str(exc), version)))
            properties.update(dict.fromkeys(missing, "hbase-common"))
            continue
        gaps = {}
        if not any(jar in entry for entry in entries for jar in NETTY_HTTP):
            gaps.update(NETTY_ALL)
        if not any(JAXRS_1 in entry for entry in entries):
            gaps.update(JSR311_API)
        if not gaps or gaps.keys() <= properties.keys():
            _settle(record, properties)
            return entries
        properties.update(gaps)


def unpublished(failure: str, version: str) -> list[str]:
    """The optional artifacts of ``version`` a Maven failure says it could not find, by name
    (``hbase-thrift``, ``hbase-compression-brotli``...)."""
    named = re.findall(rf"org\.apache\.hbase:([\w.-]+?):(?:jar|pom):{re.escape(version)}\b",
                       failure)
    return sorted({a for a in named if a.startswith(tuple(OPTIONAL_ARTIFACTS.values()))})


def settled_path(base: dict[str, str]) -> Path:
    """Where the properties the ``hbase`` module's class path of ``base`` (the version, and
    Phoenix's) was settled with are kept: in the class paths' cache, keyed as that version's
    (the pom, the module's sources, the version)."""
    return cache_root() / f"{module_key('hbase', base)}.settled.json"


def settled_properties(record: Path) -> dict[str, str] | None:
    """The properties kept at ``record``; None when there are none (or unreadable ones)."""
    try:
        found = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(found, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in found.items()):
        return None
    return found


def _settle(record: Path, properties: dict[str, str]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f".{record.name}.{os.getpid()}")
    partial.write_text(json.dumps(properties, sort_keys=True), encoding="utf-8")
    os.replace(partial, record)  # another process reads it whole or not at all


def has_gateways(version: str = DEFAULT_VERSION) -> bool:
    """Whether a stack of HBase ``version`` can run the Thrift gateways: hbase-thrift of the
    version (of 1.4.13 for later 1.x) is on its class path, not left out for want of it."""
    return is_1x(version) or any("/hbase-thrift-" in entry for entry in hbase_classpath(version))


def choose_gateways(version: str, asked: bool | None, available: bool) -> tuple[bool, str]:
    """Whether a stack of HBase ``version`` runs the Thrift gateways, and a one-line note
    when it runs without them for want of hbase-thrift (empty otherwise). ``asked``: the
    user's ``--gateways`` (True) or ``--no-gateways`` (False), None for "where possible";
    ``available``: :func:`has_gateways`. Gateways asked for where there are none: an error
    saying what to run instead."""
    if asked is False:
        return False, ""
    if available:
        return True, ""
    if asked:
        raise RealStackError(f"HBase {version}: Maven Central has no hbase-thrift {version}, "
                             "so no Thrift gateway can run: start it with --no-gateways "
                             "(HBase's own RPC only)")
    return False, (f"HBase {version}: no hbase-thrift {version} on Maven Central; starting "
                   "without Thrift gateways (HBase's own RPC only, cluster.json client native)")


class RealHBase:
    """One real HBase stack in a child JVM; ``with RealHBase(dir, options) as stack:``."""

    def __init__(self, data_dir: str | os.PathLike[str],
                 options: RealHBaseOptions | None = None) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.options = options or RealHBaseOptions()
        self.described: dict[str, Any] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self.kdc: Kdc | None = None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "realstack.log"

    @property
    def cluster_json(self) -> Path:
        return self.data_dir / "cluster.json"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def start(self, timeout: float = 600.0) -> Self:
        """Build the class path if needed, launch the JVM and wait for its ready line."""
        classpath = hbase_classpath(self.options.hbase_version, self.options.phoenix)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        arguments = self.options.arguments(self.data_dir)
        # The GC log tells a slow cluster from a starved heap; an exhausted heap ends the
        # JVM (its log says so) rather than leaving it to stall every later call.
        jvm_options = [f"-Xlog:gc:file={self.data_dir / 'gc.log'}:uptime",
                       "-XX:+ExitOnOutOfMemoryError"]
        if self.options.kerberos:
            arguments += self._start_kdc()
            assert self.kdc is not None
            jvm_options.append(f"-Djava.security.krb5.conf={arguments[-1]}")
        if self.options.rpc_tls:
            tls = make_tls(self.data_dir / "tls", self.options.name)
            arguments += ["--rpc-tls", str(tls.folder), "--rpc-tls-plaintext",
                          str(self.options.rpc_tls_plaintext).lower()]
        if is_1x(self.options.hbase_version):
            # 1.x's Thrift gateways read the cluster's settings from the class path only:
            # the launcher writes them to conf/hbase-site.xml.
            (self.data_dir / "conf").mkdir(exist_ok=True)
            classpath = [*classpath, str(self.data_dir / "conf")]
        command = java_command(classpath, MAIN_CLASS, arguments, heap=self.options.heap,
                               jvm_options=tuple(jvm_options))
        with self.log_path.open("ab") as log_file:
            self._proc = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log_file,
                cwd=str(self.data_dir),
                preexec_fn=die_with_parent)  # noqa: PLW1509 - only prctl
        try:
            self.described = self._ready_line(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_kdc(self) -> list[str]:
        """Start the stack's KDC (its realm named after the stack), or use another stack's
        (``kdc``: its realm, the same service principals, a client principal of this
        stack's own); make the keytabs; the launcher's security arguments."""
        client_name = CLIENT_PRINCIPAL
        if self.options.kdc:
            self.kdc = Kdc.attach(self.options.kdc)
            service = self.kdc.export_principals(self.data_dir / "service.keytab", *SERVICES)
            client_name = f"{CLIENT_PRINCIPAL}/{self.options.name}"
            krb5_conf = self.data_dir / "krb5.conf"  # this stack's copy, as clusters ship
            krb5_conf.write_text(self.kdc.krb5_conf.read_text(encoding="utf-8"),
                                 encoding="utf-8")
        else:
            self.kdc = Kdc(self.data_dir, realm_for(self.options.name)).start()
            service = self.kdc.add_principals(self.data_dir / "service.keytab", *SERVICES)
            krb5_conf = self.kdc.krb5_conf
        client = self.kdc.add_principals(self.data_dir / "client.keytab", client_name,
                                         max_life=self.options.client_ticket_lifetime)
        return ["--keytab", str(service), "--realm", self.kdc.realm, "--qop", self.options.qop,
                "--rpc-protection", self.options.rpc_protection,
                "--token-provider", str(self.options.token_provider).lower(),
                "--client-superuser", str(self.options.client_superuser).lower(),
                "--client-principal", self.kdc.principal(client_name),
                "--client-keytab", str(client), "--krb5-conf", str(krb5_conf)]

    def _ready_line(self, timeout: float) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([proc.stdout], [], [], 1.0)
            if readable:
                line = proc.stdout.readline()
                if line:
                    return dict(json.loads(line))
            if proc.poll() is not None:
                raise RealStackError(
                    f"HBase {self.options.hbase_version} exited with code {proc.returncode} "
                    f"before it was ready; log {self.log_path}:\n{self._failure()}")
        raise RealStackError(f"HBase {self.options.hbase_version} was not ready within "
                             f"{timeout:g} s; log {self.log_path}:\n{self._failure()}")

    def _failure(self) -> str:
        text = log_tail(str(self.log_path), 400)
        found = [line for line in text.splitlines() if line.startswith("realstack:")
                 or ("Exception" in line and not line.startswith("\t"))]
        return "\n".join(found[-8:]) or "\n".join(text.splitlines()[-15:])

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM (the launcher shuts the mini cluster down), then SIGKILL after timeout."""
        if self._proc is not None:
            stop_child(self._proc, timeout)
            if self._proc.stdout is not None:
                self._proc.stdout.close()
        self._proc = None
        if self.kdc is not None:
            self.kdc.stop()
        self.kdc = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
