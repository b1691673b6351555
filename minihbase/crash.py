"""The crash harness on the embedded stack (``hbase-migrate soak-crash``): the migration's own
processes SIGKILLed at seeded random points, each followed by the same command again.

1. Start ZooKeeper, the source (three region servers writing real WAL files) and the
   target as the soak does, or a real HBase pair (``--stack real``,
   :mod:`minihbase.crash_clusters`); the linked-list writer writes to the source until the
   end.
2. For each planned kill (:mod:`hbase_migrate.soak.crash_plan`): start the step's command
   (``prepare``, ``snapshot``, ``replay``, ``replay --follow``, ``validate --live``, a
   validation part, its judge, ``validate --repair``, ``cutover check``), SIGKILL its
   process group after a seeded delay (held, on a slow start, until the command has begun
   its step), run the same command again to its end, and check
   the invariants on the ledger and the source's WAL folders
   (:mod:`minihbase.crash_invariants`). A ``replay --follow`` runs beside the other
   steps once the copy is done, as a user keeps it running.
3. Then the writer stops, the source's WALs roll, a last catch-up drains, a validation and
   the cutover gate judge, and both clusters are read cell by cell over their Thrift2
   gateways (not the transport the migration used; a real pair by HBase's own client) and
   the lists counted.
4. With ``airflow`` executors, the same steps as Airflow tasks: each executor's DAG runs on
   a pair of clusters and an Airflow of their own, one task process killed in each run and
   Airflow's retry judged (:mod:`minihbase.crash_dags`).

The summary (kills per step, redone work per kill, seconds to converge, what each
invariant found) is printed and kept as ``summary.json`` in the run's folder.
"""

from __future__ import annotations

import functools
import json
import time
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from hbase_migrate import lifecycle
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import StepRecord, StepStatus
from hbase_migrate.config import MigrationSpec, load_config
from hbase_migrate.lifecycle.cdc import CDC_STREAM
from hbase_migrate.soak.crash_checks import LedgerView, redo, step_pid
from hbase_migrate.soak.crash_plan import (
    CDC_FOLLOW_STEP,
    CDC_STEP,
    CDC_STEPS,
    STEPS,
    STEPS_WITH_CDC,
    Kill,
    per_step,
)
from hbase_migrate.soak.linked_lists import ListSpec
from hbase_migrate.workdir import claim_workdir
from minihbase.crash_cdc import CdcTopic, open_topic
from minihbase.crash_clusters import CrashClusters, start_clusters
from minihbase.crash_compare import compare_tables
from minihbase.crash_dags import embedded_dag_kills
from minihbase.crash_invariants import InvariantChecks, now_ms
from minihbase.crash_result import CDC_INVARIANT, CrashResult, CrashSpec
from minihbase.crash_steps import Commands, Finished, Follow, step_args, wait_or_kill
from minihbase.soak import TABLE, ListWriter, write_config
from stackprocs.admin_client import call_admin

Say = Callable[[str], None]
# seconds each step is first expected to take (then: its last rerun's)
EXPECTED = {"prepare": 2.0, "snapshot": 3.0, "replay": 6.0, "follow": 8.0,
            "validate-live": 8.0, "validate-part": 6.0, "validate-judge": 6.0,
            "repair": 10.0, "cutover": 5.0, CDC_STEP: 4.0, CDC_FOLLOW_STEP: 4.0}
REDO = {"prepare": "copy", "snapshot": "copy", "replay": "wal", "follow": "wal",
        "validate-live": "validation", "validate-part": "validation",
        "validate-judge": "validation", "repair": "validation", "cutover": "validation",
        CDC_STEP: "wal", CDC_FOLLOW_STEP: "wal"}  # the CDC stream's files and offsets
LEAD_SHARE = 0.8  # a kill's window opens at this share of the step's lead
SHORTEST_WORK = 0.3  # seconds: the narrowest window a kill is drawn in
BACKLOG_SECONDS = 3.0  # the follow stopped this long before a catch-up, a backlog for it


