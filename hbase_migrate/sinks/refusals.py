"""Why a Kafka client could not reach a broker, from its log: a metadata call that fails only
says "broker transport failure" (librdkafka) or "unable to bootstrap" (kafka-python); the
reason (a TLS certificate not verified, a SASL or GSSAPI authentication refused) is in the
log lines the client wrote meanwhile.

:class:`ConnectionFailures` is a log handler that keeps the last connection failure of a
client; :func:`client_logger` makes librdkafka's ``logger`` with one, and :func:`refused`
tells a refusal of this client (credentials, certificates) from a broker that is down.
"""

from __future__ import annotations

import logging
import re

# librdkafka: "FAIL [rdkafka#producer-1] [thrd:...]: sasl_ssl://host:port/bootstrap: WHY
# (after 12ms in state SSL_HANDSHAKE)"
LIBRDKAFKA = re.compile(r"^FAIL \[[^]]*\] \[[^]]*\]: (?:\S+://\S+: )?(?P<why>.*?)"
                        r"(?: \(after \d+ms in state \w+\))?"
                        r"(?: \(\d+ identical error\(s\)[^)]*\))?$")
# kafka-python: "Bootstrap connection to bootstrap-0 failed: WHY (backoff 5.61 secs)"
KAFKA_PYTHON = re.compile(r"^Bootstrap connection to \S+ failed: (?P<why>.*?)"
                          r"(?: \(backoff [\d.]+ secs\))?$")
_REFUSAL = re.compile(r"SSL handshake failed|SASL authentication|Authentication failed|"
                      r"GSS failure|certificate verify failed")


def refused(why: str | None) -> bool:
    """Whether a connection failure is the broker refusing this client (or this client
    refusing the broker's certificate), not the broker being away."""
    return bool(why and _REFUSAL.search(why))


class ConnectionFailures(logging.Handler):
    """The last connection failure a client logged (lines matching ``pattern``)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__(logging.WARNING)
        self.pattern = pattern
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        found = self.pattern.match(record.getMessage())
        if found:
            self.last = " ".join(found["why"].split())


def client_logger(parent: logging.Logger) -> tuple[logging.Logger, ConnectionFailures]:
    """A logger for one librdkafka client, below ``parent``, and what keeps its last
    failure."""
    logger = logging.Logger(f"{parent.name}.client")
    logger.parent = parent
    failures = ConnectionFailures(LIBRDKAFKA)
    logger.addHandler(failures)
    return logger, failures
