"""``--conf KEY=VALUE``: Spark settings for one command, over the migration's ``[spark]
conf`` (what spark-submit's ``--conf`` is; the commands that run Spark work share it), and
the help of their ``--master`` (:func:`master_help`, from the code's defaults)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

import click

from hbase_migrate.config_parts import AUTO, DEFAULT_AUTO_CELLS, DEFAULT_SPARK_MASTER, IN_PROCESS

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


def master_help(work: str) -> str:
    """The help of a command's ``--master``, whose Spark master runs ``work``."""
    return (f"Spark master for {work}: a URL, \"{IN_PROCESS}\" (no Spark) or \"{AUTO}\" (on "
            "[spark] large_master when that is a cluster and the step holds [spark] "
            f"auto_cells cells or more, {DEFAULT_AUTO_CELLS:,} unless set; else in-process); "
            f"default: the config's [spark] master, else \"{DEFAULT_SPARK_MASTER}\".")
