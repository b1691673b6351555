"""A migration's settings when a caller names one that the ledger already holds.

A form (an Airflow run's Params) names a migration by its name, clusters and tables, and may
carry settings (``replay.roll_period``...). The migration keeps the settings its ledger
recorded; a value the caller *gave* (``given``: by dotted key, only what the user filled
in) that differs from the recorded one changes it only when the caller says so (``change``),
and the change is returned for the caller to show. A migration the ledger does not hold yet
takes the caller's spec as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from hbase_migrate.audit.definitions import definition_of, setting_changes
from hbase_migrate.audit.errors import LedgerMissingError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.lifecycle.migrations import definition_in, spec_of

# The connections a caller names say where the clusters are: never a settings change here.
_CLUSTERS = ("source.", "target.")


class Settled(NamedTuple):
    """The spec a step runs with, and the settings it changes (``replay.margin 300000 ->
    360000``; empty when none)."""

    spec: MigrationSpec
    changes: list[str]


def recorded_definition(spec: MigrationSpec) -> dict[str, Any] | None:
    """The newest definition of ``spec``'s migration in its ledger; None when the ledger or
    the migration does not exist yet."""
    try:
        ledger = Ledger.open(spec.ledger_url, upgrade_schema=False)
    except LedgerMissingError:
        return None
    with ledger:
        return definition_in(ledger, spec.name)


def pending_changes(spec: MigrationSpec) -> list[str]:
    """The settings a step of ``spec`` would change in its ledger's record (the
    ``setting_changes`` lines, the clusters' left out); empty for a new migration."""
    recorded = recorded_definition(spec)
    if recorded is None:
        return []
    return _settings_only(setting_changes(recorded, definition_of(spec)))


def _settings_only(changes: list[str]) -> list[str]:
    return [c for c in changes if not c.startswith(_CLUSTERS)]


def settled_spec(spec: MigrationSpec, given: Mapping[str, Any], *, change: bool,
                 how_to_change: str) -> Settled:
    """``spec`` (the migration as the caller names it: its clusters and tables) with the
    recorded settings of its migration and the ``given`` ones over them. A given value that
    differs from the recorded one raises a ConfigError naming it unless ``change``
    (``how_to_change`` says how the caller says so)."""
    recorded = recorded_definition(spec)
    if recorded is None:
        return Settled(spec, [])
    mine = definition_of(spec)
    tree = {**recorded, **{k: mine[k] for k in ("source", "target", "tables")}}
    for dotted, value in given.items():
        section, _, key = dotted.partition(".")
        tree[section] = {**tree.get(section, {}), key: value}
    settled = spec_of(spec.name, tree, spec.ledger_url)
    changes = _settings_only(setting_changes(recorded, definition_of(settled)))
    if changes and not change:
        raise ConfigError(
            f"migration {spec.name!r} keeps its recorded settings, and this run gives other "
            f"values: {'; '.join(changes)}; leave those fields empty to use the migration's, "
            f"or {how_to_change}")
    return Settled(settled, changes)
