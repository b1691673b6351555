"""Replay targets: where row mutations go, acknowledged before :meth:`apply` returns.

:class:`ReplayTarget` is the protocol the file replay drives; :class:`ClientTarget` is the
exact one (per-cell timestamps, every delete type, over the cluster's client: HBase's own
RPC or the Thrift2 gateway), and
:class:`hbase_migrate.replay.thrift1_target.Thrift1Target` the one with a fidelity policy.
Transport failures are retried with backoff by the clients, which look the endpoint (a region
server, a gateway) up again before reconnecting; a target that stays unreachable raises
:class:`TargetUnavailableError` (the target is down, not the file at fault: the run stops),
any other failure :class:`ReplayWriteError` naming the table, the row and the WAL position.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Protocol

from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import ServiceUnreachableError
from hbase_migrate.replay.errors import MissingTargetError, ReplayWriteError
from hbase_migrate.replay.mutations import RowMutation
from hbase_migrate.wal.model import type_name

_CELLS = attrgetter("cells")
_TYPE = attrgetter("type")


class TargetUnavailableError(ServiceUnreachableError):
    """The target (its gateway, its servers over HBase's RPC, a Kafka broker) stayed
    unreachable through a call's retries (its endpoint looked up again before each), or did
    not answer when the target was opened. Not a fault of the
    file being replayed: the run stops with this one error; every offset the target
    acknowledged is kept, so a rerun continues from there."""

    service = "target"

    def __init__(self, message: str, *, endpoint: str | None = None,
                 service: str | None = None) -> None:
        """``service``: what did not answer ("gateway", "region server", ...), named
        "target <service>" in the waits and messages; None keeps the class's."""
        super().__init__(message, endpoint=endpoint)
        if service is not None:
            self.service = f"target {service}"


def unavailable(target: str, exc: ServiceUnreachableError, doing: str
                ) -> TargetUnavailableError:
    """The error that stops a run: ``target`` (its cluster), its client's error, and what
    was being done."""
    return TargetUnavailableError(
        f"target {target}: {exc} ({doing}); stopping the run: every offset the target "
        "acknowledged is kept, rerun once the target answers", endpoint=exc.endpoint,
        service=exc.service)


@dataclass
class AppliedCounts:
    """What one or more acknowledged ``apply`` calls wrote."""

    cells: Counter[str] = field(default_factory=Counter)  # by HBase type name
    calls: int = 0
    approximations: Counter[str] = field(default_factory=Counter)  # by kind of approximation

    def add(self, other: AppliedCounts) -> None:
        self.cells.update(other.cells)
        self.calls += other.calls
        self.approximations.update(other.approximations)


def count_cells(mutations: Iterable[RowMutation]) -> Counter[str]:
    """Cells by HBase type name."""
    codes = Counter(map(_TYPE, chain.from_iterable(map(_CELLS, mutations))))  # C passes
    return Counter({type_name(code): n for code, n in codes.items()})


class ReplayTarget(Protocol):
    """A cluster that takes row mutations."""

    @property
    def name(self) -> str:
        """The endpoint, for messages."""
        ...

    def describe(self, table: str) -> TableDescriptor:
        """The target table's descriptor; :class:`MissingTargetError` if there is none."""
        ...

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        """Write the mutations in order; return only once all were acknowledged. Raises
        :class:`TargetUnavailableError` when the target stays unreachable."""
        ...

    def close(self) -> None:
        """Release the connections."""
        ...


class WrappingTarget:
    """A target over another (``target``), whose name and tables it has; closing it closes
    the other. A subclass writes (``apply``)."""

    def __init__(self, target: ReplayTarget) -> None:
        self.target = target

    @property
    def name(self) -> str:
        return self.target.name

    def describe(self, table: str) -> TableDescriptor:
        return self.target.describe(table)

    def close(self) -> None:
        self.target.close()


class SchemaCache:
    """Table descriptors of a target, fetched once."""

    def __init__(self, name: str, exists: Callable[[str], bool],
                 fetch: Callable[[str], TableDescriptor]) -> None:
        self.name, self._exists, self._fetch = name, exists, fetch
        self._tables: dict[str, TableDescriptor] = {}

    def describe(self, table: str) -> TableDescriptor:
        found = self._tables.get(table)
        if found is None:
            if not self._exists(table):
                raise MissingTargetError(
                    f"target table {table!r} does not exist on {self.name}: run prepare to "
                    "create it like the source table (or check [[tables]] target)")
            found = self._tables[table] = self._fetch(table)
        return found


class TargetOverClient:
    """What the replay targets over a cluster's client share: the client (``endpoint``,
    ``close``), its table descriptors fetched once, and ``cluster`` naming the target cluster
    in messages; a subclass writes (``apply``)."""

    def __init__(self, client: DescribingClient, exists: Callable[[str], bool],
                 cluster: str | None) -> None:
        self.client = client
        self.cluster = f"cluster {cluster!r}" if cluster else client.endpoint
        self.where = (f"the target cluster {cluster!r} (at {client.endpoint})" if cluster
                      else f"the target at {client.endpoint}")  # for messages
        self._schema = SchemaCache(self.where, exists, client.table_descriptor)

    @property
    def name(self) -> str:
        return self.client.endpoint

    def close(self) -> None:
        self.client.close()

    def describe(self, table: str) -> TableDescriptor:
        try:
            return self._schema.describe(table)
        except ServiceUnreachableError as exc:
            raise unavailable(self.cluster, exc, f"describing table {table}") from exc


class DescribingClient(Protocol):
    """What :class:`TargetOverClient` needs of a client (Thrift1, or the cluster's client)."""

    endpoint: str

    def close(self) -> None: ...
    def table_descriptor(self, table: str) -> TableDescriptor: ...


def described(target: object) -> str:
    """How messages name ``target``: a client target's ``where`` ("the target cluster 'x'
    (at h:p)"), looked for through the targets that wrap one (throttled,
    partitioned)."""
    while not hasattr(target, "where"):
        inner = getattr(target, "target", None) or next(iter(getattr(target, "targets", ())),
                                                         None)
        if inner is None:
            return f"the target {getattr(target, 'name', '')}".rstrip()
        target = inner
    return str(target.where)


def require_families(target: ReplayTarget, table: str, families: Iterable[bytes],
                     why: str) -> None:
    """Fail with :class:`MissingTargetError` unless ``table`` has every family."""
    desc = target.describe(table)
    missing = sorted(f for f in set(families) if desc.family(f) is None)
    if missing:
        names = ", ".join(to_string_binary(f) for f in missing)
        have = ", ".join(to_string_binary(f.name) for f in desc.families)
        where = described(target)
        raise MissingTargetError(
            f"target table {table!r} on {where} has no column family {names} ({why}); it has "
            f"{have}: add it (hbase shell: alter '{table}', '{to_string_binary(missing[0])}') "
            "or leave it out of [[tables]] families")


def writing(table: str, mutation: RowMutation) -> str:
    """``table T: writing row R (put) from <WAL position>``, for messages."""
    return (f"table {table}: writing row {short_binary(mutation.row)} "
            f"({mutation.kind.value}) from {mutation.position}")


def write_error(target: str, table: str, mutation: RowMutation, exc: Exception) -> Exception:
    return ReplayWriteError(f"target {target}: {writing(table, mutation)} failed: {exc}")


class PipelinedTarget(ReplayTarget, Protocol):
    """A target that can send a batch without waiting for it (the Kafka sink): the replay
    reads and prepares the next batch meanwhile, from the same thread. (A target with a
    ``send`` method is taken for one.)"""

    def send(self, table: str, mutations: Sequence[RowMutation]
             ) -> Callable[[], AppliedCounts]:
        """Send the mutations in order; the call returned waits until all were
        acknowledged and returns what ``apply`` would (or raises what it would). Nothing
        else is sent to the target before that call."""
        ...

    def prepare(self, table: str, mutations: Sequence[RowMutation]
                ) -> Callable[[], Callable[[], AppliedCounts]]:
        """What ``send`` does before anything reaches the target (rendering messages),
        done while the batch before is still unacknowledged; the call returned does the
        rest of ``send`` and returns what it returns."""
        ...


def takes_cell_blocks(target: ReplayTarget) -> bool:
    """Whether ``target`` reads an entry's cells in place (a mutation's ``cells`` may be
    the reader's compiled ``CellBlock``, a sequence of the same Cells): a target with a
    true ``takes_cell_blocks`` attribute (the Kafka sink without row images)."""
    return bool(getattr(target, "takes_cell_blocks", False))
