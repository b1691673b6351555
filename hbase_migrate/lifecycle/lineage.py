"""What each lifecycle step read and wrote, as lineage datasets (the names OpenLineage
catalogs show; the Airflow operators hand them to Airflow's OpenLineage provider).

An HBase table is the dataset ``hbase://<cluster-id>`` / ``<namespace>:<table>`` (the
namespace always written, ``default:`` too); a WAL file is ``hbase://<cluster-id>`` /
``WALs/<file name>`` (its name, which HBase keeps when it moves the file to ``oldWALs/`` or
a ``-splitting`` folder); a Kafka topic of the CDC stream is ``kafka://<first broker>`` /
``<topic>``, as OpenLineage names them; a Bigtable target's table is
``bigtable://<project>/<instance>`` / ``<table id>``. The cluster id is the one ZooKeeper holds
(:func:`hbase_migrate.hbase.identity.cluster_id`).

| step | inputs | outputs |
|---|---|---|
| prepare, snapshot | the source tables | the target tables |
| replay, backfill | the WAL files the run read | the target tables |
| validate | source and target tables | the target tables when it repaired |
| cdc | the WAL files the run read | the topics |
| cutover-check, report | source and target tables (what they judge) | none |
| (the WAL watch) | the new WAL files it announces | none |
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from hbase_migrate.config import MigrationSpec
from hbase_migrate.hbase import open_cluster
from hbase_migrate.hbase.bigtable_target import table_id
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.replay.summary import RunSummary
from hbase_migrate.tablename import split_table_name


@dataclass(frozen=True)
class DatasetRef:
    namespace: str
    name: str


@dataclass(frozen=True)
class Lineage:
    inputs: list[DatasetRef] = field(default_factory=list)
    outputs: list[DatasetRef] = field(default_factory=list)


def table_dataset(cluster: str, table: str) -> DatasetRef:
    namespace, qualifier = split_table_name(table)
    return DatasetRef(f"hbase://{cluster}", f"{namespace}:{qualifier}")


def wal_dataset(cluster: str, path: str) -> DatasetRef:
    return DatasetRef(f"hbase://{cluster}", f"WALs/{posixpath.basename(path.rstrip('/'))}")


def step_lineage(step: str, spec: MigrationSpec, result: StepResult | RunSummary
                 ) -> Lineage:
    """The datasets the step ``step`` (its ledger kind) read and wrote in ``result``."""
    source = open_cluster(spec.source).cluster_id()
    sources = [table_dataset(source, t.source) for t in spec.tables]
    bigtable = spec.target.bigtable
    targets = ([DatasetRef(f"bigtable://{bigtable.project}/{bigtable.instance}",
                           table_id(t.target)) for t in spec.tables] if bigtable else
               [table_dataset(open_cluster(spec.target).cluster_id(), t.target)
                for t in spec.tables])
    if step in ("prepare", "snapshot"):
        return Lineage(sources, targets)
    if isinstance(result, RunSummary):  # replay, backfill, cdc
        wals = wal_lineage(spec, [o.path for o in result.outcomes]).inputs
        if step.startswith("cdc"):
            assert spec.cdc is not None
            broker = spec.cdc.bootstrap.split(",")[0].strip()
            topics = sorted({spec.cdc.topic_of(t.source) for t in spec.tables})
            return Lineage(wals, [DatasetRef(f"kafka://{broker}", t) for t in topics])
        return Lineage(wals, targets)
    repaired = step == "validate" and bool(result.metrics.get("repair"))
    return Lineage(sources + targets, targets if repaired else [])


def wal_lineage(spec: MigrationSpec, paths: list[str]) -> Lineage:
    """The WAL files ``paths`` of the source, as inputs (what the WAL watch found)."""
    source = open_cluster(spec.source).cluster_id()
    return Lineage([wal_dataset(source, p) for p in paths])
