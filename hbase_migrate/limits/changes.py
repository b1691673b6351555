"""Limits changed while steps run: ``KEY=VALUE`` assignments checked as the config's
``[limits]`` section is, kept in the ledger (one row per change), and the limits in force
(the config's, overlaid with the newest change of each key).
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.config import LIMIT_KEYS, MigrationSpec
from hbase_migrate.errors import ConfigError
from hbase_migrate.limits.watch import overlay

WHERE = Path("limits set")  # how errors name the values they concern


def parse_assignment(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as a TOML value (``1000``, ``true``), else as text
    (``50MiB``, ``2s``)."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not value:
        raise ConfigError(f"limits set: {text!r}: expected KEY=VALUE, e.g. "
                          "copy_cells_per_second=5000")
    if key not in LIMIT_KEYS:
        raise ConfigError(f"limits set: unknown key {key!r}; expected one of "
                          f"{', '.join(LIMIT_KEYS)}")
    try:
        parsed: Any = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value
    return key, parsed


def set_limits(spec: MigrationSpec, assignments: Sequence[str]) -> dict[str, Any]:
    """Check and record ``assignments`` in the ledger; returns the values recorded (as the
    config reader normalised them: sizes and durations as integers)."""
    from hbase_migrate.config_reader import Reader

    wanted = dict(parse_assignment(a) for a in assignments)
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        current = overlay(spec.limits, ledger.limit_overrides(record.id)).to_dict()
        checked = Reader(WHERE).limits({**current, **wanted})
        values = {key: getattr(checked, key) for key in wanted}
        for key, value in values.items():
            ledger.set_limit(record.id, key, value)
    return values


def show_limits(spec: MigrationSpec) -> dict[str, Any]:
    """Per key of ``[limits]``: the config's value, the ledger's newest (and when it was
    set) and the value in force."""
    with Ledger.open(spec.ledger_url) as ledger:
        record = ledger.ensure_spec(spec)
        changes = {c.name: c for c in ledger.limit_changes(record.id)}
    configured = spec.limits.to_dict()
    in_force = overlay(spec.limits, {k: c.value for k, c in changes.items()}).to_dict()
    return {"migration": spec.name, "limits": {
        key: {"config": configured[key], "ledger": changes[key].value if key in changes
              else None, "set_at": changes[key].set_at if key in changes else None,
              "in_force": in_force[key]} for key in LIMIT_KEYS}}
