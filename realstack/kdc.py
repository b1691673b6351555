"""A Kerberos KDC for a secured real stack: MIT Kerberos (Debian's ``krb5-kdc``) run
unprivileged on a loopback port with a temporary realm kept in the stack folder.

``Kdc(folder)`` writes ``kdc.conf`` (the KDC's profile, ``KRB5_KDC_PROFILE``) and
``krb5.conf`` (what clients and the JVM read, ``KRB5_CONFIG``, ``java.security.krb5.conf``),
creates the database (``kdb5_util create -s``, a random master key read on stdin, never an
argument), adds principals with random keys and exports them to keytabs (``kadmin.local``),
then runs ``krb5kdc -n`` until stopped. A stack's realm is named after it (:func:`realm_for`);
``Kdc.attach(folder)`` uses the running KDC of another stack's folder (its realm) without
owning it, for a second stack in the same realm. Nothing of the machine's own Kerberos set-up
(``/etc/krb5.conf``, the default credential cache) is read or written: every command runs
with the folder's files in its environment.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Self

from realstack.maven import RealStackError
from stackprocs.process import ChildProcess, free_port

HOST = "127.0.0.1"
DEFAULT_REALM = "HBASE-MIGRATE.TEST"
# Enctypes both MIT's client library and Java 17's Kerberos speak.
ENCTYPES = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96"
TOOLS = ("krb5kdc", "kdb5_util", "kadmin.local")


def realm_for(name: str) -> str:
    """The realm of a stack called ``name``: ``source-a`` -> ``SOURCE-A.TEST``."""
    return f"{re.sub(r'[^A-Z0-9]+', '-', name.upper()).strip('-') or 'HBASE-MIGRATE'}.TEST"


def _tool(name: str) -> str:
    for folder in (None, "/usr/sbin", "/usr/bin"):
        found = shutil.which(name, path=folder)
        if found:
            return found
    raise RealStackError(f"{name} not found: the secured stack needs MIT Kerberos "
                         "(Debian: apt-get install -y krb5-kdc krb5-admin-server krb5-user)")


class Kdc(ChildProcess):
    """One KDC for one realm in ``folder``."""

    log_name = "kdc.log"

    def __init__(self, folder: str | os.PathLike[str], realm: str = DEFAULT_REALM) -> None:
        super().__init__(folder)
        self.realm = realm
        self.ticket_lifetime = "10h"
        self.port = 0

    @classmethod
    def attach(cls, folder: str | os.PathLike[str]) -> Kdc:
        """The KDC another stack started in ``folder`` (running; not stopped by this one)."""
        kdc = cls(folder)
        try:
            conf = kdc.kdc_conf.read_text(encoding="utf-8")
        except OSError as exc:
            raise RealStackError(f"no KDC in {kdc.data_dir} ({exc.strerror}): give the "
                                 "folder of a stack started with --kerberos") from None
        port = re.search(r"kdc_tcp_listen = [^:\s]+:(\d+)", conf)
        realm = re.search(r"\[realms\]\s+(\S+) = \{", conf)
        assert port and realm, conf
        kdc.port, kdc.realm = int(port[1]), realm[1]
        try:
            socket.create_connection((HOST, kdc.port), timeout=2).close()
        except OSError:
            raise RealStackError(f"the KDC of {kdc.data_dir} (realm {kdc.realm}) does not "
                                 f"answer on {HOST}:{kdc.port}: start that stack first") from None
        return kdc

    @property
    def krb5_conf(self) -> Path:
        return self.data_dir / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.data_dir / "kdc.conf"

    def environment(self) -> dict[str, str]:
        """The environment every Kerberos command and client of this realm runs with."""
        return {**os.environ, "KRB5_CONFIG": str(self.krb5_conf),
                "KRB5_KDC_PROFILE": str(self.kdc_conf),
                "KRB5CCNAME": f"FILE:{self.data_dir / 'kdc.ccache'}"}

    def _write_profiles(self) -> None:
        db = self.data_dir / "kdb"
        db.mkdir(parents=True, exist_ok=True)
        self.kdc_conf.write_text(f"""[kdcdefaults]
 kdc_listen = {HOST}:{self.port}
 kdc_tcp_listen = {HOST}:{self.port}
