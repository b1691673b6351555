"""Which addresses this process connects to: every ``socket.connect`` is an audit event
(PEP 578), seen here whatever library made the socket (kazoo, the RPC client, urllib...).
``with connections() as seen:`` collects ``(host, port)`` pairs while the block runs."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_watchers: list[list[tuple[str, int]]] = []
_lock = threading.Lock()
_installed: list[bool] = []  # one element once the hook is in


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event != "socket.connect" or not _watchers:
        return
    address = args[1]
    if isinstance(address, tuple) and len(address) >= 2:
        with _lock:
            for seen in _watchers:
                seen.append((str(address[0]), int(address[1])))


@contextmanager
def connections() -> Iterator[list[tuple[str, int]]]:
    """The ``(host, port)`` of every connection this process opens during the block."""
    with _lock:
        if not _installed:  # an audit hook cannot be removed: one for the process
            sys.addaudithook(_hook)
            _installed.append(True)
        seen: list[tuple[str, int]] = []
        _watchers.append(seen)
    try:
        yield seen
    finally:
        with _lock:
            _watchers.remove(seen)


def ports(seen: list[tuple[str, int]]) -> set[int]:
    return {port for _, port in seen}
