"""The chaos soak on the embedded stack (``hbase-migrate soak``), as HBase proves itself with
IntegrationTestBigLinkedList under its ChaosMonkey.

1. Start a real ZooKeeper, the source minicluster (three region servers writing real WAL
   files) and an empty target; the linked-list writer (:mod:`hbase_migrate.soak.linked_lists`)
   starts writing to the source and writes until the end.
2. The migration as a user runs it: through a local Airflow's DAGs (``hbase_migrate_start``,
   then rounds of the WAL watch and the Asset-scheduled replay) or through the command line
   (``prepare``, ``snapshot``, then ``hbase-migrate replay --follow`` in a child process).
3. Meanwhile the chaos monkey (:mod:`hbase_migrate.soak.chaos`) runs its seeded schedule:
   source region servers killed and restarted, regions moved, WALs rolled, the replay
   process (or its Airflow task) killed, the target's gateway stopped and started, Airflow's
   scheduler restarted, WebHDFS slowed down; each a ``chaos`` step of the ledger.
4. Then the writer stops (closing its open lists), replay drains, the range validation and
   the cutover gate judge, and the verify step counts the lists on both sides; the audit
   report shows it all. The soak passes only when the gate says go and the target's
   REFERENCED equals the source's (and the writer's count) with no UNREFERENCED and no
   UNDEFINED node.

Only the stack, the writer and the faults belong here; every step is the core's.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hbase_migrate import lifecycle
from hbase_migrate.audit.ledger import Ledger, now_ms
from hbase_migrate.audit.status import compute_status
from hbase_migrate.cluster.endpoints import ClusterEndpoints, load_cluster_json
from hbase_migrate.config import ENDPOINT_KEYS, MigrationSpec, load_config
from hbase_migrate.hbase.connect import connect
from hbase_migrate.lifecycle.result import StepResult
from hbase_migrate.soak.chaos import ACTIONS, ChaosEvent, ChaosMonkey, schedule
from hbase_migrate.soak.linked_lists import LinkedListWriter, ListCounts, ListSpec
from hbase_migrate.timeutil import human_duration, parse_duration
from hbase_migrate.workdir import claim_workdir
from minihbase.soak_acts import cluster_acts, process_act
from minihbase.stack import EmbeddedStack
from stackprocs.admin_client import call_admin
from stackprocs.process import log_tail, spawn_child, stop_child

MIGRATION = "soak"
TABLE = "lists"
ROLL_PERIOD = "30s"
SOURCE_ARGS = ["--region-servers", "3", "--roll-period", ROLL_PERIOD,
               "--wal-compression", "dict+tags"]
REAL_CANNOT = ("slow-webhdfs",)  # realstack's admin endpoint has no WebHDFS delay
SETTLE_SECONDS = 20.0  # no fault starts in the soak's last seconds before the drain
Say = Callable[[str], None]


@dataclass(frozen=True)
class SoakSpec:
    root: Path
    minutes: float
    seed: int = 1
    airflow: bool = True
    rate: float = 40.0  # linked-list writes per second
    mean_gap: float = 15.0  # seconds between chaos actions, on average
    stack: str = "embedded"  # or "real": real HBase on both sides (realstack)
    client: str = "native"  # how the writer, the checkers and the migration reach both
    #                         clusters: HBase's own RPC, or "thrift" (the Thrift2 gateways)

    @property
    def chaos_seconds(self) -> float:
        return max(0.0, self.minutes * 60 - SETTLE_SECONDS)

    def events(self) -> list[ChaosEvent]:
        left_out = {*(() if self.airflow else ("restart-scheduler",)),
                    *(REAL_CANNOT if self.stack == "real" else ()),
                    # realstack's admin endpoint stops its Thrift2 gateway, not its RPC
                    *(("target-outage",) if self.stack == "real" and self.client == "native"
                      else ())}
        actions = {k: v for k, v in ACTIONS.items() if k not in left_out}
        return schedule(self.seed, self.chaos_seconds, actions, mean_gap=self.mean_gap)


@dataclass
class SoakResult:
    events: list[ChaosEvent]
    actions: list[dict[str, Any]] = field(default_factory=list)
    written: ListCounts | None = None
    gate: StepResult | None = None
    verified: StepResult | None = None
    report: str | None = None
    lag_peak_ms: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.gate is not None and self.gate.passed and \
            self.verified is not None and self.verified.passed


def write_config(root: Path, source: ClusterEndpoints, target: ClusterEndpoints) -> Path:
    """The migration file: the clusters by their gateways (as the DAGs' ``hbase``
    connections name them), the table, the ledger and the source's roll period."""
    def section(endpoints: ClusterEndpoints) -> str:
        data = endpoints.to_json()
        return "".join(f'{k} = "{data[k]}"\n' for k in ENDPOINT_KEYS if data.get(k))

    path = root / "migration.toml"
    path.write_text(
        f'[migration]\nname = "{MIGRATION}"\nledger = "{ledger_url(root)}"\n'
        f"[source]\n{section(source)}[target]\n{section(target)}"
        f'[[tables]]\nsource = "{TABLE}"\n'
        f'[replay]\nroll_period = "{ROLL_PERIOD}"\nmargin = "1m"\n', encoding="utf-8")
    return path


