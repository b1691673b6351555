"""A migration config tree (:meth:`MigrationSpec.to_dict`'s shape) written as TOML text
that :func:`hbase_migrate.config.load_config` reads back to the same spec.

Only what such a tree holds: tables of scalars (strings, integers, floats, booleans), lists
of scalars, sub-tables (``[cdc.producer]``) and the ``[[tables]]`` array.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def to_toml(tree: Mapping[str, Any]) -> str:
    """``tree`` as TOML: one section per top-level table, ``[[name]]`` per element of a list
    of tables; None values are left out (TOML has no null)."""
    lines: list[str] = []
    for name, value in tree.items():
        if isinstance(value, Mapping):
            _table(lines, name, value)
        elif isinstance(value, list) and all(isinstance(v, Mapping) for v in value):
            for element in value:
                lines += ["", f"[[{_key(name)}]]"]
                lines += _scalars(element)
        else:
            raise TypeError(f"to_toml: top-level key {name!r} must hold a table, got {value!r}")
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(lines: list[str], path: str, table: Mapping[str, Any]) -> None:
    lines += ["", f"[{path}]"]
    lines += _scalars(table)
    for key, value in table.items():
        if isinstance(value, Mapping) and value:
            _table(lines, f"{path}.{_key(key)}", value)


def _scalars(table: Mapping[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in table.items()
            if v is not None and not isinstance(v, Mapping)]


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"to_toml: no TOML form for {value!r}")
