"""Plumbing shared by the two gateway handlers: error translation and open scanners.

:func:`bind_handler` wraps a handler so that each call answers with an exception the IDL
declares for that method (HBase's IOError/IllegalArgument, TIOError/TIllegalArgument), an
unexpected failure answers ``TApplicationException(INTERNAL_ERROR)`` instead of dropping the
connection, and a method this cluster does not implement answers ``UNKNOWN_METHOD``.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections.abc import Callable, Iterator
from types import ModuleType, SimpleNamespace
from typing import Any

from thriftpy2.thrift import TApplicationException

from minihbase.model import MiniHBaseError

log = logging.getLogger(__name__)

# (error, exception classes the method declares) -> exception instance to send
Translate = Callable[[MiniHBaseError, tuple[type, ...]], Exception]


def _declared(service: Any, method: str) -> tuple[type, ...]:
    spec = getattr(service, f"{method}_result").thrift_spec
    return tuple(v[2] for k, v in sorted(spec.items()) if v[1] != "success")


def _wrap(name: str, func: Callable[..., Any], declared: tuple[type, ...],
          translate: Translate) -> Callable[..., Any]:
    @functools.wraps(func)
    def call(*args: Any) -> Any:
        try:
            return func(*args)
        except MiniHBaseError as exc:
            log.info("%s refused: %s", name, exc)
            raise translate(exc, declared) from exc
        except TApplicationException:
            raise
        except Exception as exc:
            log.exception("%s failed", name)
            raise TApplicationException(TApplicationException.INTERNAL_ERROR,
                                        f"Internal error processing {name}: {exc}") from exc
    return call


def in_transition(call: str) -> TApplicationException:
    """What HBase 2.6's gateways answer a region listing that meets a region with no server
    yet (libthrift's answer to the handler's NullPointerException): staged by tests."""
    return TApplicationException(TApplicationException.INTERNAL_ERROR,
                                 f"Internal error processing {call}")


def _unsupported(name: str) -> Callable[..., Any]:
    def call(*_: Any) -> Any:
        raise TApplicationException(TApplicationException.UNKNOWN_METHOD,
                                    f"{name} is not supported by the embedded cluster")
    return call


def bind_handler(service: ModuleType | Any, impl: object, translate: Translate) -> object:
    """An object with one wrapped callable per method of ``service``."""
    bound = SimpleNamespace()
    for name in service.thrift_services:
        func = getattr(impl, name, None)
        wrapped = (_unsupported(name) if func is None
                   else _wrap(name, func, _declared(service, name), translate))
        setattr(bound, name, wrapped)
    return bound


class ScannerRegistry:
    """Open scanners by integer id; each is an iterator of results in the IDL's shape."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._open: dict[int, Iterator[Any]] = {}
        self._lock = threading.Lock()

    def open(self, results: Iterator[Any]) -> int:
        with self._lock:
            scanner_id = next(self._ids)
            self._open[scanner_id] = results
            return scanner_id

    def next(self, scanner_id: int, count: int) -> list[Any] | None:
        """Up to ``count`` results, or None for an unknown id."""
        with self._lock:
            results = self._open.get(scanner_id)
        if results is None:
            return None
        return list(itertools.islice(results, max(count, 1)))

    def close(self, scanner_id: int) -> bool:
        with self._lock:
            return self._open.pop(scanner_id, None) is not None

    def close_all(self) -> None:
        with self._lock:
            self._open.clear()