[realms]
 {self.realm} = {{
  database_name = {db / 'principal'}
  key_stash_file = {db / 'stash'}
  acl_file = {db / 'kadm5.acl'}
  max_life = {self.ticket_lifetime}
  max_renewable_life = 1d
  supported_enctypes = {' '.join(e + ':normal' for e in ENCTYPES.split())}
 }}
[logging]
 kdc = FILE:{self.data_dir / 'kdc-events.log'}
""", encoding="utf-8")
        # TCP only (Java and MIT agree on it); no DNS, no reverse lookups: 127.0.0.1 stays
        # the host part of every service principal.
        self.krb5_conf.write_text(f"""[libdefaults]
 default_realm = {self.realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 ticket_lifetime = {self.ticket_lifetime}
 forwardable = true
 default_tkt_enctypes = {ENCTYPES}
 default_tgs_enctypes = {ENCTYPES}
 permitted_enctypes = {ENCTYPES}
[realms]
 {self.realm} = {{
  kdc = {HOST}:{self.port}
 }}
[domain_realm]
 {HOST} = {self.realm}
""", encoding="utf-8")
        (db / "kadm5.acl").write_text("", encoding="utf-8")

    def _run(self, args: list[str], stdin: str = "") -> None:
        done = subprocess.run(args, input=stdin, capture_output=True, text=True,
                              env=self.environment(), timeout=60, check=False)
        if done.returncode:
            raise RealStackError(f"KDC in {self.data_dir}: {os.path.basename(args[0])} "
                                 f"{args[1] if len(args) > 1 else ''} failed: "
                                 f"{(done.stderr or done.stdout).strip()}")

    def start(self) -> Self:
        """Create the realm (a new database each time) and run the KDC until it answers."""
        for tool in TOOLS:
            _tool(tool)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.data_dir / "kdb", ignore_errors=True)
        self.port = free_port(HOST)
        self._write_profiles()
        master = secrets.token_urlsafe(24)
        self._run([_tool("kdb5_util"), "create", "-s", "-r", self.realm],
                  stdin=f"{master}\n{master}\n")
        proc = subprocess.Popen([_tool("krb5kdc"), "-n", "-r", self.realm],
                                stdin=subprocess.DEVNULL,
                                stdout=self.log_path.open("ab"), stderr=subprocess.STDOUT,
                                env=self.environment(), cwd=str(self.data_dir))
        self._proc = proc
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._exited() is not None:
                raise RealStackError(f"the KDC exited at start; {self.log_tail()}")
            try:
                socket.create_connection((HOST, self.port), timeout=1).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RealStackError(f"the KDC did not answer on {HOST}:{self.port} within 30 s; "
                             f"{self.log_tail()}")

    def principal(self, name: str) -> str:
        """``name@REALM``."""
        return f"{name}@{self.realm}"

    def add_principals(self, keytab: str | os.PathLike[str], *names: str,
                       max_life: str | None = None) -> Path:
        """Principals ``names`` (``service/host`` or ``user``) with random keys, exported to
        ``keytab`` (mode 0600); ``max_life`` bounds their tickets below the realm's."""
        path = Path(keytab).resolve()
        life = f"-maxlife {max_life} " if max_life else ""
        queries = [f"addprinc -randkey {life}{n}" for n in names]
        queries += [f"ktadd -k {path} {n}" for n in names]
        for query in queries:
            self.kadmin(query)
        path.chmod(0o600)
        return path

    def export_principals(self, keytab: str | os.PathLike[str], *names: str) -> Path:
        """Principals ``names`` of the realm, created when new, exported to ``keytab``
        (mode 0600) with their keys unchanged: the keytabs holding them stay valid."""
        path = Path(keytab).resolve()
        for name in names:
            with contextlib.suppress(RealStackError):  # already in the realm
                self.kadmin(f"addprinc -randkey {name}")
            self.kadmin(f"ktadd -norandkey -k {path} {name}")
        path.chmod(0o600)
        return path

    def kadmin(self, query: str) -> None:
        """One ``kadmin.local`` query on this realm (``cpw -randkey NAME`` changes keys)."""
        self._run([_tool("kadmin.local"), "-r", self.realm, "-q", query])
