"""Real HBase as the judge of the files the project's HFile writer makes: HBase's own
``HFilePrettyPrinter`` run on many files in one JVM (``hfileprint/PrintHFiles.java``, run
as a source file on the HBase version's class path), and HBase's ``BulkLoadHFilesTool``
loading a folder of family folders into a table of a running cluster."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from hbase_migrate.jvm.maven import java_command
from realstack.hbase import hbase_classpath

PRINTER = Path(__file__).with_name("hfileprint") / "PrintHFiles.java"
# the stack's codecs (realstack-site.xml), for a JVM that does not load that file
CODECS = {f"hbase.io.compress.{name}.codec":
          f"org.apache.hadoop.hbase.io.compress.aircompressor.{codec}Codec"
          for name, codec in (("snappy", "Snappy"), ("lz4", "Lz4"), ("zstd", "Zstd"))}


def classpath(version: str) -> list[str]:
    """The version's class path less Hadoop's old ``com.codahale`` metrics-core, whose
    ``MetricRegistry`` shadows the one HFilePrettyPrinter's statistics need."""
    return [e for e in hbase_classpath(version) if "/com/codahale/metrics/" not in e]


def site_xml(settings: Mapping[str, str]) -> str:
    """A Hadoop configuration file of ``settings``."""
    props = "".join(f"<property><name>{escape(k)}</name><value>{escape(v)}</value></property>\n"
                    for k, v in settings.items())
    return f'<?xml version="1.0"?>\n<configuration>\n{props}</configuration>\n'


def print_hfiles(version: str, files: Sequence[Path], out: Path) -> dict[str, int]:
    """HBase ``version``'s printout of each file into ``out/NAME.hbase.txt``; the printer's
    exit code by file name."""
    out.mkdir(parents=True, exist_ok=True)
    command = java_command(classpath(version), str(PRINTER),
                           [str(out), *(str(f) for f in files)], heap="512m")
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or lines[-1] != "done":
        raise AssertionError(f"HBase {version}'s HFilePrettyPrinter failed "
                             f"({done.returncode}): {done.stderr[-3000:]}")
    return {name: int(code) for name, code in (line.split(" ") for line in lines[:-1])}


def bulk_load(described: Mapping[str, Any], table: str, folder: Path, conf: Path) -> str:
    """``BulkLoadHFilesTool FOLDER TABLE`` of the cluster's own HBase version against the
    cluster ``described`` (its ``cluster.json``): the files of ``folder/FAMILY/`` loaded
    (split where they span regions); what the tool printed and logged. Its settings (the
    cluster's ZooKeeper, the stack's codecs, which HBase reads from its static configuration
    too) go in ``conf/hbase-site.xml``, first on the class path."""
    version = str(described.get("hbase_version") or "2.6.1")
    host, _, port = str(described["zookeeper"]).rpartition(":")
    settings = {"hbase.zookeeper.quorum": host, "hbase.zookeeper.property.clientPort": port,
                "zookeeper.znode.parent": described["znode_parent"], **CODECS,
                # HBase 3's client finds a cluster through its masters by default
                "hbase.client.registry.impl":
                    "org.apache.hadoop.hbase.client.ZKConnectionRegistry"}
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "hbase-site.xml").write_text(site_xml(settings), encoding="utf-8")
    command = java_command([str(conf), *classpath(version)],
                           "org.apache.hadoop.hbase.tool.BulkLoadHFilesTool",
                           [str(folder), table], heap="512m")
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise AssertionError(f"BulkLoadHFilesTool failed ({done.returncode}): "
                             f"{done.stderr[-3000:]}")
    return done.stdout + done.stderr