class Harness(InvariantChecks):
    """One run: the stack's endpoints, the config, the children, the views."""

    def __init__(self, spec: CrashSpec, migration: MigrationSpec, config: Path,
                 clusters: CrashClusters, result: CrashResult, say: Say,
                 topic: CdcTopic | None = None) -> None:
        self.spec, self.migration, self.config = spec, migration, config
        self.topic, self.clusters = topic, clusters
        self.wal_root, self.result, self.say = clusters.wal_root, result, say
        self.commands = Commands(spec.root / "logs")
        self.follow = Follow(self.commands, config)
        self.cdc_follow = Follow(self.commands, config, CDC_FOLLOW_STEP)
        self.expected = dict(EXPECTED)
        self.lead: dict[str, float] = {}  # seconds from a step's start to its first ledger row
        self.copied = False
        self.cdc_redone = 0
        self.cdc_sent = Counter()
        self.cdc_counts = {}
        self.startup = 1.0  # seconds a command takes to start (measure_startup)

    def measure_startup(self) -> None:
        """How long a command takes to start (``status``, timed): the first guess of each
        step's lead until a rerun measured it."""
        done = self.commands.run(step_args("status", self.config), "status")
        self.startup = done.seconds
        self.say(f"a command starts in about {self.startup:.1f} s")

    def delay(self, kill: Kill) -> float:
        """The kill's moment: its fraction of the step's work, which begins shortly before
        the step's first ledger row appears (``lead``: the command opens the ledger and its
        clusters) and ends with the step (``expected``)."""
        begins = LEAD_SHARE * min(self.lead.get(kill.step, self.startup),
                                  self.expected[kill.step])
        return round(begins + kill.fraction * max(self.expected[kill.step] - begins,
                                                  SHORTEST_WORK), 2)

    def measured(self, step: str, rerun: Finished, after: LedgerView) -> None:
        """What the rerun of ``step`` took: its whole time and its lead."""
        if rerun.code not in (0, 1):
            return
        self.expected[step] = max(1.0, rerun.seconds)
        firsts = [s.started_at for s in after.steps if step_pid(s) == rerun.pid]
        if firsts and rerun.began_ms:
            self.lead[step] = max(0.0, (min(firsts) - rerun.began_ms) / 1000)

    # -- the ledger -------------------------------------------------------------------------

    def begun(self, stream: str, since: int, pid: int, step: str) -> bool:
        """Whether process ``pid`` (running ``step``) has recorded a step since ``since``."""
        view = self.view(stream)
        return any(_started_by(s, pid, step) for s in view.steps_between(since, view.at))

    # -- one kill ---------------------------------------------------------------------------

    def crash(self, kill: Kill) -> dict[str, Any]:
        step = kill.step
        run = f"crash-r{kill.round}"
        args = step_args(step, self.config, part=kill.part, run=run)
        if step == "replay" and self.follow.alive:
            self.follow.stop()
            time.sleep(BACKLOG_SECONDS)
        delay = self.delay(kill)
        stream = CDC_STREAM if step in CDC_STEPS else "source"
        before = self.view(stream)
        began = now_ms()
        if step == "follow":
            self.follow.stop()
            self.follow.start()
            proc = self.follow.proc
            assert proc is not None
            code = wait_or_kill(proc, delay)
            self.follow.proc = None if code is None else proc
        else:
            proc, _ = self.commands.start(args, f"{step}-killed")
            code = wait_or_kill(proc, delay, functools.partial(self.begun, stream, began,
                                                               proc.pid, step))
        killed_at = self.view(stream)
        mine = [s.id for s in killed_at.steps_between(began, killed_at.at)
                if _started_by(s, proc.pid, step)]
        clock = time.monotonic()
        rerun = self.rerun(kill, args)
        seconds = round(time.monotonic() - clock, 2)
        after = self.view()
        self.measured(step, rerun, after)
        extra = self.after_rerun(kill, run)
        found = self.violations(after)
        cdc_redo: dict[str, int] = {}
        if step in CDC_STEPS:
            cdc_redo, found[CDC_INVARIANT] = self.crash_cdc(kill, before, killed_at, mine,
                                                            rerun)
        problems = self.record(found, kill.line())
        if rerun.code not in (0, 1):
            line = f"{kill.line()}: the rerun ended with exit code {rerun.code} ({rerun.log})"
            self.result.invariants["reruns_failed"].append(line)
            problems.append(line)
        gate = _gate(rerun) if step == "cutover" else None
        if gate == "go" and problems:
            self.result.invariants["gate_go_while_broken"].append(
                f"{kill.line()}: the gate said go while {problems[0]}")
        outcome = {"index": kill.index, "step": step, "round": kill.round,
                   "fraction": kill.fraction, "delay": delay, "hit": code is None,
                   "exit_before_kill": code, "killed_steps": mine,
                   "rerun_exit": rerun.code, "seconds_to_converge": seconds,
                   "redo": (cdc_redo if step in CDC_STEPS
                            else redo(before, killed_at, after, mine, REDO[step]))
                   if code is None else {}, "gate": gate,
                   "violations": problems, **extra}
        self.say(f"kill {kill.line()}: {'hit' if code is None else f'missed (exit {code})'} "
                 f"after {delay:.1f} s, steps {mine}; rerun exit {rerun.code} in {seconds} s; "
                 f"redo {_short(outcome['redo'])}"
                 + (f"; VIOLATIONS: {'; '.join(problems)[:400]}" if problems else ""))
        return outcome

    def rerun(self, kill: Kill, args: list[str]) -> Finished:
        """What an operator runs next: the same command, to its end (the follow: until a
        run of the new follow has succeeded; the follow then keeps running)."""
        if kill.step in ("follow", CDC_FOLLOW_STEP):
            follow = self.follow if kill.step == "follow" else self.cdc_follow
            began = time.monotonic()
            follow.start()
            pid = follow.pid or 0
            code = self._follow_ran(follow, follow.started_ms)
            if follow is self.cdc_follow:  # stopped once converged: the next CDC run's
                stopped = follow.stop()
                code = code if stopped == 0 else 2
            return Finished(code, round(time.monotonic() - began, 2), follow.log or Path(),
                            pid=pid, began_ms=follow.started_ms)
        done = self.commands.run(args, f"{kill.step}-rerun")
        if kill.step == "snapshot" and done.code == 0:
            self.copied = True
        return done

    def _follow_ran(self, follow: Follow, since: int, timeout: float = 300.0) -> int:
        """0 once a step of ``follow`` (a replay, or a CDC run) started at or after
        ``since`` succeeded; 2 when the follow died or none did within ``timeout``."""
        kind = "replay" if follow is self.follow else CDC_STEP
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not follow.alive:
                return 2
            with Ledger.open(self.migration.ledger_url) as ledger:
                record = ledger.migration(self.migration.name)
                steps = ledger.steps(record.id, kind) if record else []
            if any(s.started_at >= since and s.status is StepStatus.SUCCEEDED for s in steps):
                return 0
            time.sleep(0.5)
        return 2

    def after_rerun(self, kill: Kill, run: str) -> dict[str, Any]:
        """The follow starts once the copy is done (and again after a catch-up); a killed
        part's round gets its other part, so that the round's judge has both."""
        extra: dict[str, Any] = {}
        if self.copied and not self.follow.alive:
            self.follow.start()
        if kill.step == "validate-part":
            other = 2 if kill.part == 1 else 1
            done = self.commands.run(step_args(kill.step, self.config, part=other, run=run),
                                     "validate-part-other")
            extra["other_part_exit"] = done.code
        return extra

    # -- the end ----------------------------------------------------------------------------

    def finish(self, writer: ListWriter) -> None:
        """Writer stopped, WALs rolled, a last catch-up, the final checks and verdicts."""
        result, say = self.result, self.say
        written = writer.stop()
        call_admin(self.clusters.source_json, "roll")
        time.sleep(2)
        code = self.follow.stop()
        drain = self.commands.run(step_args("replay", self.config), "drain")
        say(f"end: writer stopped ({written.nodes_written} nodes written, {written.live_nodes} "
            f"live), follow stopped (exit {code}), drain exit {drain.code}")
        final = self.view()
        found = self.violations(final, final=True)
        if self.topic is not None:  # the stream drained too: every edit since T0 is in it
            streamed = self.commands.run(step_args(CDC_STEP, self.config), "cdc-drain")
            found[CDC_INVARIANT] = self.check_cdc(now_ms()) if streamed.code == 0 else [
                f"the last CDC run ended with exit code {streamed.code} ({streamed.log})"]
            result.end["cdc"] = {"topic": self.topic.name, "drain_exit": streamed.code,
                                 **self.cdc_counts}
            say(f"end: CDC drain exit {streamed.code}, {self.cdc_counts}")
        self.record(found, "end")
        validated = self.commands.run(step_args("validate", self.config), "final-validate")
        gate = self.commands.run(step_args("cutover", self.config), "final-cutover")
        verdict = _gate(gate)
        cells = compare_tables(*self.clusters.judged(), TABLE)
        verified = lifecycle.verify_lists(self.migration)
        table, = verified.metrics["tables"]
        broken = any(self.result.invariants.values()) or not cells["equal"]
        if verdict == "go" and broken:
            result.invariants["gate_go_while_broken"].append(
                "end: the gate said go while an invariant failed or the cells differ")
        result.end = {**result.end, "drain_exit": drain.code, "validate_exit": validated.code,
                      "gate": verdict, "cells": cells, "written": written.to_json(),
                      "lists_source": table["source_counts"],
                      "lists_target": table["target_counts"]}
        if not cells["equal"]:
            result.problems.append(f"the target differs from the source: {cells}")
        if table["source_counts"]["REFERENCED"] != written.live_nodes:
            result.problems.append(f"the source holds {table['source_counts']['REFERENCED']} "
                                   f"live nodes, the writer left {written.live_nodes}")
        if not verified.passed:
            result.problems.append(f"verify: the target's lists {table['target_counts']} "
                                   f"against the source's {table['source_counts']}")
        if verdict != "go":
            result.problems.append(f"the final cutover gate said {verdict} ({gate.log})")
        say(f"end: validate exit {validated.code}, gate {verdict}, cells "
            f"{'equal' if cells['equal'] else 'DIFFER'} ({cells['source_cells']} on the "
            f"source, {cells['target_cells']} on the target)")


