"""One Apache Kafka broker in KRaft mode (broker and controller in one JVM) on loopback.

Start-up: resolve the class path of the ``kafka`` Maven module (:mod:`realstack.maven`),
write ``server.properties`` (a PLAINTEXT listener and a controller listener on free
``127.0.0.1`` ports, one node, every internal topic with one replica), format the storage
with Kafka's ``StorageTool`` (once per data folder), then run ``kafka.Kafka`` with a bounded
heap and wait until the listener accepts connections and the cluster answers a metadata
request. Stop: SIGTERM (a clean shutdown), then SIGKILL after a timeout. A restart on the
same folder keeps the topics and their data, on the same ports.

:meth:`KafkaBroker.limit_producer` sets a client quota with Kafka's own ``ConfigCommand``
(``kafka-configs``): the broker then delays a producer with that ``client.id`` to a byte
rate. Quotas are measured over two one-second windows, so a throttled producer is held to
its rate from its first seconds on (Kafka's default of eleven lets ten seconds' worth
through at full speed first).

Secured listeners (:mod:`realstack.kafka.security`), beside the PLAINTEXT one (which the
broker's own inter-broker traffic and the tests' inspection use): with ``kerberos``, a
``SASL_PLAINTEXT`` listener with GSSAPI, its principals from a KDC (the one given, or one
of the broker's own in ``kdc/``); with ``tls``, a ``SASL_SSL`` listener with SCRAM-SHA-512,
its certificate signed by the broker's own CA.
"""

from __future__ import annotations

import base64
import logging
import os
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from realstack.kafka import security
from realstack.kdc import Kdc
from realstack.maven import RealStackError, java_command, module_classpath
from stackprocs.process import ChildProcess, free_port

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAIN_CLASS = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
HEAP = "384m"
JVM_OPTIONS = ("-Xms64m", "-XX:TieredStopAtLevel=1")  # a small broker that starts fast
SYSTEM_PROPERTIES = {"java.awt.headless": "true",
                     "org.slf4j.simpleLogger.defaultLogLevel": "warn"}


def _java(classpath: list[str], main: str, args: list[str],
          properties: dict[str, str] | None = None) -> list[str]:
    return java_command(classpath, main, args, heap=HEAP, jvm_options=JVM_OPTIONS,
                        system_properties={**SYSTEM_PROPERTIES, **(properties or {})})


@dataclass(frozen=True)
class KafkaSettings:
    """What a test may vary: topic auto-creation, the largest message, partitions, and the
    secured listeners (``kerberos``: SASL GSSAPI; ``tls``: SCRAM-SHA-512 over TLS)."""

    auto_create_topics: bool = True
    message_max_bytes: int = 1_048_588  # Kafka's default
    partitions: int = 1
    kerberos: bool = False
    tls: bool = False