def ledger_url(root: Path) -> str:
    return f"sqlite:///{(root / 'ledger.db').absolute()}"


class ListWriter:
    """The linked-list writer in a thread until :meth:`stop`, over the source's client (its
    ``client`` setting: HBase's RPC or the Thrift2 gateway), as the migration reads it."""

    def __init__(self, source: ClusterEndpoints, spec: ListSpec) -> None:
        self.client = connect(source)
        self.writer = LinkedListWriter(self.client, spec)
        self.writer.ensure_table()
        self.halt = threading.Event()
        self.failed: list[BaseException] = []
        self.thread = threading.Thread(target=self._write, name="linked-lists", daemon=True)
        self.thread.start()

    def _write(self) -> None:
        try:
            self.writer.run(self.halt)
        except BaseException as exc:  # raised in the caller's thread by check() or stop()
            self.failed.append(exc)

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]

    def stop(self) -> ListCounts:
        self.halt.set()
        self.thread.join()
        self.client.close()
        self.check()
        return self.writer.counts


class Follow:
    """``hbase-migrate replay --follow`` in a child process that chaos kills and starts
    again. One long-lived thread starts every process: a child dies with the thread that
    started it (:func:`~stackprocs.process.spawn_child`), and a chaos thread ends at once."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.proc: subprocess.Popen[bytes] | None = None
        self.wanted = threading.Event()
        self.ending = threading.Event()
        self.crashes: list[str] = []  # exits nobody asked for
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._keep, name="follow", daemon=True)

    def _keep(self) -> None:
        while not self.ending.wait(0.2):
            with self.lock:
                if self.proc is not None and self.proc.poll() is not None:
                    if self.wanted.is_set():
                        self.crashes.append(f"replay --follow (pid {self.proc.pid}) exited "
                                            f"with code {self.proc.returncode}")
                    self.proc = None
                if self.proc is None and self.wanted.is_set():
                    self.proc = spawn_child(
                        [sys.executable, "-m", "hbase_migrate", "replay", "--config",
                         str(self.config), "--follow", "--interval", "1s"],
                        str(self.config.parent / "follow.log"))

    def start(self) -> None:
        self.wanted.set()
        if not self.thread.is_alive():
            self.thread.start()

    def kill(self) -> dict[str, Any]:
        with self.lock:
            self.wanted.clear()
            if self.proc is None:
                return {"killed": None}
            pid = self.proc.pid
            self.proc.kill()
            self.proc.wait(30)
            self.proc = None
        return {"killed": f"replay --follow (pid {pid})"}

    def stop(self) -> int | None:
        """SIGTERM (the follow ends after its file and prints its summary); its exit code.
        The thread that started it ends only afterwards: its end would SIGTERM the child
        too (the parent-death signal), and a second signal interrupts a follow."""
        with self.lock:
            self.wanted.clear()
            proc = self.proc
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(120)
            except subprocess.TimeoutExpired:  # it printed its threads at 60 s: a second
                stop_child(proc, timeout=15)  # SIGTERM interrupts it, then SIGKILL
        self.ending.set()
        self.thread.join()
        return None if proc is None else proc.returncode


Drive = Callable[[SoakSpec, MigrationSpec, tuple[Path, Path], ListWriter, SoakResult, Say],
                 None]


def run_soak(spec: SoakSpec, say: Say, airflow: Drive | None = None) -> SoakResult:
    """Run the soak; ``say`` prints progress lines (stderr). ``airflow`` drives the
    migration when ``spec.airflow`` (``minihbase.soak_airflow.drive_airflow``, which the
    caller imports only then)."""
    if spec.airflow and airflow is None:
        raise ValueError("soak through Airflow: run_soak was given no Airflow driver "
                         "(pass minihbase.soak_airflow.drive_airflow)")
    result = SoakResult(spec.events())
    with ExitStack() as stack:
        stack.enter_context(claim_workdir(spec.root, "soak"))
        say(f"soak: seed {spec.seed}, {spec.minutes:g} min on the {spec.stack} stack, "
            f"{len(result.events)} chaos actions planned, through "
            f"{'Airflow' if spec.airflow else 'the command line'}")
        source, target = (_real_clusters if spec.stack == "real" else _embedded_clusters)(
            spec.root, stack)
        source, target = replace(source, client=spec.client), replace(target,
                                                                      client=spec.client)
        config = write_config(spec.root, source, target)
        migration = load_config(config)
        clusters = spec.root / "source" / "cluster.json", spec.root / "target" / "cluster.json"
        say(f"stack up: source {reached(source)}, target {reached(target)}; config {config}")
        writer = ListWriter(source, ListSpec(TABLE, seed=spec.seed, rate=spec.rate))
        try:
            if airflow is not None and spec.airflow:
                airflow(spec, migration, clusters, writer, result, say)
            else:
                _drive_cli(spec, migration, config, clusters, writer, result, say)
        finally:
            if not writer.halt.is_set():
                writer.halt.set()
        _judge(migration, result, say)
    return result


def reached(cluster: ClusterEndpoints) -> str:
    """How the writer, the checkers and the migration reach ``cluster``, for the output."""
    if cluster.native:
        return f"over HBase's native RPC (ZooKeeper {cluster.zookeeper})"
    return f"over Thrift2 ({cluster.thrift2})"


def _embedded_clusters(root: Path, stack: ExitStack) -> tuple[ClusterEndpoints,
                                                                ClusterEndpoints]:
    embedded = stack.enter_context(EmbeddedStack(root))
    embedded.start_zookeeper()
    return embedded.start_cluster("source", SOURCE_ARGS), embedded.start_cluster("target")


def _real_clusters(root: Path, stack: ExitStack) -> tuple[ClusterEndpoints, ClusterEndpoints]:
    """Real HBase on both sides (realstack: mini HDFS, ZooKeeper, master, region servers,
    HBase's Thrift gateways in one JVM each)."""
    from realstack.hbase import RealHBase, RealHBaseOptions

    period = parse_duration(ROLL_PERIOD, name="roll period")
    found = []
    for name, servers in (("source", 3), ("target", 1)):
        options = RealHBaseOptions(region_servers=servers, name=name, heap="768m",
                                   wal_compression="dict+tags", roll_period_ms=period)
        real = stack.enter_context(RealHBase(root / name, options))
        found.append(load_cluster_json(real.cluster_json))
    return found[0], found[1]


def _drive_cli(spec: SoakSpec, migration: MigrationSpec, config: Path,
               clusters: tuple[Path, Path], writer: ListWriter, result: SoakResult,
               say: Say) -> None:
    lifecycle.prepare(migration)
    copied = lifecycle.snapshot(migration)
    say(f"snapshot at T0: {copied.metrics['rows']} rows, {copied.metrics['cells']} cells")
    follow = Follow(config)
    follow.start()
    acts = {**cluster_acts(*clusters, target_native=migration.target.endpoints().native),
            "kill-replay": process_act(follow.kill, follow.start)}
    run_chaos(spec, migration, acts, writer, result, say)
    result.written = writer.stop()
    call_admin(clusters[0], "roll")
    time.sleep(3)  # the follow's next runs read the last edits
    code = follow.stop()
    log = config.parent / "follow.log"
    for crash in follow.crashes + ([] if code in (0, -15, None) else
                                   [f"replay --follow ended with exit code {code}"]):
        result.problems.append(f"{crash}; its log {log} ends:\n{log_tail(str(log), 60)}")
    drained = lifecycle.replay(migration)
    say(f"drain: a last catch-up replay read {drained.to_json().get('files_read')} file(s), "
        f"exit code {drained.exit_code}")
    validated = lifecycle.validate(migration)
    say(f"validate: {validated.verdict}")
    result.gate = lifecycle.cutover_check(migration)


def run_chaos(spec: SoakSpec, migration: MigrationSpec, acts: dict[str, Any],
              writer: ListWriter, result: SoakResult, say: Say,
              beside: Callable[[], None] = lambda: None) -> None:
    """The monkey's schedule, with progress and lag samples every few seconds; ``beside``
    is called between samples (the Airflow rounds)."""
    monkey = ChaosMonkey(result.events, acts, spec.seed, migration.ledger_url, migration.name,
                         say).start()
    began = time.monotonic()
    shown = 0.0
    try:
        while time.monotonic() - began < spec.chaos_seconds + SETTLE_SECONDS / 2:
            writer.check()
            beside()
            lag = _lag(migration)
            result.lag_peak_ms = max(result.lag_peak_ms, lag or 0)
            if time.monotonic() - shown >= 15:
                shown = time.monotonic()
                counts = writer.writer.counts
                say(f"[+{shown - began:5.0f}s] nodes written {counts.nodes_written} (live "
                    f"{counts.live_nodes}), lists deleted {counts.lists_deleted}, rewritten "
                    f"{counts.lists_rewritten}; chaos {len(monkey.done)}/{len(result.events)};"
                    f" lag {'-' if lag is None else f'{lag / 1000:.1f} s'}")
            time.sleep(2)
    finally:
        result.actions = monkey.join()


def _lag(migration: MigrationSpec) -> int | None:
    with Ledger.open(migration.ledger_url) as ledger:
        if ledger.migration(migration.name) is None:
            return None
        found, = compute_status(ledger, now=now_ms(), names=[migration.name]).migrations
        return found.lag


def _judge(migration: MigrationSpec, result: SoakResult, say: Say) -> None:
    """The verify step, the report, and what the soak found against the writer's count."""
    result.verified = lifecycle.verify_lists(migration)
    table, = result.verified.metrics["tables"]
    for line in table["lines"]:
        say(line)
    written = result.written.live_nodes if result.written else None
    on_source = table["source_counts"]["REFERENCED"]
    if written != on_source:
        result.problems.append(f"the writer left {written} live nodes but the source holds "
                               f"{on_source}")
    if not result.verified.passed:
        found = table["target_counts"]
        result.problems.append(
            f"verify: the target holds REFERENCED={found['REFERENCED']} (the source "
            f"{on_source}), UNREFERENCED={found['UNREFERENCED']}, "
            f"UNDEFINED={found['UNDEFINED']}: writes were lost")
    result.report = str(lifecycle.report(migration).metrics["path"])
    if result.gate is None:
        result.problems.append("no cutover verdict was recorded")
    elif not result.gate.passed:
        result.problems += [f"cutover gate: {why}" for why in result.gate.metrics["reasons"]]
    failed = [a for a in result.actions if "error" in a]
    say(f"chaos: {len(result.actions)} actions taken ({len(failed)} failed); replay lag peak "
        f"{human_duration(result.lag_peak_ms)}")
