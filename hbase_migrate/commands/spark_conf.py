"""``--conf KEY=VALUE``: Spark settings for one command, over the migration's ``[spark]
conf`` (what spark-submit's ``--conf`` is; the commands that run Spark work share it)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from hbase_migrate.config import MigrationSpec

F = TypeVar("F", bound=Callable[..., object])


def _pairs(ctx: click.Context, param: click.Parameter,
           values: Sequence[str]) -> tuple[tuple[str, str], ...]:
    pairs = []
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.startswith("spark.") or not setting:
            raise click.BadParameter(f"expected spark.KEY=VALUE, got {value!r}", ctx, param)
        pairs.append((key.strip(), setting))
    return tuple(pairs)


def conf_option(func: F) -> F:
    return click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
                        callback=_pairs,
                        help="A Spark setting for this run's session (repeatable), over "
                             "the config's [spark] conf: spark.executor.memory=2g.")(func)


def with_conf(spec: MigrationSpec, conf: Sequence[tuple[str, str]]) -> MigrationSpec:
    """``spec`` with the command line's Spark settings over its ``[spark] conf``."""
    return replace(spec, engine=spec.engine.with_conf(conf)) if conf else spec
