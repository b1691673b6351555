"""Why librdkafka could not reach a broker, from its log: a metadata call that fails only
says "broker transport failure"; the reason (a TLS certificate not verified, a SASL
authentication refused) is in the log lines the client wrote meanwhile.

:func:`client_logger` is the ``logger`` a client is given: it passes every line on to the
sink's logger and keeps the last connection failure (``FAIL``), which
:meth:`ConnectionFailures.reason` returns in short.
"""

from __future__ import annotations

import logging
import re

# "FAIL [rdkafka#producer-1] [thrd:...]: sasl_ssl://host:port/bootstrap: WHY (after 12ms in
# state SSL_HANDSHAKE)"
_FAIL = re.compile(r"^FAIL \[[^]]*\] \[[^]]*\]: (?:\S+://\S+: )?(?P<why>.*?)"
                   r"(?: \(after \d+ms in state \w+\))?(?: \(\d+ identical error\(s\)[^)]*\))?$")


class ConnectionFailures(logging.Handler):
    """The last connection failure a client logged."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        found = _FAIL.match(record.getMessage())
        if found:
            self.last = found["why"]

    def reason(self) -> str:
        """``"; last connection failure: WHY"``, or empty when none was logged."""
        return f"; last connection failure: {self.last}" if self.last else ""


def client_logger(parent: logging.Logger) -> tuple[logging.Logger, ConnectionFailures]:
    """A logger for one client, below ``parent``, and what keeps its last failure."""
    logger = logging.Logger(f"{parent.name}.client")
    logger.parent = parent
    failures = ConnectionFailures()
    logger.addHandler(failures)
    return logger, failures
