"""``hbase-migrate realstack``: build a real stack's class path, and run real Apache HBase
(mini HDFS with WebHDFS, ZooKeeper, master, region servers, Thrift1 and Thrift2) on loopback."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import click

from hbase_migrate.errors import ConfigError
from hbase_migrate.timeutil import parse_duration
from realstack.hbase import (
    DEFAULT_VERSION,
    QOPS,
    WAL_COMPRESSION,
    RealHBase,
    RealHBaseOptions,
    check_rpc_protection,
    choose_gateways,
    has_gateways,
    is_1x,
)
from realstack.kafka.cli import kafka
from realstack.maven import RealStackError, module_classpath
from realstack.yarncli import yarn


def _properties(values: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {value!r}", param_hint="-D")
        found[name] = setting
    return found


def _protection(value: str) -> str:
    try:
        return check_rpc_protection(value)
    except RealStackError as exc:
        raise click.BadParameter(str(exc)) from None


@click.group()
def realstack() -> None:
    """Run real Apache HBase, HDFS and Kafka from Maven Central in the JVM (Java 17, Maven)."""


@realstack.command()
@click.argument("module", default="hbase")
@click.option("-D", "defines", multiple=True, metavar="NAME=VALUE",
              help="A Maven property, e.g. -D hbase.version=2.5.11 (part of the cache key).")
def classpath(module: str, defines: tuple[str, ...]) -> None:
    """Resolve MODULE's run-time class path (once; cached, offline afterwards) and print it."""
    click.echo(os.pathsep.join(module_classpath(module, _properties(defines))))


def _ms(value: str, name: str) -> int:
    try:
        return parse_duration(value, name=name)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from exc


@realstack.command()
@click.option("--hbase-version", default=DEFAULT_VERSION, show_default=True,
              help="Apache HBase release from Maven Central (2.4.x, 2.5.x, 2.6.x...).")
@click.option("--dir", "data_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("state/realstack"), show_default=True,
              help="Data folder: HDFS, ZooKeeper and the log (realstack.log).")
@click.option("--name", default="realhbase", show_default=True, help="Cluster name.")
@click.option("--region-servers", type=click.IntRange(1, 16), default=2, show_default=True)
@click.option("--masters", type=click.IntRange(1, 4), default=1, show_default=True,
              help="Masters: the first active, the others backups (kill-master fails over).")
@click.option("--wal-compression", type=click.Choice(WAL_COMPRESSION), default="none",
              show_default=True, help="WAL dictionary compression, with tag compression.")
@click.option("--value-compression", default="none", show_default=True,
              help="WAL value compression codec (gz, snappy, lz4, zstd... as HBase names them).")
@click.option("--roll-size", type=click.IntRange(min=1), default=64 * 1024 * 1024,
              show_default=True, help="Roll a WAL once it holds this many bytes.")
@click.option("--roll-period", default="1h", show_default=True,
              help="hbase.regionserver.logroll.period (30s, 500ms, 1h; bare number = ms).")
@click.option("--archive-ttl", default="10m", show_default=True,
              help="hbase.master.logcleaner.ttl.")
@click.option("--cleaner-interval", default="10s", show_default=True,
              help="hbase.master.cleaner.interval.")
@click.option("--replication-peer", metavar="ID", default=None,
              help="Add a replication peer (nobody answers for it: its queues hold the WALs).")
@click.option("--heap", default="1g", show_default=True, help="JVM -Xmx.")
@click.option("--kerberos", is_flag=True,
              help="Secure every server with Kerberos from a KDC started for the stack.")
@click.option("--kdc", "kdc_dir", type=click.Path(file_okay=False, exists=True),
              default=None, help="With --kerberos: use the KDC (and realm) of the stack "
              "running in this folder instead of starting one.")
@click.option("--qop", type=click.Choice(QOPS), default="auth", show_default=True,
              help="With --kerberos: the Thrift gateways' SASL QOP.")
@click.option("--rpc-protection", default="authentication", show_default=True,
              callback=lambda _ctx, _param, value: _protection(value),
              help="With --kerberos: hbase.rpc.protection of HBase's own RPC, a level or a "
              "list the servers offer (privacy,integrity,authentication).")
@click.option("--token-provider/--no-token-provider", default=True, show_default=True,
              help="With --kerberos: HBase's TokenProvider coprocessor on every region, so "
              "HBase issues delegation tokens (DIGEST-MD5); --no-token-provider: a secured "
              "cluster that issues none.")
@click.option("--gateways/--no-gateways", default=None,
              help="HBase's Thrift1 and Thrift2 gateways (default: where Maven Central has "
              "hbase-thrift of the version; --no-gateways: HBase's own RPC only).")
@click.option("--thrift-http", is_flag=True,
              help="Both Thrift gateways in HTTP mode (SPNEGO with --kerberos).")
@click.option("--ticket-lifetime", default="10h", show_default=True,
              help="With --kerberos: the client principal's ticket lifetime (MIT syntax).")
