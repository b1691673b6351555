"""Where the suite's time goes (a pytest plugin): each test's category by its marks, as
HBase's small, medium and large tests, with a budget each; the time each test took, its
setup and teardown included; at the end of a run the time per category and per module, the
tests over their budget, and a record of it all in ``build/`` that ``scripts/check_budgets.py``
judges (CI runs it after the suite)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

# The time one test of each category may take on a busy 2-core machine (seconds). A unit
# test is judged on its worker's CPU time, which a loaded machine does not stretch (it starts
# no process and waits on nothing); the others on their wall time, which includes the
# processes and clusters they start.
BUDGETS = {"unit": 10.0, "embedded": 120.0, "real": 300.0, "own_stack": 600.0}
ON_CPU = ("unit",)

CPU_AT = pytest.StashKey[float]()
# A test that asks for one of these, itself or through another fixture (the embedded clusters
# and their clients all stand on ZooKeeper), runs real parts: embedded at least, marked or not.
EMBEDDED_FIXTURES = ("zookeeper", "kafka_broker")


def category(keywords: Any) -> str:
    """A test's category: ``own_stack`` (clusters of its own), ``real`` (real HBase),
    ``embedded`` (the embedded cluster or another real part, a whole migration's run), else
    ``unit``."""
    for mark, name in (("own_stack", "own_stack"), ("realstack", "real"),
                       ("integration", "embedded"), ("e2e", "embedded")):
        if mark in keywords:
            return name
    return "unit"


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        if category(item.keywords) == "unit" and any(n in names for n in EMBEDDED_FIXTURES):
            item.add_marker(pytest.mark.integration)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None
                            ) -> Generator[None, object, object]:
    item.stash[CPU_AT] = time.process_time()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.when == "teardown" and CPU_AT in item.stash:  # the worker's CPU, all phases
        report.user_properties.append(("cpu", time.process_time() - item.stash[CPU_AT]))
    return report


def measured(stats: dict[str, list[Any]]) -> dict[str, dict[str, Any]]:
    """Each test's category, wall seconds (setup, call and teardown) and CPU seconds."""
    tests: dict[str, dict[str, Any]] = {}
    for reports in stats.values():
        for report in reports:
            nodeid, when = getattr(report, "nodeid", None), getattr(report, "when", None)
            if not nodeid or when not in ("setup", "call", "teardown"):
                continue
            test = tests.setdefault(nodeid, {"category": category(getattr(report, "keywords", {})),
                                             "seconds": 0.0, "cpu": None})
            test["seconds"] += float(report.duration)
            for name, value in getattr(report, "user_properties", ()):
                if name == "cpu":
                    test["cpu"] = round(float(value), 2)
    for test in tests.values():
        test["seconds"] = round(test["seconds"], 2)
    return dict(sorted(tests.items(), key=lambda item: -item[1]["seconds"]))


def over_budget(tests: dict[str, dict[str, Any]]) -> list[str]:
    """The tests over their category's budget, one line each."""
    lines = []
    for nodeid, test in tests.items():
        budget, on_cpu = BUDGETS[test["category"]], test["category"] in ON_CPU
        spent = test["cpu"] if on_cpu else test["seconds"]
        if spent is not None and spent > budget:
            lines.append(f"{nodeid}: {spent:.0f} s{' of CPU' if on_cpu else ''}, over the "
                         f"{test['category']} budget of {budget:.0f} s")
    return lines


def per_module(tests: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The seconds of each test module, largest first."""
    modules: dict[str, float] = {}
    for nodeid, test in tests.items():
        module = nodeid.split("::", 1)[0]
        modules[module] = modules.get(module, 0.0) + test["seconds"]
    return {module: round(seconds, 1) for module, seconds
            in sorted(modules.items(), key=lambda item: -item[1])}


def record_path(config: pytest.Config) -> Path:
    """``build/test-durations-<mark expression>[-<paths given>].json``: one record per kind
    of run (``make test``, ``make test-stacks``, ``make test-yarn``)."""
    name = config.option.markexpr or "all"
    if config.args_source is pytest.Config.ArgsSource.ARGS:
        name += " " + " ".join(config.args)
    slug = re.sub(r"\W+", "-", name).strip("-")[:80]
    return config.rootpath / "build" / f"test-durations-{slug}.json"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    tests = measured(terminalreporter.stats)
    if not tests:
        return
    spent = {name: [0.0, 0] for name in BUDGETS}
    for test in tests.values():
        spent[test["category"]][0] += test["seconds"]
        spent[test["category"]][1] += 1
    write = terminalreporter.write_line
    write("time per category (summed over workers): " + ", ".join(
        f"{name} {seconds:.0f} s ({int(count)} tests)"
        for name, (seconds, count) in spent.items() if count))
    over = over_budget(tests)
    for line in over:
        write(f"  over budget: {line}")
    modules = per_module(tests)
    write("time per module (summed over workers, the ten largest): " + ", ".join(
        f"{module} {seconds:.0f} s" for module, seconds in list(modules.items())[:10]))
    record = record_path(config)
    record.parent.mkdir(exist_ok=True)
    record.write_text(json.dumps({"budgets": BUDGETS, "on_cpu": ON_CPU, "over": over,
                                  "modules": modules, "tests": tests}, indent=1) + "\n")
    write(f"every test's and module's time: {record}")