class KafkaBroker(ChildProcess):
    """A KRaft broker + controller; use as a context manager or call start()/stop()."""

    log_name = "kafka.log"

    def __init__(self, data_dir: str | os.PathLike[str],
                 settings: KafkaSettings | None = None, port: int = 0,
                 kdc: Kdc | None = None) -> None:
        super().__init__(data_dir)
        self.settings = settings or KafkaSettings()
        self.port = port
        self.controller_port = self.sasl_port = self.tls_port = 0
        self.kdc = kdc
        self._own_kdc = False

    @property
    def bootstrap(self) -> str:
        """``host:port`` of the PLAINTEXT listener (a client's ``bootstrap.servers``)."""
        return f"{HOST}:{self.port}"

    @property
    def gssapi_bootstrap(self) -> str:
        """``host:port`` of the SASL_PLAINTEXT listener (GSSAPI), with ``kerberos``."""
        return f"{HOST}:{self.sasl_port}"

    @property
    def tls_bootstrap(self) -> str:
        """``host:port`` of the SASL_SSL listener (SCRAM-SHA-512), with ``tls``."""
        return f"{HOST}:{self.tls_port}"

    @property
    def client_principal(self) -> str:
        assert self.kdc is not None, "a broker without kerberos has no client principal"
        return self.kdc.principal(security.CLIENT_PRINCIPAL)

    @property
    def client_keytab(self) -> Path:
        return self.data_dir / "client.keytab"

    @property
    def ca_file(self) -> Path:
        """The CA that signed the TLS listener's certificate (``ssl.ca.location``)."""
        return self.data_dir / "tls" / "ca.pem"

    @property
    def scram_user(self) -> str:
        return security.SCRAM_USER

    @property
    def scram_password_file(self) -> Path:
        return self.data_dir / "scram.password"

    def _listeners(self) -> dict[str, int]:
        """Listener name (= its security protocol) -> port, the controller's last."""
        ports = {"PLAINTEXT": self.port}
        if self.settings.kerberos:
            ports["SASL_PLAINTEXT"] = self.sasl_port
        if self.settings.tls:
            ports["SASL_SSL"] = self.tls_port
        return {**ports, "CONTROLLER": self.controller_port}

    def _secured_properties(self) -> list[str]:
        lines: list[str] = []
        if self.settings.kerberos:
            assert self.kdc is not None
            jaas = security.gssapi_jaas(self.kdc, self.data_dir / "kafka.keytab")
            lines += ["listener.name.sasl_plaintext.sasl.enabled.mechanisms=GSSAPI",
                      f"listener.name.sasl_plaintext.sasl.kerberos.service.name={security.SERVICE}",
                      f"listener.name.sasl_plaintext.gssapi.sasl.jaas.config={jaas}"]
        if self.settings.tls:
            mechanism = security.SCRAM_MECHANISM.lower()
            lines += [f"listener.name.sasl_ssl.sasl.enabled.mechanisms={security.SCRAM_MECHANISM}",
                      f"listener.name.sasl_ssl.{mechanism}.sasl.jaas.config="
                      "org.apache.kafka.common.security.scram.ScramLoginModule required;",
                      "listener.name.sasl_ssl.ssl.keystore.type=PEM",
                      "listener.name.sasl_ssl.ssl.keystore.location="
                      f"{self.data_dir / 'tls' / 'broker.pem'}"]
        return lines

    def _properties(self) -> Path:
        s = self.settings
        listeners = self._listeners()
        served = {name: port for name, port in listeners.items() if name != "CONTROLLER"}
        lines = [
            "process.roles=broker,controller", "node.id=1",
            f"controller.quorum.voters=1@{HOST}:{self.controller_port}",
            "listeners=" + ",".join(f"{n}://{HOST}:{p}" for n, p in listeners.items()),
            "advertised.listeners=" + ",".join(f"{n}://{HOST}:{p}" for n, p in served.items()),
            "controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=" + ",".join(
                f"{n}:{'PLAINTEXT' if n == 'CONTROLLER' else n}" for n in listeners),
            *self._secured_properties(),
            f"log.dirs={self.data_dir / 'data'}",
            f"num.partitions={s.partitions}",
            f"auto.create.topics.enable={str(s.auto_create_topics).lower()}",
            f"message.max.bytes={s.message_max_bytes}",
            "offsets.topic.replication.factor=1", "offsets.topic.num.partitions=1",
            "transaction.state.log.replication.factor=1", "transaction.state.log.min.isr=1",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "group.initial.rebalance.delay.ms=0", "num.io.threads=2", "num.network.threads=2",
            "background.threads=2", "quota.window.num=2", "quota.window.size.seconds=1",
        ]
        path = self.data_dir / "server.properties"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def _ports(self) -> None:
        """Free ports on first start; the same ones again on a restart (the formatted
        storage names the controller's)."""
        saved = self.data_dir / "ports"
        known = [int(p) for p in saved.read_text().split()] if saved.is_file() else []
        ports = [*known, *(free_port(HOST) for _ in range(4 - len(known)))]
        if not known and self.port:
            ports[0] = self.port
        self.port, self.controller_port, self.sasl_port, self.tls_port = ports
        saved.write_text(" ".join(map(str, ports)) + "\n")

    def start(self, timeout: float = 120.0) -> Self:
        """Format (first start only), launch, and return once the broker serves metadata."""
        if self.is_running:
            return self
        classpath = module_classpath("kafka")
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        self._ports()
        jvm_properties = self._secure()
        properties = self._properties()
        if not (self.data_dir / "data" / "meta.properties").is_file():
            self._format(classpath, properties)
        self._spawn(_java(classpath, MAIN_CLASS, [str(properties)], jvm_properties))
        self._wait_ready(timeout)
        if self.settings.tls:
            security.add_scram_user(self.bootstrap,
                                    security.scram_password(self.data_dir))
        log.info("Kafka broker on %s (pid %s)", self.bootstrap, self.pid)
        return self

    def _secure(self) -> dict[str, str]:
        """Principals, keytabs, certificates of the secured listeners; the JVM's system
        properties for them."""
        if self.settings.tls:
            security.certificates(self.data_dir / "tls")
            security.scram_password(self.data_dir)
        if not self.settings.kerberos:
            return {}
        if self.kdc is None or self._own_kdc:
            self.kdc, self._own_kdc = Kdc(self.data_dir / "kdc").start(), True
        if self._own_kdc or not self.client_keytab.is_file():
            security.kerberos_principals(self.kdc, self.data_dir)
        return {"java.security.krb5.conf": str(self.kdc.krb5_conf)}

    def _format(self, classpath: list[str], properties: Path) -> None:
        # "--cluster-id=ID" in one argument: an ID may start with "-" (URL-safe base64)
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        done = subprocess.run(
            _java(classpath, STORAGE_TOOL,
                  ["format", f"--cluster-id={cluster_id}", "-c", str(properties)]),
            capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RealStackError(f"Kafka storage format of {self.data_dir} failed (exit "
                                     f"{done.returncode}): {(done.stdout + done.stderr)[-2000:]}")

    def _wait_ready(self, timeout: float) -> None:
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        deadline = time.monotonic() + timeout
        admin = AdminClient({"bootstrap.servers": self.bootstrap,
                             "logger": log})  # type: ignore[dict-item]
        while time.monotonic() < deadline:
            code = self._exited()
            if code is not None:
                raise RealStackError(f"Kafka exited with code {code} before serving on "
                                     f"{self.bootstrap}; {self.log_tail()}")
            if _accepts(self.port):
                try:
                    brokers = admin.list_topics(timeout=2).brokers
                except KafkaException:  # not ready yet
                    brokers = {}
                if brokers:
                    return
            time.sleep(0.2)
        self.stop()
        raise RealStackError(f"Kafka did not serve on {self.bootstrap} within "
                             f"{timeout:g} s; {self.log_tail()}")

    def limit_producer(self, client_id: str, bytes_per_second: int) -> None:
        """Hold producers with ``client_id`` to ``bytes_per_second`` (a client quota, kept
        in the cluster's metadata across restarts): the broker delays its answers to them."""
        command = _java(module_classpath("kafka"), CONFIG_COMMAND, [
            "--bootstrap-server", self.bootstrap, "--alter", "--entity-type", "clients",
            "--entity-name", client_id, "--add-config", f"producer_byte_rate={bytes_per_second}"])
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RealStackError(f"Kafka ConfigCommand could not set the quota of client "
                                 f"{client_id!r} on {self.bootstrap} (exit {done.returncode}): "
                                 f"{(done.stdout + done.stderr)[-2000:]}")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker (a clean shutdown when it takes less than ``timeout``), and its
        own KDC."""
        super().stop(timeout)
        if self._own_kdc and self.kdc is not None:
            self.kdc.stop()


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False
