"""Examples shown at the end of every command's ``--help``.

One table, by command path, so that every command (the core's and those other packages
contribute) has one and a test can check none is missing; :func:`add_examples` puts them
into a loaded command and its subcommands as click epilogs (kept as written: ``\\b``).
"""

from __future__ import annotations

import click

CFG = "--config migration.toml"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("hbase-migrate prepare " + CFG, "hbase-migrate status " + CFG),
    "airflow": ("hbase-migrate airflow up --dir state/airflow",),
    "airflow up": ("hbase-migrate airflow up --dir state/airflow",
                   "hbase-migrate airflow up --executor celery --workers 2"),
    "airflow down": ("hbase-migrate airflow down --dir state/airflow",),
    "airflow env": ("hbase-migrate airflow env --dir state/airflow",),
    "airflow dags": ("hbase-migrate airflow dags ~/airflow/dags",),
    "backfill": (f"hbase-migrate backfill {CFG} --table orders --start 2024-05-01T12:00:00Z "
                 "--end 2024-05-01T13:00:00Z",
                 f"hbase-migrate backfill {CFG} --table orders --start 1714564800000 "
                 "--end 1714568400000 --dry-run"),
    "bigtable": ("hbase-migrate bigtable emulator start --dir state/bigtable",),
    "bigtable emulator": ("hbase-migrate bigtable emulator start --dir state/bigtable",),
    "bigtable emulator start": ("hbase-migrate bigtable emulator start --dir state/bigtable "
                                "--port 8086",),
    "bigtable emulator stop": ("hbase-migrate bigtable emulator stop --dir state/bigtable",),
    "cdc": (f"hbase-migrate cdc {CFG} --follow",
            f"hbase-migrate cdc {CFG} --start 2024-05-01T12:00:00Z --end "
            "2024-05-01T13:00:00Z --dry-run"),
    "cluster": (f"hbase-migrate cluster info {CFG} --side source",),
    "config": ("hbase-migrate config show orders > orders.toml",),
    "config show": ("hbase-migrate config show orders > orders.toml",
                    "hbase-migrate config show orders --ledger sqlite:///state/ledger.db"),
    "cluster info": (f"hbase-migrate cluster info {CFG} --side target --json",),
    "cutover": (f"hbase-migrate cutover check {CFG}",),
    "cutover check": (f"hbase-migrate cutover check {CFG} --max-lag 30s",),
    "demo": ("hbase-migrate demo --dir state/demo",
             "hbase-migrate demo --no-airflow --dir /tmp/demo --ops 1000",
             "hbase-migrate demo --target bigtable --dir state/demo-bigtable"),
    "ledger": (f"hbase-migrate ledger info {CFG}",),
    "ledger info": (f"hbase-migrate ledger info {CFG}",
                    "hbase-migrate ledger info --url sqlite:///ledger.db --json"),
    "ledger upgrade": (f"hbase-migrate ledger upgrade {CFG}",),
    "limits": (f"hbase-migrate limits show {CFG}",),
    "limits show": (f"hbase-migrate limits show {CFG} --json",),
    "limits set": (f"hbase-migrate limits set {CFG} copy_cells_per_second=5000 adaptive=true",),
    "minicluster": ("hbase-migrate minicluster start --dir state/source",),
    "minicluster start": ("hbase-migrate minicluster start --name source --dir state/source",
                          "hbase-migrate minicluster start --name target --dir state/target "
                          "--zookeeper 127.0.0.1:2181"),
    "minicluster info": ("hbase-migrate minicluster info --cluster state/source/cluster.json",),
    "minicluster roll": ("hbase-migrate minicluster roll --cluster state/source/cluster.json",),
    "minicluster kill": ("hbase-migrate minicluster kill --cluster state/source/cluster.json 1",),
    "minicluster restart": ("hbase-migrate minicluster restart --cluster "
                            "state/source/cluster.json 1",),
    "minicluster move": ("hbase-migrate minicluster move --cluster state/source/cluster.json "
                         "REGION --server 2",),
    "minicluster flush": ("hbase-migrate minicluster flush --cluster state/source/cluster.json "
                          "--table orders",),
    "minicluster clean": ("hbase-migrate minicluster clean --cluster state/source/cluster.json",),
    "minicluster finish-split": ("hbase-migrate minicluster finish-split --cluster "
                                 "state/source/cluster.json",),
    "minicluster bulk-load": ("hbase-migrate minicluster bulk-load --cluster "
                              "state/source/cluster.json --table orders --cells 100",),
    "minicluster replication": ("hbase-migrate minicluster replication --cluster "
                                "state/source/cluster.json disable",),
    "minicluster service": ("hbase-migrate minicluster service --cluster "
                            "state/target/cluster.json thrift2 stop",),
    "minicluster webhdfs-latency": ("hbase-migrate minicluster webhdfs-latency --cluster "
                                    "state/source/cluster.json 2.5",),
    "prepare": (f"hbase-migrate prepare {CFG}",),
    "realstack": ("hbase-migrate realstack start --dir state/real",),
    "realstack start": ("hbase-migrate realstack start --dir state/real --hbase-version 2.5.11",),
    "realstack classpath": ("hbase-migrate realstack classpath hbase -D hbase.version=2.5.11",),
    "realstack kafka": ("hbase-migrate realstack kafka start --dir state/kafka",),
    "realstack kafka start": ("hbase-migrate realstack kafka start --dir state/kafka "
                              "--auto-create",),
    "realstack yarn": ("hbase-migrate realstack yarn start --dir state/yarn",),
    "realstack yarn start": ("hbase-migrate realstack yarn start --dir state/yarn "
                             "--node-managers 2 --queue default --queue etl",),
    "replay": (f"hbase-migrate replay {CFG}", f"hbase-migrate replay {CFG} --follow "
               "--interval 10", f"hbase-migrate replay {CFG} --dry-run --json"),
    "report": (f"hbase-migrate report {CFG} --out report.html",),
    "snapshot": (f"hbase-migrate snapshot {CFG}",
                 f"hbase-migrate snapshot {CFG} --watermark 2024-05-01T12:00:00Z "
                 "--method hbase"),
    "soak": ("hbase-migrate soak --minutes 15 --dir state/soak",
             "hbase-migrate soak --cli --seed 41 --minutes 2"),
    "soak-crash": ("hbase-migrate soak-crash --kills 50 --seed 76 --cdc --airflow local,celery "
                   "--dir state/soak-crash",
                   "hbase-migrate soak-crash --kills 9 --rate 10"),
    "status": (f"hbase-migrate status {CFG}", "hbase-migrate status --url "
               "sqlite:///ledger.db --json"),
    "validate": (f"hbase-migrate validate {CFG}", f"hbase-migrate validate {CFG} --repair",
                 f"hbase-migrate validate {CFG} --part 1/4 --run nightly"),
    "hfile": ("hbase-migrate hfile dump --json data/default/orders/REGION/f/STOREFILE",),
    "hfile dump": ("hbase-migrate hfile dump --json data/default/orders/REGION/f/STOREFILE",
                   "hbase-migrate hfile dump ./exported/f/STOREFILE | head",
                   "hbase-migrate hfile dump "
                   "webhdfs://namenode:9870/hbase/data/default/orders/REGION/f/STOREFILE"),
    "hfile info": ("hbase-migrate hfile info --json data/default/orders/REGION/f/STOREFILE",),
    "wal": ("hbase-migrate wal dump --json hbase/oldWALs/host%2C16020%2C1.1714564800000",),
    "wal dump": ("hbase-migrate wal dump --json --values hbase/oldWALs/FILE",
                 "hbase-migrate wal dump --table orders --start 2024-05-01 webhdfs://nn:9870"
                 "/hbase/WALs/SERVER/FILE"),
    "wal select": ("hbase-migrate wal select --start 2024-05-01T12:00:00Z --end "
                   "2024-05-01T13:00:00Z --roll-period 1h hbase/WALs hbase/oldWALs",),
    "wal stats": ("hbase-migrate wal stats hbase/oldWALs", "hbase-migrate wal stats --json "
                  "hbase/WALs/SERVER/FILE"),
    "workload": ("hbase-migrate workload --cluster state/source/cluster.json --table orders "
                 "--ops 3000 --seed 7",),
    "zookeeper": ("hbase-migrate zookeeper start --dir state/zookeeper",),
    "zookeeper start": ("hbase-migrate zookeeper start --dir state/zookeeper --port 2181",),
}


def epilog(path: str) -> str | None:
    """The ``Examples:`` block of the command ``path`` (``"wal dump"``), unwrapped."""
    found = EXAMPLES.get(path)
    if not found:
        return None
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in found)


def add_examples(command: click.Command, path: str) -> None:
    """Give ``command`` (and its subcommands) their examples, unless it has an epilog."""
    if command.epilog is None:
        command.epilog = epilog(path)
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            add_examples(sub, f"{path} {name}".strip())
