"""The CDC stream's sink: row mutations -> JSON messages -> Kafka, acknowledged before it
counts.

:class:`KafkaSink` is a replay target (:class:`~hbase_migrate.replay.apply.ReplayTarget`):
the replay run reads, filters and orders WAL entries exactly as for a target cluster and
calls :meth:`KafkaSink.apply` per batch; ``apply`` returns only once the broker has
acknowledged every message of the batch, and only then does the run record the offset
reached. The producer is idempotent with ``acks=all``: retries inside the client never
duplicate or reorder a partition's messages. A delivery that still fails is sent again
(from the first failed message of the batch, in order) after a backoff, ``retries`` times;
then:

* the broker unreachable or not answering: :class:`KafkaUnavailableError`, which stops the
  run (every acknowledged offset is kept; a rerun continues there);
* a topic that does not exist (and the broker does not create it): :class:`KafkaTopicError`,
  which stops the run too (no file is at fault);
* the broker refusing this client (a TLS certificate not verified, SASL authentication
  failed): :class:`KafkaRefusedError`, which stops the run and is not waited out;
* a message over the topic's size limit, or any other refusal: :class:`KafkaDeliveryError`,
  which fails the file (its offset stays before the message, exit code 1).

Each error names the broker, the topic and the WAL file and byte offset of the message.
With ``row_image``, each batch is first applied to the target cluster, in segments in which
no row repeats, and each edited row is read back right after its segment: the image of the
row after exactly this edit (and, for the Debezium envelope, right before it as well).
``[cdc] envelope`` picks the message format: :mod:`~hbase_migrate.sinks.messages`
(``native``) or :mod:`~hbase_migrate.sinks.debezium`.

The clients are confluent-kafka's (librdkafka: PLAINTEXT, SSL, SASL PLAIN, SCRAM and
OAUTHBEARER), or, when ``[cdc] producer`` asks for ``sasl.mechanisms = "GSSAPI"``, their
stand-ins of :mod:`~hbase_migrate.sinks.gssapi` (Kerberos), with the same calls and errors.
The admin client takes the producer's ``security.*``, ``sasl.*`` and ``ssl.*`` settings.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._config import ConfigResource

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.descriptors import FamilyDescriptor, TableDescriptor
from hbase_migrate.config import CdcSettings
from hbase_migrate.errors import Kind
from hbase_migrate.replay.apply import (
    AppliedCounts,
    ReplayTarget,
    TargetUnavailableError,
)
from hbase_migrate.replay.errors import ReplayWriteError
from hbase_migrate.replay.mutations import RowMutation, WalPosition
from hbase_migrate.sinks.debezium import debezium_value
from hbase_migrate.sinks.gssapi import (
    GssapiAdmin,
    GssapiProducer,
    client_config,
    login,
    wants_gssapi,
)
from hbase_migrate.sinks.messages import RowEdit, message_key, message_value
from hbase_migrate.sinks.refusals import ConnectionFailures, client_logger, refused
from hbase_migrate.sinks.render import cell_counts, edits_of, longest, messages
from hbase_migrate.wal.model import Cell

log = logging.getLogger(__name__)

BACKOFF_S = 1.0  # the first pause before a delivery is sent again; doubles each time
# A batch is produced in one loop (about a microsecond a message), then the next is prepared
# while the broker acknowledges it: librdkafka's default 5 ms linger would hold the batch's
# last records back for that long while the broker could already store them (measured:
# bench/cdc_throughput.py, 0.63x raw produce at 5 ms, 0.80x at 2 ms, 0.72x at 1 ms, where
# requests get small).
LINGER_MS = 2
ANY_PARTITION = -1  # librdkafka's RD_KAFKA_PARTITION_UA: the partitioner picks by key
RECORD_OVERHEAD = 100  # a record batch's header and one record's framing, at most
METADATA_TIMEOUT_S = 15.0
_UNAVAILABLE = frozenset({KafkaError._MSG_TIMED_OUT, KafkaError._TRANSPORT,
                          KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT,
                          KafkaError.NOT_ENOUGH_REPLICAS, KafkaError.LEADER_NOT_AVAILABLE,
                          KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.REQUEST_TIMED_OUT})
_TOO_LARGE = frozenset({KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE})
SECURITY_PREFIXES = ("security.", "sasl.", "ssl.")  # what the admin client takes too
_REFUSED = frozenset({KafkaError.SASL_AUTHENTICATION_FAILED, KafkaError._AUTHENTICATION,
                      KafkaError._SSL, KafkaError.ILLEGAL_SASL_STATE,
                      KafkaError.UNSUPPORTED_SASL_MECHANISM})


class KafkaUnavailableError(TargetUnavailableError):
    """The broker stayed unreachable through the retries: the run stops, offsets kept."""

    service = "Kafka broker"


class KafkaTopicError(TargetUnavailableError):
    """The topic a table's messages go to does not exist: the run stops, offsets kept. Not
    an outage: waiting does not create the topic."""

    kind = Kind.NEVER


class KafkaRefusedError(KafkaUnavailableError):
    """The broker refused this client (TLS or SASL): the run stops, offsets kept. Not an
    outage: waiting does not mend credentials."""

    kind = Kind.NEVER


class KafkaDeliveryError(ReplayWriteError):
    """The broker refused a message (too large, not allowed): the file fails at it."""


class _AnyFamily(TableDescriptor):
    """What a topic takes: any column family of the source table."""

    def family(self, name: bytes) -> FamilyDescriptor | None:
        return FamilyDescriptor(name)


@dataclass
class _Topic:
    name: str
    limit: int  # max.message.bytes


@dataclass
class KafkaSink:
    """Produces one message per row mutation to Kafka (see the module docstring).

    ``sources`` maps the replay's target table names back to the source's (the names in
    the messages and topics). ``image_target`` and ``image_reader`` (both or neither)
    apply each batch to the target cluster and read the rows back. ``cluster`` is the
    source cluster's id, which Debezium envelopes name. ``krb5_conf`` is the Kerberos
    realm's configuration for a GSSAPI broker (None: ``KRB5_CONFIG`` or the system's).
    ``make_producer`` makes the producer from its configuration (None: confluent-kafka's,
    or the GSSAPI one the settings ask for)."""

    settings: CdcSettings
    sources: Mapping[str, str] = field(default_factory=dict)
    image_target: ReplayTarget | None = None
    image_reader: Client | None = None
    cluster: str = ""
    krb5_conf: str | None = None
    sleep: Callable[[float], None] = time.sleep
    make_producer: Callable[[dict[str, Any]], Producer | GssapiProducer] | None = None
    _producer: Producer | GssapiProducer | None = field(default=None, init=False)
    _topics: dict[str, _Topic] = field(default_factory=dict, init=False)
    _batch_limit: int | None = field(default=None, init=False)
    _admin_client: AdminClient | GssapiAdmin | None = field(default=None, init=False)
    _failures: ConnectionFailures | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self._gssapi:  # bad settings or credentials stop the run here, before any file
            settings = {"bootstrap.servers": self.settings.bootstrap,
                        **dict(self.settings.producer)}
            client_config(settings)
            login(settings, self.krb5_conf)

    @property
    def name(self) -> str:
        return f"Kafka {self.settings.bootstrap}"

    @property
    def takes_cell_blocks(self) -> bool:
        """The messages are rendered from the WAL's bytes in place (the compiled reader's
        ``CellBlock``), unless the target cluster applies the mutations first."""
        return self.image_target is None

    @property
    def _metadata_timeout(self) -> float:
        return min(METADATA_TIMEOUT_S, self.settings.delivery_timeout / 1000)

    def _config(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "bootstrap.servers": self.settings.bootstrap, "enable.idempotence": True,
            "acks": "all", "message.timeout.ms": self.settings.delivery_timeout,
            "linger.ms": LINGER_MS, "delivery.report.only.error": True, "logger": log,
            **dict(self.settings.producer)}
        if self._batch_limit is not None:
            config["batch.size"] = self._batch_limit
            config["message.max.bytes"] = max(self._batch_limit + RECORD_OVERHEAD, 1000)
        return config

    @property
    def _gssapi(self) -> bool:
        return wants_gssapi(dict(self.settings.producer))

    def producer(self) -> Producer | GssapiProducer:
        if self._producer is None and self.make_producer is not None:
            self._producer = self.make_producer(self._config())
        if self._producer is None:
            self._producer = (GssapiProducer(self._config(), self.krb5_conf,
                                             self._metadata_timeout)
                              if self._gssapi else Producer(self._config()))
        return self._producer

    def _drop_producer(self, flush: bool = True) -> None:
        """Done with the producer (every message it took acknowledged, with ``flush``)."""
        if self._producer is not None:
            if flush:
                self._producer.flush(self.settings.delivery_timeout / 1000)
            if isinstance(self._producer, GssapiProducer):  # its connections and thread
                self._producer.close(0)
            self._producer = None

    def close(self) -> None:
        self._drop_producer()
        if isinstance(self._admin_client, GssapiAdmin):
            self._admin_client.close()
        self._admin_client = None
        for part in (self.image_target, self.image_reader):
            if part is not None:
                part.close()

    def describe(self, table: str) -> TableDescriptor:
        if self.image_target is not None:
            return self.image_target.describe(table)
        return _AnyFamily(table, ())

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        """Produce one message per (entry, row) of ``mutations``; return once the broker
        acknowledged all of them (the target applied them first, with ``row_image``)."""
        return self.send(table, mutations)()

    def send(self, table: str, mutations: Sequence[RowMutation]
             ) -> Callable[[], AppliedCounts]:
        """Produce the messages of ``mutations`` now, from the calling thread; the call
        returned waits until the broker acknowledged all of them (sending failures again),
        as ``apply`` does. The replay calls it before sending anything else, so a batch is
        complete, retries included, before the next one is produced."""
        return self.prepare(table, mutations)()

    def prepare(self, table: str, mutations: Sequence[RowMutation]
                ) -> Callable[[], Callable[[], AppliedCounts]]:
        """Render the messages of ``mutations`` (no row images: those are read once the
        batch before is acknowledged); the call returned produces them, as :meth:`send`.
        The replay renders a batch while the broker acknowledges the one before."""
        if not mutations:
            return lambda: AppliedCounts
        source = self.sources.get(table, table)
        topic = self._topic(self.settings.topic_of(source), mutations[0].position)
        applied = AppliedCounts(cell_counts(mutations), 0)
        if self.image_target is not None:
            edits = edits_of(source, mutations)
            positions = [edit.position for edit in edits]
            return lambda: self._produce_batch(topic, positions, *self._images(
                table, edits, mutations, applied), applied)
        keys, values, positions = messages(source, mutations, self.settings.envelope,
                                           self.cluster)  # compiled
        # Only the positions wait for the acknowledgements: the mutations (and their cells)
        # are freed with the batch, while still in the processor's cache.
        return lambda: self._produce_batch(topic, positions, keys, values, applied)

    def _images(self, table: str, edits: Sequence[RowEdit], mutations: Sequence[RowMutation],
                applied: AppliedCounts) -> tuple[list[bytes], list[bytes]]:
        """The messages with row images: the target applies the batch, then is read."""
        images = self._apply_with_images(table, edits, mutations, applied)
        keys = [message_key(e.table, e.row) for e in edits]
        values = [self._value(e, image) for e, image in zip(edits, images, strict=True)]
        return keys, values

    def _produce_batch(self, topic: _Topic, positions: Sequence[WalPosition],
                       keys: list[bytes], values: list[bytes], applied: AppliedCounts
                       ) -> Callable[[], AppliedCounts]:
        if longest(keys, values) + RECORD_OVERHEAD > topic.limit:
            for position, key, value in zip(positions, keys, values, strict=True):  # which
                if len(key) + len(value) + RECORD_OVERHEAD > topic.limit:
                    raise self._too_large(topic, position, key, value)
        failed = self._produce(topic.name, keys, values, 0)

        def acknowledged() -> AppliedCounts:
            applied.calls += self._deliver(topic, keys, values, positions, failed)
            return applied
        return acknowledged

    def _value(self, edit: RowEdit, images: _Images) -> bytes:
        before, after = images
        if self.settings.envelope == "debezium":
            return debezium_value(edit, self.cluster, images=self.image_target is not None,
                                  before=before, after=after)
        return message_value(edit, after)

    @property
    def _before_images(self) -> bool:
        return self.settings.envelope == "debezium"

    # -- topics -----------------------------------------------------------------------------

    def probe(self) -> None:
        """One metadata round trip to the brokers: :class:`KafkaUnavailableError` when none
        answers."""
        try:
            self._admin().list_topics(timeout=self._metadata_timeout)
        except KafkaException as exc:
            raise self._unreachable(exc, "") from None

    def check_topic(self, name: str, position: WalPosition | None = None) -> None:
        """Check a topic now (``apply`` does on its first message to it): it exists, and
        what its size limit is. ``position`` is the WAL entry named in errors."""
        self._topic(name, position)

    def _admin(self) -> AdminClient | GssapiAdmin:
        if self._admin_client is None:
            config: dict[str, Any] = {
                "bootstrap.servers": self.settings.bootstrap,
                **{k: v for k, v in self.settings.producer if k.startswith(SECURITY_PREFIXES)}}
            if self._gssapi:
                self._admin_client = GssapiAdmin(config, self.krb5_conf, self._metadata_timeout)
            else:
                logger, self._failures = client_logger(log)
                self._admin_client = AdminClient({**config, "logger": logger})  # type: ignore[dict-item]
        return self._admin_client

    def _unreachable(self, exc: KafkaException, then: str) -> KafkaUnavailableError:
        """The broker did not answer (``then``: what that stops), or refused this client:
        a TLS certificate not verified, an authentication failed (the admin client's log
        says which)."""
        if isinstance(self._admin_client, AdminClient):
            self._admin_client.poll(0.1)  # serves the log lines queued meanwhile
        error, why = exc.args[0], self._failures.last if self._failures is not None else None
        broker = f"Kafka broker {self.settings.bootstrap}"
        if refused(why) or (isinstance(error, KafkaError) and error.code() in _REFUSED):
            principal = dict(self.settings.producer).get("sasl.kerberos.principal")
            who = f" ({principal})" if principal and self._gssapi else ""
            return KafkaRefusedError(
                f"{broker} refused this client{who}: {why or error.str()}; check the TLS and "
                "SASL settings of [cdc] producer (ssl.ca.location, sasl.username, "
                "sasl.password, sasl.kerberos.*)", endpoint=self.settings.bootstrap)
        reason = f"{error}; last connection failure: {why}" if why else str(error)
        return KafkaUnavailableError(f"{broker} unreachable ({reason}){then}",
                                     endpoint=self.settings.bootstrap)

    def _topic(self, name: str, position: WalPosition | None) -> _Topic:
        """The topic, checked once: it exists (a producer's metadata request creates it
        where the broker auto-creates topics), and its message size limit."""
        known = self._topics.get(name)
        if known is not None:
            return known
        where = f"topic {name!r} on broker {self.settings.bootstrap}"
        message = f"the message from {position}" if position else "its first message"
        try:
            found = self._admin().list_topics(name, timeout=self._metadata_timeout).topics.get(
                name)
            if found is None or found.error is not None:
                metadata = self.producer().list_topics(name, timeout=self._metadata_timeout)
                found = metadata.topics.get(name)
        except KafkaException as exc:
            raise self._unreachable(exc, f" before {where} took {message}; stopping the "
                                    "run: every offset the broker acknowledged is kept, rerun "
                                    "once it answers") from None
        if found is None or found.error is not None:
            error = found.error.str() if found is not None and found.error else "not listed"
            raise KafkaTopicError(
                f"{where} does not exist ({error}) and the broker did not create it; create "
                f"it (or turn auto-creation on) and rerun: {message} and everything after "
                "it are not sent")
        topic = _Topic(name, self._limit(name))
        if self._batch_limit is None or topic.limit - RECORD_OVERHEAD < self._batch_limit:
            self._reopen(topic.limit - RECORD_OVERHEAD)
        self._topics[name] = topic
        return topic

    def _limit(self, topic: str) -> int:
        """The topic's ``max.message.bytes`` (the broker's default unless overridden)."""
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        try:
            configs = self._admin().describe_configs([resource])[resource].result(
                self._metadata_timeout)
        except KafkaException as exc:
            log.warning("cannot read max.message.bytes of topic %s: %s", topic, exc)
            return 1_048_588
        return int(configs["max.message.bytes"].value)

    def _reopen(self, batch_limit: int) -> None:
        """Batches no larger than the smallest topic limit (every earlier message is
        acknowledged by now: ``apply`` waits for them)."""
        self._drop_producer()
        self._batch_limit = max(batch_limit, 1)

    def _too_large(self, topic: _Topic, position: WalPosition, key: bytes,
                   value: bytes) -> KafkaDeliveryError:
        size = len(key) + len(value) + RECORD_OVERHEAD
        return KafkaDeliveryError(
            f"topic {topic.name!r} on broker {self.settings.bootstrap}: the message of "
            f"{position} is {size} bytes with its framing, over the topic's "
            f"max.message.bytes {topic.limit}; raise the limit (topic max.message.bytes, "
            "broker message.max.bytes) and rerun")

    # -- delivery ---------------------------------------------------------------------------

    def _deliver(self, topic: _Topic, keys: Sequence[bytes], values: Sequence[bytes],
                 positions: Sequence[WalPosition], failed: _Failures) -> int:
        """Wait until every message produced (``keys`` and ``values``; ``failed`` fills
        with their failures) is acknowledged; on failure, send again from the first failed
        message after a backoff. Returns how many."""
        start = 0
        for attempt in range(self.settings.retries + 1):
            if attempt:
                failed = self._produce(topic.name, keys, values, start)
            failure = self._await(failed, start)
            if failure is None:
                return len(keys)
            start, error = failure
            position = positions[start]
            if error is not None and (error.code() in _TOO_LARGE or not _transient(error)):
                raise KafkaDeliveryError(self._failure(topic, position, error, attempt + 1))
            if attempt == self.settings.retries:
                break
            pause = BACKOFF_S * 2 ** attempt
            log.warning("%s; sending again in %.0f s",
                        self._failure(topic, position, error, attempt + 1), pause)
            self.sleep(pause)
            if error is not None and error.fatal():
                self._drop_producer(flush=False)  # an idempotent producer's fatal error
        raise KafkaUnavailableError(self._failure(topic, position, error,
                                                  self.settings.retries + 1)
                                    + "; stopping the run: every offset the broker "
                                    "acknowledged is kept, rerun once it answers",
                                    endpoint=self.settings.bootstrap)

    def _failure(self, topic: _Topic, position: WalPosition, error: KafkaError | None,
                 attempts: int) -> str:
        reason = error.str() if error is not None else "no acknowledgement"
        return (f"Kafka broker {self.settings.bootstrap}, topic {topic.name!r}: the message "
                f"of {position} was not delivered after {attempts} attempt(s): {reason}")

    def _produce(self, topic: str, keys: Sequence[bytes], values: Sequence[bytes],
                 start: int) -> _Failures:
        """Produce the messages from index ``start`` on; returns their failures, filled in
        as the broker reports them."""
        producer = self.producer()
        failed = _Failures(keys, values, start)
        produce, report = producer.produce, failed.report
        i, n = start, len(keys)
        while i < n:
            try:
                for i in range(i, n):  # noqa: B020 (from where the last try stopped)
                    produce(topic, values[i], keys[i], ANY_PARTITION, report)  # positional:
                    # a third cheaper to call than with on_delivery= (the keywords parsed)
                break
            except BufferError:
                producer.poll(0.1)  # the local queue is full: let deliveries drain
            except KafkaException as exc:
                failed.at[i] = exc.args[0]
                i += 1
        return failed

    def _await(self, failed: _Failures, start: int) -> tuple[int, KafkaError | None] | None:
        """Wait until the broker acknowledged or refused each message produced from index
        ``start`` on; return the index and error of the first one not delivered (error
        None: not acknowledged in time), or None when all were: a message is acknowledged
        when it reported no failure and the flush left nothing in flight."""
        left = self.producer().flush(self.settings.delivery_timeout / 1000 + 30)
        if left:  # which of them is unknown: none of this batch counts
            log.warning("%d message(s) still unacknowledged after the delivery timeout", left)
            return start, failed.first_error_at(start)
        return failed.first()

    # -- row images -------------------------------------------------------------------------

    def _apply_with_images(self, table: str, edits: Sequence[RowEdit],
                           mutations: Sequence[RowMutation], applied: AppliedCounts
                           ) -> list[_Images]:
        """Apply ``mutations`` to the target in segments of whole entries in which no row
        repeats, reading each segment's rows back right after it (and right before it, for
        the Debezium envelope); returns each edit's row images (before, after)."""
        assert self.image_target is not None and self.image_reader is not None
        images: list[_Images] = []
        seg_edits: list[RowEdit] = []
        seg_mutations: list[RowMutation] = []
        rows: set[bytes] = set()
        e = m = 0
        while e < len(edits):
            position = edits[e].position
            entry = _run(edits, e, position)
            entry_mutations = _run(mutations, m, position)
            if rows & {edit.row for edit in entry}:
                self._segment(table, seg_edits, seg_mutations, applied, images)
                seg_edits, seg_mutations, rows = [], [], set()
            seg_edits += entry
            seg_mutations += entry_mutations
            rows.update(edit.row for edit in entry)
            e, m = e + len(entry), m + len(entry_mutations)
        self._segment(table, seg_edits, seg_mutations, applied, images)
        return images

    def _segment(self, table: str, edits: Sequence[RowEdit], mutations: Sequence[RowMutation],
                 applied: AppliedCounts, images: list[_Images]) -> None:
        reader = self.image_reader
        assert self.image_target is not None and reader is not None
        if not edits:
            return
        befores: list[list[Cell] | None] = [None] * len(edits)
        if self._before_images:  # no row repeats in a segment: each row as before its edit
            befores = [reader.get(table, edit.row, max_versions=1) for edit in edits]
        done = self.image_target.apply(table, mutations)
        applied.approximations.update(done.approximations)
        for edit, before in zip(edits, befores, strict=True):
            images.append((before, reader.get(table, edit.row, max_versions=1)))


