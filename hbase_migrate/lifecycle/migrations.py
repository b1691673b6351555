"""The migrations the ledgers hold, as specs built from their recorded definitions.

What a caller that names a migration only by name uses (``hbase-migrate config show``, the
Airflow schedules acting on every migration in progress): :func:`recorded_spec` for one
(:func:`recorded_config` its TOML), :func:`in_progress` for all whose copy has started and
that are not cut over. The definition is the one ``Ledger.ensure_spec`` recorded
(:mod:`hbase_migrate.audit.definitions`); the spec's ledger is the one it was read from.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from hbase_migrate.audit.engine import redact
from hbase_migrate.audit.errors import LedgerError, LedgerMissingError
from hbase_migrate.audit.ledger import Ledger
from hbase_migrate.audit.records import MigrationState
from hbase_migrate.config import LEDGER_ENV, MigrationSpec, default_ledger_url, state_dir
from hbase_migrate.config_toml import to_toml
from hbase_migrate.errors import ConfigError

log = logging.getLogger(__name__)

DEFINITIONS_SCHEMA = 8  # the ledger schema version that keeps definitions (sql/008_...)


def spec_of(name: str, definition: dict[str, Any], ledger_url: str) -> MigrationSpec:
    """The spec of a recorded ``definition``, its ledger ``ledger_url``."""
    return MigrationSpec.from_dict({**definition, "migration": {"name": name,
                                                                 "ledger": ledger_url}})


def recorded_spec(name: str, ledger_url: str | None = None) -> MigrationSpec:
    """The spec of migration ``name`` from the definition its ledger (default:
    :func:`~hbase_migrate.config.default_ledger_url`) recorded; a ConfigError naming the
    ledger when it holds no such migration, or one recorded before definitions were kept."""
    url = ledger_url or default_ledger_url(name)
    try:
        ledger = Ledger.open(url, upgrade_schema=False)
    except LedgerMissingError as exc:
        raise ConfigError(f"migration {name!r}: {exc}; give the ledger it was started with "
                          "(--ledger URL, or $HBASE_MIGRATE_LEDGER)") from None
    with ledger:
        definition = definition_in(ledger, name)
        if definition is None:
            raise ConfigError(_unrecorded(ledger, name))
        return spec_of(name, definition, url)


def recorded_config(name: str, ledger_url: str | None = None) -> str:
    """The TOML of :func:`recorded_spec`: what every command's ``--config`` takes to act on
    that migration. A ledger URL holding a password is not written: the file reads it from
    ``$HBASE_MIGRATE_LEDGER`` (``ledger_env``)."""
    spec = recorded_spec(name, ledger_url)
    tree = spec.to_dict()
    shown = redact(spec.ledger_url)
    lines = [f"# migration {name!r} as ledger {shown} recorded it; every hbase-migrate "
             "command's --config takes this file"]
    if shown != spec.ledger_url:
        tree["migration"] = {"name": name, "ledger_env": LEDGER_ENV}
        lines.append(f"# the ledger's URL holds a password: set ${LEDGER_ENV} to it")
    return "\n".join(lines) + "\n" + to_toml(tree)


def in_progress(ledger_urls: Sequence[str] = ()) -> list[MigrationSpec]:
    """Every migration whose copy has started (a watermark is recorded) and that is not
    ``cut_over``, in the default ledgers (:func:`default_ledgers`) and ``ledger_urls``,
    sorted by name. A migration recorded before definitions were kept is left out with a
    warning; so is a default ledger that cannot be read. A ledger of ``ledger_urls`` that
    cannot be read raises; one that does not exist yet holds none."""
    found: list[MigrationSpec] = []
    given = set(ledger_urls)
    for url in dict.fromkeys([*default_ledgers(), *ledger_urls]):
        try:
            ledger = Ledger.open(url, upgrade_schema=False)
        except LedgerMissingError:
            continue
        except LedgerError as exc:
            if url in given:
                raise
            log.warning("skipping ledger %s while listing migrations in progress: %s", url, exc)
            continue
        with ledger:
            for record in ledger.migrations():
                if record.watermark is None or record.state == MigrationState.CUT_OVER:
                    continue
                definition = definition_in(ledger, record.name)
                if definition is None:
                    log.warning("%s; left out of the migrations in progress",
                                _unrecorded(ledger, record.name))
                    continue
                found.append(spec_of(record.name, definition, url))
    return sorted(found, key=lambda spec: (spec.name, spec.ledger_url))


def holding(name: str, ledger_urls: Sequence[str]) -> str | None:
    """The first of ``ledger_urls`` that exists and holds migration ``name``."""
    for url in dict.fromkeys(ledger_urls):
        try:
            ledger = Ledger.open(url, upgrade_schema=False)
        except LedgerError:
            continue
        with ledger:
            if ledger.migration(name) is not None:
                return url
    return None


def default_ledgers() -> list[str]:
    """``$HBASE_MIGRATE_LEDGER`` when set, else every ``<state dir>/*/ledger.db``."""
    shared = os.environ.get(LEDGER_ENV)
    if shared:
        return [shared]
    return [f"sqlite:///{path}" for path in sorted(state_dir().glob("*/ledger.db"))]


def definition_in(ledger: Ledger, name: str) -> dict[str, Any] | None:
    if ledger.schema_version < DEFINITIONS_SCHEMA:
        return None
    return ledger.definition(name)


def _unrecorded(ledger: Ledger, name: str) -> str:
    """Why a ledger gives no definition of ``name``, and what to do."""
    if ledger.migration(name) is None:
        held = ", ".join(m.name for m in ledger.migrations()) or "none"
        return (f"ledger {ledger.url} holds no migration {name!r} (it holds: {held}); give "
                "the ledger it was started with (--ledger URL, or $HBASE_MIGRATE_LEDGER)")
    return (f"ledger {ledger.url}: migration {name!r} was recorded before the ledger kept "
            "definitions; run any step of it once with its config (--config FILE) to record "
            "its definition")
