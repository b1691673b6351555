"""The real stacks' Maven modules: their class paths resolved once and cached, JVMs launched
on them, with :mod:`hbase_migrate.jvm.maven` (the generic part the core's own Java helper
uses too); errors become :class:`RealStackError`.

``module_classpath("hbase", {"hbase.version": "2.5.11"})`` resolves the module beside this
file (or a folder given as a path) and caches it under ``$HBASE_MIGRATE_CACHE/realstack``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hbase_migrate.jvm import maven
from stackprocs.process import EmbeddedStackError

MODULES = Path(__file__).resolve().parent
ADD_OPENS = maven.ADD_OPENS


class RealStackError(EmbeddedStackError):
    """A real stack could not be built (Java, Maven, an artifact) or started."""


def cache_root() -> Path:
    return maven.cache_root("realstack")


def module_path(module: str | Path) -> Path:
    """``"hbase"`` -> the folder of that module beside this file; a path is taken as is."""
    path = MODULES / module if isinstance(module, str) and "/" not in module else Path(module)
    try:
        return maven.module_path(path)
    except maven.JvmError as exc:
        raise RealStackError(str(exc)) from None


def module_key(module: str | Path, properties: Mapping[str, str]) -> str:
    """:func:`hbase_migrate.jvm.maven.module_key`: the cache key of a module's class path
    with ``properties`` (its pom, its sources and the properties)."""
    return maven.module_key(module_path(module), properties)


def module_classpath(module: str | Path, properties: Mapping[str, str] | None = None,
                     *, timeout: float = 1800.0) -> list[str]:
    """The run-time class path of a Maven module (its compiled sources first), built once;
    :func:`hbase_migrate.jvm.maven.module_classpath` under ``realstack``."""
    try:
        return maven.module_classpath(module_path(module), properties, cache="realstack",
                                      timeout=timeout)
    except maven.JvmError as exc:
        raise RealStackError(str(exc)) from None


def java_command(classpath: Sequence[str], main: str, args: Sequence[str] = (), *,
                 heap: str = "1g", system_properties: Mapping[str, str] | None = None,
                 jvm_options: Sequence[str] = ()) -> list[str]:
    """:func:`hbase_migrate.jvm.maven.java_command` (errors as :class:`RealStackError`)."""
    try:
        return maven.java_command(classpath, main, args, heap=heap,
                                  system_properties=system_properties, jvm_options=jvm_options)
    except maven.JvmError as exc:
        raise RealStackError(str(exc)) from None