class _Failures:
    """The messages of one produced batch the broker refused, by index. Only failures are
    reported back (``delivery.report.only.error``), to one callback for the whole batch (no
    object per message); a refused message's index is found from its key and value when
    asked, which is rare. Of equal messages the first counts, so sending again from there
    sends nothing less."""

    def __init__(self, keys: Sequence[bytes], values: Sequence[bytes], start: int) -> None:
        self.keys, self.values, self.start = keys, values, start
        self.at: dict[int, KafkaError] = {}  # index -> failure
        self._reported: list[tuple[KafkaError, bytes | None, bytes | None]] = []

    def report(self, error: KafkaError | None, msg: Message) -> None:
        if error is not None:
            self._reported.append((error, msg.key(), msg.value()))

    def _resolve(self) -> None:
        if not self._reported:
            return
        by_key: dict[bytes, list[int]] = {}
        for i in range(self.start, len(self.keys)):
            by_key.setdefault(self.keys[i], []).append(i)
        for error, key, value in self._reported:
            index = next((i for i in by_key.get(key or b"", ())
                          if i not in self.at and self.values[i] == value), self.start)
            self.at.setdefault(index, error)
        self._reported.clear()

    def first(self) -> tuple[int, KafkaError] | None:
        """The index and error of the first message refused, or None."""
        self._resolve()
        if not self.at:
            return None
        first = min(self.at)
        return first, self.at[first]

    def first_error_at(self, index: int) -> KafkaError | None:
        """The failure of the message at ``index``, if it reported one."""
        self._resolve()
        return self.at.get(index)


_T = TypeVar("_T", RowEdit, RowMutation)
_Images = tuple[list[Cell] | None, list[Cell] | None]  # a row as before and after its edit


def _run(items: Sequence[_T], start: int, position: WalPosition) -> list[_T]:
    """The items from ``start`` on that come from the entry at ``position``."""
    end = start
    while end < len(items) and items[end].position == position:
        end += 1
    return list(items[start:end])


def _transient(error: KafkaError) -> bool:
    return error.code() in _UNAVAILABLE or error.retriable() or error.fatal()
