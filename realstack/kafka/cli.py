"""``hbase-migrate realstack kafka start``: an Apache Kafka broker (KRaft) on loopback, in the
foreground."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import click

from realstack.kafka.broker import KafkaBroker, KafkaSettings
from stackprocs.process import EmbeddedStackError


@click.group()
def kafka() -> None:
    """Run a real Apache Kafka broker (KRaft mode, from Maven Central) on loopback."""


@kafka.command()
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/kafka"), show_default=True,
              help="Data and log folder (created when missing; a restart keeps the topics).")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Listener port on 127.0.0.1 at the first start; 0 picks a free one.")
@click.option("--auto-create/--no-auto-create", default=True, show_default=True,
              help="Whether the broker creates topics on first use.")
@click.option("--kerberos", is_flag=True,
              help="Also a SASL_PLAINTEXT listener with GSSAPI, its principals from a KDC "
                   "of the broker's own (MIT Kerberos, a temporary realm).")
@click.option("--tls", is_flag=True,
              help="Also a SASL_SSL listener with SCRAM-SHA-512, its certificate signed by a "
                   "CA of the broker's own.")
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds to wait for the broker to serve.")
def start(data_dir: Path, port: int, auto_create: bool, kerberos: bool, tls: bool,
          timeout: float) -> None:
    """Start the broker and run until SIGTERM or SIGINT.

    Prints one JSON line when the broker serves:
    {"kafka": "127.0.0.1:PORT", "pid": PID, "java_pid": PID, "dir": DIR}; with --kerberos
    also "kafka_gssapi" (its address), "principal", "keytab" and "krb5_conf" (the client's);
    with --tls "kafka_tls", "ca", "scram_user" and "scram_password_file".
    """
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    settings = KafkaSettings(auto_create_topics=auto_create, kerberos=kerberos, tls=tls)
    broker = KafkaBroker(data_dir, settings, port)
    with broker.start(timeout):
        described: dict[str, object] = {"kafka": broker.bootstrap, "pid": os.getpid(),
                                        "java_pid": broker.pid, "dir": str(broker.data_dir)}
        if kerberos and broker.kdc is not None:
            described.update(kafka_gssapi=broker.gssapi_bootstrap,
                             principal=broker.client_principal,
                             keytab=str(broker.client_keytab),
                             krb5_conf=str(broker.kdc.krb5_conf))
        if tls:
            described.update(kafka_tls=broker.tls_bootstrap, ca=str(broker.ca_file),
                             scram_user=broker.scram_user,
                             scram_password_file=str(broker.scram_password_file))
        click.echo(json.dumps(described))
        while not stop.wait(0.5):
            if not broker.is_running:
                raise EmbeddedStackError(f"Kafka on {broker.bootstrap} exited unexpectedly; "
                                         f"see {broker.log_path}")
