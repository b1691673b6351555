"""HBase's own Java client as the tests' independent reader of a real cluster: the
``tabledump`` Maven module (built for the cluster's HBase version, 1.x, 2.x or 3.x) dumps a
table cell for cell, every version as reads see it and raw (delete markers and the cells they
hide), and lists its regions; :func:`cells_of` parses the lines it and
``tests/minihbase/javaclient`` print, and :func:`differences` says how two dumps differ. A
Kerberos-secured cluster is read as its ``cluster.json``'s client principal, logged in from
its keytab (:func:`login_properties`). Asked for a cell block ``codec`` (HBase's
``KeyValueCodecWithTags``), it reads the cells as that codec carries them: their tags too."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from hbase_migrate.jvm.maven import java_command, module_classpath
from hbase_migrate.wal.cells import parse_tags
from hbase_migrate.wal.model import Cell, cell_order

MODULE = Path(__file__).with_name("tabledump")


def cells_of(lines: Iterable[str], what: str) -> list[Cell]:
    """The cells of the ``CELL <what> row family xqualifier ts type xvalue [xtags]`` lines
    (hex; ``tags``, when there, the cell's tags area as KeyValue holds it)."""
    out = []
    for line in lines:
        parts = line.split(" ")
        if parts[:2] == ["CELL", what]:
            row, family, qualifier, ts, kind, value, *tags = parts[2:]
            area = bytes.fromhex(tags[0][1:]) if tags else b""
            out.append(Cell(bytes.fromhex(row), bytes.fromhex(family),
                            bytes.fromhex(qualifier[1:]), int(ts), int(kind),
                            bytes.fromhex(value[1:]), parse_tags(area, 0, len(area))))
    return out


Region = tuple[bytes, bytes, str, int]  # start key, end key, host, port


def regions_of(lines: Iterable[str]) -> list[Region]:
    """The regions of the ``REGION xstart xend host port`` lines (keys in hex)."""
    out = []
    for line in lines:
        parts = line.split(" ")
        if parts[0] == "REGION":
            start, end, host, port = parts[1:]
            out.append((bytes.fromhex(start[1:]), bytes.fromhex(end[1:]), host, int(port)))
    return out


class Dump(NamedTuple):
    """A table as HBase's Java client read it, in HBase's order."""

    visible: list[Cell]  # every version a read sees
    raw: list[Cell]      # every cell a raw scan sees: delete markers and what they hide too
    regions: list[Region]  # its region locator's regions by start key, with their servers


def login_properties(described: Mapping[str, Any]) -> dict[str, str]:
    """The ``tabledump`` module's Kerberos login for the cluster ``described`` (its
    ``security``: principal, keytab, the servers' principals, the RPC protection and the
    realm's ``krb5.conf``) as system properties; none for a cluster without Kerberos. A
    keytab's path, never a secret."""
    security = described.get("security") or {}
    if security.get("auth") != "kerberos":
        return {}
    host = str(described["zookeeper"]).rpartition(":")[0]
    return {"java.security.krb5.conf": security["krb5_conf"],
            "tabledump.principal": security["principal"],
            "tabledump.keytab": security["keytab"],
            "tabledump.hbase.principal": security["hbase_principal"],
            "tabledump.zookeeper.principal": security["zookeeper_principal"].replace(
                "_HOST", host),
            "tabledump.rpc.protection": security["rpc_protection"]}


def java_dump(described: Mapping[str, Any], table: str, before: int | None = None,
              codec: str | None = None) -> Dump:
    """``table`` on the cluster ``described`` (its ``cluster.json``) as HBase's Java client
    of the cluster's own version scans it (logged in as its client principal when secured),
    only timestamps below ``before`` when given; its cell blocks in ``codec``
    (``hbase.client.rpc.codec``) when given, the cells with their tags, else in HBase's
    default (``KeyValueCodec``: no tags)."""
    version = str(described.get("hbase_version") or "2.6.1")
    classpath = module_classpath(MODULE, {"hbase.version": version})
    args = [described["zookeeper"], described["znode_parent"], table]
    if before is not None:
        args.append(str(before))
    properties = login_properties(described)
    if codec is not None:
        properties["tabledump.codec"] = codec
    command = java_command(classpath, "hbasemigrate.check.TableDump", args, heap="256m",
                           system_properties=properties)
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith("END "):
        said = "\n".join(line for line in done.stderr.splitlines()  # no stack frames
                         if not line.startswith(("\tat ", "\t...")))
        raise AssertionError(f"HBase {version}'s Java client could not dump {table}: "
                             f"{said[-3000:]}")
    dump = Dump(cells_of(lines, "visible"), cells_of(lines, "raw"), regions_of(lines))
    assert lines[-1] == f"END {len(dump.visible)} {len(dump.raw)}", lines[-1]
    return dump


def differences(expected: list[Cell], found: list[Cell], limit: int = 5) -> str:
    """"" when ``found`` holds exactly the cells of ``expected``, else what is missing and
    what is extra (the first ``limit`` of each, in HBase's order)."""
    missing = sorted(set(expected) - set(found), key=cell_order)
    extra = sorted(set(found) - set(expected), key=cell_order)
    if not missing and not extra and len(expected) == len(found):
        return ""
    return (f"{len(expected)} cells expected, {len(found)} found; {len(missing)} missing "
            f"{missing[:limit]}; {len(extra)} extra {extra[:limit]}")