@click.option("--rpc-tls", is_flag=True,
              help="TLS on HBase's RPC (HBase 2.6+), certificates made in DIR/tls.")
@click.option("--rpc-tls-plaintext", is_flag=True,
              help="With --rpc-tls: plain RPC accepted too (supportplaintext).")
@click.option("--phoenix", metavar="VERSION", default=None,
              help="Apache Phoenix in the stack (phoenix-core 4.x on 1.x, e.g. 4.14.3-HBase-1.4; "
              "Phoenix 5.x on 2.x, e.g. 5.2.1) "
              "in the stack, its IndexedWALEditCodec as the WAL codec.")
def start(hbase_version: str, data_dir: Path, name: str, region_servers: int, masters: int,
          wal_compression: str, value_compression: str, roll_size: int, roll_period: str,
          archive_ttl: str, cleaner_interval: str, replication_peer: str | None,
          heap: str, kerberos: bool, kdc_dir: str | None, qop: str, rpc_protection: str,
          token_provider: bool, gateways: bool | None, thrift_http: bool,
          ticket_lifetime: str, rpc_tls: bool,
          rpc_tls_plaintext: bool, phoenix: str | None) -> None:
    """Start real HBase on 127.0.0.1 and run until SIGTERM or SIGINT.

    The first start resolves the HBase jars from Maven Central (cached; offline afterwards).
    When ready, prints one JSON line and writes it to DIR/cluster.json, with the keys of
    ``minicluster start`` plus ``hbase_version`` and ``started_in_ms``; the ``admin``
    endpoint takes the ``minicluster`` operations. With ``--kerberos`` a KDC with a
    temporary realm named after the stack (``--name source`` -> ``SOURCE.TEST``) runs too
    (stopped with the stack); DIR then holds ``client.keytab`` and ``krb5.conf``, and
    cluster.json's ``security`` object names them. ``--kdc OTHER`` puts the stack in the
    realm of the stack running in OTHER (its KDC; a client principal of this stack's own).
    ``--rpc-protection`` sets HBase's RPC protection (cluster.json's ``rpc_protection``); a
    secured stack loads HBase's ``TokenProvider``, so it issues delegation tokens
    (``--no-token-provider``: none). With
    ``--thrift-http`` both gateways speak Thrift over HTTP (``"transport": "http"``). With
    ``--rpc-tls`` the master and region servers speak TLS only (``--rpc-tls-plaintext``: plain
    RPC too); DIR/tls holds the stack's CA and the client's certificate and key, which
    cluster.json's ``security`` names (``rpc_tls = "on"``). With
    ``--phoenix`` the admin endpoint's ``sql`` operation (``{"statements": [...],
    "properties": {...}}``) runs SQL through Phoenix's JDBC driver. A version of which
    Maven Central has no hbase-thrift (3.0.0-alpha-4, 2.6.4...) starts without gateways,
    saying so; ``--no-gateways`` asks for none on any 2.x or 3.x version."""
    if thrift_http and gateways is False:
        raise click.BadParameter("--thrift-http needs the gateways", param_hint="--no-gateways")
    available = gateways is not False and (is_1x(hbase_version) or has_gateways(hbase_version))
    run_gateways, note = choose_gateways(hbase_version, gateways, available)
    if note:
        click.echo(note, err=True)
    options = RealHBaseOptions(
        hbase_version=hbase_version, region_servers=region_servers, masters=masters,
        wal_compression=wal_compression, value_compression=value_compression.lower(),
        roll_period_ms=_ms(roll_period, "--roll-period"), roll_size=roll_size,
        archive_ttl_ms=_ms(archive_ttl, "--archive-ttl"),
        cleaner_interval_ms=_ms(cleaner_interval, "--cleaner-interval"),
        replication_peer=replication_peer, name=name, heap=heap, kerberos=kerberos, qop=qop,
        rpc_protection=rpc_protection, token_provider=token_provider,
        client_ticket_lifetime=ticket_lifetime, thrift_http=thrift_http, gateways=run_gateways,
        kdc=str(Path(kdc_dir).resolve()) if kdc_dir else None, rpc_tls=rpc_tls,
        rpc_tls_plaintext=rpc_tls_plaintext, phoenix=phoenix)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if kdc_dir and not kerberos:
        raise click.BadParameter("--kdc needs --kerberos", param_hint="--kdc")
    if rpc_tls_plaintext and not rpc_tls:
        raise click.BadParameter("--rpc-tls-plaintext needs --rpc-tls",
                                 param_hint="--rpc-tls-plaintext")
    with RealHBase(data_dir, options) as stack:
        click.echo(json.dumps(stack.described))
        while not stop.wait(0.5):
            if not stack.running:
                raise RealStackError(f"HBase exited; log {stack.log_path}")


realstack.add_command(kafka)
realstack.add_command(yarn)
