"""The DAG-integrity harness: import one DAG file the way Airflow's parser does, and record
every metadata-database query and every Connection or Variable look-up made while doing it.

A DAG file is a declaration. It must import cleanly, define at least one DAG, and touch
neither the metadata database nor any Connection or Variable at parse time (those belong in
task code, where they run once per task instead of once per parse, every few seconds).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine

DAGS = Path(__file__).resolve().parents[2] / "dags"
# the DAG files Airflow parses (a leading underscore marks a helper module)
DAG_FILES = sorted(p for p in DAGS.glob("*.py") if not p.name.startswith("_"))


@dataclass
class ParseReport:
    path: Path
    dag_ids: list[str] = field(default_factory=list)
    import_error: str | None = None
    queries: list[str] = field(default_factory=list)
    lookups: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        found = []
        if self.import_error:
            found.append(f"import failed: {self.import_error}")
        elif not self.dag_ids:
            found.append("defines no DAG")
        found += [f"metadata-database query at parse time: {q}" for q in self.queries]
        found += [f"{what} at parse time" for what in self.lookups]
        return found


def _lookup_recorders(report: ParseReport) -> list[tuple[Any, str, Any]]:
    """(owner, attribute, recorder) for every way a DAG file could reach a Connection or
    Variable. The recorder notes the call and then fails it, as a parse-time look-up
    would fail in a DAG processor without credentials."""
    from airflow.sdk import Connection, Variable

    def recorder(what: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            report.lookups.append(f"{what}({', '.join(map(repr, args))})")
            raise RuntimeError(f"{what} called while parsing a DAG file")

        return staticmethod(record)

    targets: list[tuple[Any, str, Any]] = [
        (Connection, "get", recorder("Connection.get")),
        (Variable, "get", recorder("Variable.get")),
    ]
    with contextlib.suppress(ImportError):
        from airflow.sdk.bases.hook import BaseHook

        targets.append((BaseHook, "get_connection", recorder("BaseHook.get_connection")))
    return targets


@contextlib.contextmanager
def _recording(report: ParseReport) -> Iterator[None]:
    def on_query(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        report.queries.append(" ".join(statement.split())[:120])

    saved = []
    for owner, name, recorder in _lookup_recorders(report):
        saved.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, recorder)
    event.listen(Engine, "before_cursor_execute", on_query)
    try:
        yield
    finally:
        event.remove(Engine, "before_cursor_execute", on_query)
        for owner, name, original in saved:
            setattr(owner, name, original)


DAG_PACKAGE = "hbase_migrate_airflow.dags"  # where the project's DAG files import their DAG


def _forget_declarations() -> None:
    """Let the package's DAG modules run again on the next import: a DAG file of dags/
    imports its DAG from one, which an earlier parse in this process (another test's
    DagBag) would otherwise have left in ``sys.modules``, its parse-time work unseen, as
    Airflow's parser, a fresh process per file, never has it."""
    for name in [n for n in sys.modules if n.startswith(f"{DAG_PACKAGE}.")]:
        del sys.modules[name]


def parse_dag_file(path: Path) -> ParseReport:
    """Parse ``path`` with Airflow's own DagBag and report what it defined and touched."""
    from airflow.dag_processing.dagbag import DagBag

    _forget_declarations()
    report = ParseReport(path)
    with _recording(report):
        bag = DagBag(dag_folder=path, safe_mode=False, load_op_links=False)
    if bag.import_errors:
        report.import_error = "; ".join(
            err.strip().splitlines()[-1] for err in bag.import_errors.values()
        )
    report.dag_ids = sorted(bag.dags)
    return report