def run_crash(spec: CrashSpec, say: Say) -> CrashResult:
    """Run the harness; ``say`` prints progress lines."""
    began = time.monotonic()
    with ExitStack() as stack:
        stack.enter_context(claim_workdir(spec.root, "soak-crash"))
        topic = open_topic(stack, spec.root, spec.kafka, say) if spec.cdc else None
        if topic is not None and not set(CDC_STEPS) & set(spec.steps):
            spec = replace(spec, steps=STEPS_WITH_CDC if spec.steps == STEPS
                           else (*spec.steps, *CDC_STEPS))
        if topic is None:
            spec = replace(spec, cdc=False,
                           steps=tuple(s for s in spec.steps if s not in CDC_STEPS) or STEPS)
        result = CrashResult(spec)
        if topic is not None:
            result.invariants[CDC_INVARIANT] = []
        plan = spec.plan()
        say(f"soak-crash: seed {spec.seed}, {len(plan)} kills over "
            f"{', '.join(f'{k} {n}' for k, n in per_step(plan).items())}")
        clusters = start_clusters(spec.stack, spec.root, stack, say)
        source = clusters.source
        config = write_config(spec.root, source, clusters.target)
        if topic is not None:
            with config.open("a", encoding="utf-8") as toml:
                toml.write(topic.config_section())
        migration = load_config(config)
        harness = Harness(spec, migration, config, clusters, result, say, topic)
        writer = ListWriter(source, ListSpec(TABLE, seed=spec.seed, rate=spec.rate))
        stack.callback(harness.follow.stop, 30)
        stack.callback(harness.cdc_follow.stop, 30)
        try:
            time.sleep(spec.preload)
            harness.measure_startup()
            for kill in plan:
                writer.check()
                result.kills.append(harness.crash(kill))
            if not harness.copied:  # a plan too short to reach the copy
                harness.commands.run(step_args("prepare", config), "prepare")
                harness.copied = harness.commands.run(step_args("snapshot", config),
                                                      "snapshot").code == 0
            harness.follow.start()
            harness.finish(writer)
        finally:
            writer.halt.set()
        if spec.airflow:  # the commands' clusters stopped: the DAGs get a pair of their own
            harness.follow.stop(30)
            harness.cdc_follow.stop(30)
            clusters.close()
            result.airflow = embedded_dag_kills(spec.root, spec.airflow, spec.seed, say)
        result.seconds = time.monotonic() - began
        summary = result.summary()
        (spec.root / "summary.json").write_text(json.dumps(summary, indent=2, default=str),
                                                encoding="utf-8")
    return result


def _gate(done: Finished) -> str | None:
    """The verdict of a ``cutover check`` by its exit code (0 go, 1 no-go, else none)."""
    return {0: "go", 1: "no-go"}.get(done.code)


def _started_by(step: StepRecord, pid: int, killed: str) -> bool:
    """Whether the killed process (``pid``, running step ``killed``) started ``step``: by
    its recorded pid, else by kind (the follow beside it starts only replay steps)."""
    recorded = step_pid(step)
    if recorded is not None:
        return recorded == pid
    return (killed in ("replay", "follow")) == (step.kind == "replay")


def _short(redone: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in redone.items() if v) or "none"
