"""``hbase-migrate realstack``: build a real stack's class path, and run real Apache HBase
(mini HDFS with WebHDFS, ZooKeeper, master, region servers, Thrift1 and Thrift2) on loopback."""

from __future__ import annotations

import os

import click

from realstack.kafka.cli import kafka
from realstack.maven import module_classpath


def _properties(values: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        name, sep, setting = value.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"expected NAME=VALUE, got {value!r}", param_hint="-D")
        found[name] = setting
    return found


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


realstack.add_command(kafka)
