"""A migration's definition as the ledger records it, and how two definitions differ.

The definition is the spec's :meth:`~hbase_migrate.config.MigrationSpec.to_dict` tree with
each cluster's endpoints resolved (a ``cluster_json`` file read, so a file and an Airflow
``hbase`` connection naming the same gateways give the same section), the tables in a fixed
order, and nothing secret or local to one caller: no ledger URL (the ledger holds it), no
producer setting that carries a password or key. :meth:`MigrationSpec.from_dict` reads it
back. A migration is identified by its *identity*: the source's and the target's gateways
and the table list; every other key is a setting a later run may change.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from hbase_migrate.cluster.auth.security import ClusterSecurity
from hbase_migrate.config import ENDPOINT_KEYS, ClusterSpec, MigrationSpec, endpoints_identity
from hbase_migrate.hbase import open_cluster

IDENTITY_KEYS = ("source", "target", "tables")
# Keys of a definition that only label it (not compared), or are its identity's.
_NOT_SETTINGS = ("source.name", "target.name", "source.thrift", "source.thrift2",
                 "target.thrift", "target.thrift2")
# Producer settings never recorded (librdkafka's passwords, keys and tokens).
_SECRET_MARKERS = ("password", "secret", "token", "jaas", "oauthbearer.config", "key.pem",
                   "keystore.location", "ssl_key")


def cluster_section(cluster: ClusterSpec) -> dict[str, Any]:
    """The ``[source]``/``[target]`` section of ``cluster`` with its endpoints resolved
    (a ``cluster_json`` file is read now): endpoint keys, security keys that differ from
    the defaults, ``admin_shell``; a Bigtable target's own section."""
    if cluster.bigtable is not None:
        return cluster.bigtable.to_dict()
    found = open_cluster(cluster).endpoints
    data = found.to_json()
    section: dict[str, Any] = {k: data[k] for k in ENDPOINT_KEYS if data.get(k)}
    if section.get("client") == "thrift":  # what every definition before the key meant
        del section["client"]
    if not found.webhdfs and found.hbase_root_dir:  # the embedded cluster's local root
        section["hbase_root"] = found.hbase_root_dir
    if found.security is not None:
        plain = ClusterSecurity()
        section.update({f.name: getattr(found.security, f.name) for f in fields(plain)
                        if getattr(found.security, f.name) != getattr(plain, f.name)})
    if cluster.admin_shell:
        section["admin_shell"] = cluster.admin_shell
    return section


def cluster_identity(section: Mapping[str, Any]) -> str:
    """``thrift:<thrift1>,<thrift2>``: the gateways a section names, else its ZooKeeper (as
    :attr:`ClusterSpec.identity` says explicit endpoints); a Bigtable instance's name."""
    if section.get("kind") == "bigtable":
        return f"bigtable:projects/{section['project']}/instances/{section['instance']}"
    return endpoints_identity(*(section.get(k) for k in ("thrift", "thrift2", "zookeeper",
                                                         "znode_parent", "uri")))


def tables_json(tables: Iterable[Mapping[str, Any]]) -> str:
    """The ledger's ``migrations.tables`` column: sorted, families sorted, compact JSON."""
    rows = sorted(({"source": t["source"], "target": t["target"],
                    "families": sorted(t.get("families") or ())} for t in tables),
                  key=lambda d: (d["source"], d["target"]))
    return json.dumps(rows, sort_keys=True, separators=(",", ":"))


def definition_of(spec: MigrationSpec) -> dict[str, Any]:
    """The definition the ledger records for ``spec`` (see the module's docstring)."""
    tree = spec.to_dict()
    tree["migration"] = {"name": spec.name}
    tree["source"] = cluster_section(spec.source)
    tree["target"] = cluster_section(spec.target)
    tree["tables"] = json.loads(tables_json(tree["tables"]))
    if "cdc" in tree:
        producer = tree["cdc"]["producer"]
        tree["cdc"]["producer"] = {k: v for k, v in producer.items()
                                   if not any(m in k.lower() for m in _SECRET_MARKERS)}
    return tree


def identity(definition: Mapping[str, Any]) -> dict[str, str]:
    """What identifies the migration a definition describes: source, target, tables."""
    return {"source": cluster_identity(definition["source"]),
            "target": cluster_identity(definition["target"]),
            "tables": tables_json(definition["tables"])}


def describe_tables(tables_text: str) -> str:
    """``orders, users=users_v2 [d,e]``: a table list (the ``tables`` column) for people."""
    described = []
    for t in json.loads(tables_text):
        name = t["source"] if t["target"] == t["source"] else f"{t['source']}={t['target']}"
        families = f" [{','.join(t['families'])}]" if t["families"] else ""
        described.append(name + families)
    return ", ".join(described) or "(none)"


def identity_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """``source 'thrift:a:9090' (this definition: 'thrift:b:9090')``, one per identity key
    that differs between two :func:`identity` values."""
    changes = []
    for key in IDENTITY_KEYS:
        if old[key] != new[key]:
            was, now = ((describe_tables(old[key]), describe_tables(new[key]))
                        if key == "tables" else (old[key], new[key]))
            changes.append(f"{key} {was!r} (this definition: {now!r})")
    return changes


def setting_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """``replay.margin 300000 -> 600000``, one per key (dotted path) outside the identity
    whose value differs; labels (the clusters' names)
    and the gateways (:func:`identity_changes`) are left out."""
    before, after = _flat(old), _flat(new)
    changes = []
    for key in sorted(set(before) | set(after)):
        if key in _NOT_SETTINGS or key.split(".", 1)[0] == "tables":
            continue
        if before.get(key) != after.get(key):
            changes.append(f"{key} {_shown(before.get(key))} -> {_shown(after.get(key))}")
    return changes


def _flat(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            flat.update(_flat(value, path + "."))
        else:
            flat[path] = value
    return flat


def _shown(value: Any) -> str:
    return "(unset)" if value is None else json.dumps(value)
