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

from minihbase.process import ChildProcess, free_port
from realstack.maven import RealStackError, java_command, module_classpath

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
MAIN_CLASS = "kafka.Kafka"
STORAGE_TOOL = "kafka.tools.StorageTool"
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
HEAP = "384m"
JVM_OPTIONS = ("-Xms64m", "-XX:TieredStopAtLevel=1")  # a small broker that starts fast
SYSTEM_PROPERTIES = {"java.awt.headless": "true",
                     "org.slf4j.simpleLogger.defaultLogLevel": "warn"}


def _java(classpath: list[str], main: str, args: list[str]) -> list[str]:
    return java_command(classpath, main, args, heap=HEAP, jvm_options=JVM_OPTIONS,
                        system_properties=SYSTEM_PROPERTIES)


@dataclass(frozen=True)
class KafkaSettings:
    """What a test may vary: topic auto-creation, the largest message, partitions."""

    auto_create_topics: bool = True
    message_max_bytes: int = 1_048_588  # Kafka's default
    partitions: int = 1


class KafkaBroker(ChildProcess):
    """A KRaft broker + controller; use as a context manager or call start()/stop()."""

    log_name = "kafka.log"

    def __init__(self, data_dir: str | os.PathLike[str],
                 settings: KafkaSettings | None = None, port: int = 0) -> None:
        super().__init__(data_dir)
        self.settings = settings or KafkaSettings()
        self.port = port
        self.controller_port = 0

    @property
    def bootstrap(self) -> str:
        """``host:port`` of the PLAINTEXT listener (a client's ``bootstrap.servers``)."""
        return f"{HOST}:{self.port}"

    def _properties(self) -> Path:
        s = self.settings
        lines = [
            "process.roles=broker,controller", "node.id=1",
            f"controller.quorum.voters=1@{HOST}:{self.controller_port}",
            f"listeners=PLAINTEXT://{HOST}:{self.port},CONTROLLER://{HOST}:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://{HOST}:{self.port}",
            "controller.listener.names=CONTROLLER", "inter.broker.listener.name=PLAINTEXT",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
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
        if saved.is_file():
            self.port, self.controller_port = (int(p) for p in saved.read_text().split())
            return
        self.port = self.port or free_port(HOST)
        self.controller_port = free_port(HOST)
        saved.write_text(f"{self.port} {self.controller_port}\n")

    def start(self, timeout: float = 120.0) -> Self:
        """Format (first start only), launch, and return once the broker serves metadata."""
        if self.is_running:
            return self
        classpath = module_classpath("kafka")
        (self.data_dir / "data").mkdir(parents=True, exist_ok=True)
        self._ports()
        properties = self._properties()
        if not (self.data_dir / "data" / "meta.properties").is_file():
            self._format(classpath, properties)
        self._spawn(_java(classpath, MAIN_CLASS, [str(properties)]))
        self._wait_ready(timeout)
        log.info("Kafka broker on %s (pid %s)", self.bootstrap, self.pid)
        return self

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
        """Stop the broker (a clean shutdown when it takes less than ``timeout``)."""
        super().stop(timeout)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False
