"""Replay through a Thrift1 gateway (happybase's IDL), with the fidelity policy of
DESIGN 4.1.

Thrift1 carries one timestamp per call and only two delete forms (column ``"cf:q"`` =
DeleteColumn <= ts, family ``"cf"`` = DeleteFamily <= ts). So each run of puts is sent as one
``mutateRowsTs`` per timestamp (rows grouped, cell order kept within a row), and each run of
deletes as one ``mutateRowsTs`` of delete mutations per timestamp. Per type:

* DeleteColumn (12), DeleteFamily (14): exact.
* Delete (8): sent as DeleteColumn at ts where the target family keeps one version
  (VERSIONS=1), counted as ``Delete as DeleteColumn (VERSIONS=1)``; elsewhere only with
  ``allow_lossy_deletes`` (counted ``Delete as DeleteColumn (lossy)``).
* DeleteFamilyVersion (10): never exact; with ``allow_lossy_deletes`` sent as DeleteFamily
  at ts (counted ``DeleteFamilyVersion as DeleteFamily (lossy)``).

Without permission, a delete that cannot be expressed fails the batch before any of it is
written, with :class:`InexpressibleMutationError` naming file, offset, row, family and type.
Puts and deletes of one timestamp are never mixed in one call: the gateway would reorder them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from hbase_migrate.bytesutil import short_binary, to_string_binary
from hbase_migrate.cluster.client import Thrift1Gateway
from hbase_migrate.cluster.descriptors import TableDescriptor
from hbase_migrate.cluster.errors import ClusterError, GatewayUnreachableError
from hbase_migrate.replay.apply import (
    AppliedCounts,
    TargetOverClient,
    count_cells,
    unavailable,
    write_error,
    writing,
)
from hbase_migrate.replay.errors import InexpressibleMutationError
from hbase_migrate.replay.mutations import Kind, RowMutation
from hbase_migrate.wal.model import Cell, CellType, type_name

DELETE_VERSIONS_1 = "Delete as DeleteColumn (VERSIONS=1)"
DELETE_LOSSY = "Delete as DeleteColumn (lossy)"
FAMILY_VERSION_LOSSY = "DeleteFamilyVersion as DeleteFamily (lossy)"


class Thrift1Call(NamedTuple):
    """One ``mutateRowsTs``: rows -> (column, value) pairs; value None means delete."""

    timestamp: int
    kind: Kind
    rows: dict[bytes, list[tuple[bytes, bytes | None]]]
    first: RowMutation  # for error messages


def _column(cell: Cell) -> bytes:
    return cell.family + b":" + cell.qualifier


class Thrift1Planner:
    """Turns row mutations into Thrift1 calls under the policy, counting approximations."""

    def __init__(self, desc: TableDescriptor, allow_lossy_deletes: bool) -> None:
        self.desc, self.allow_lossy = desc, allow_lossy_deletes
        self.approximations: Counter[str] = Counter()

    def plan(self, mutations: Sequence[RowMutation]) -> list[Thrift1Call]:
        """Calls in order: a run of one kind becomes one call per timestamp."""
        calls: list[Thrift1Call] = []
        run: dict[int, Thrift1Call] = {}
        kind: Kind | None = None
        for m in mutations:
            if m.kind != kind:
                calls.extend(run.values())
                run, kind = {}, m.kind
            for cell in m.cells:
                column = _column(cell) if m.kind is Kind.PUT else self._delete_column(m, cell)
                call = run.get(cell.timestamp)
                if call is None:
                    call = run[cell.timestamp] = Thrift1Call(cell.timestamp, m.kind, {}, m)
                value = cell.value if m.kind is Kind.PUT else None
                call.rows.setdefault(m.row, []).append((column, value))
        calls.extend(run.values())
        return calls

    def _delete_column(self, m: RowMutation, cell: Cell) -> bytes:
        if cell.type == CellType.DELETE_COLUMN:
            return _column(cell)
        if cell.type == CellType.DELETE_FAMILY:
            return cell.family
        family = self.desc.family(cell.family)
        if cell.type == CellType.DELETE and family is not None and family.max_versions == 1:
            self.approximations[DELETE_VERSIONS_1] += 1
            return _column(cell)
        if not self.allow_lossy:
            versions = "?" if family is None else family.max_versions
            raise InexpressibleMutationError(
                f"{m.position}: table {self.desc.name} row {short_binary(m.row)} family "
                f"{to_string_binary(cell.family)} (VERSIONS={versions}): a "
                f"{type_name(cell.type)} at ts {cell.timestamp} cannot be expressed through "
                "Thrift1; replay through Thrift2, or allow lossy deletes")
        if cell.type == CellType.DELETE:
            self.approximations[DELETE_LOSSY] += 1
            return _column(cell)
        self.approximations[FAMILY_VERSION_LOSSY] += 1
        return cell.family


class Thrift1Target(TargetOverClient):
    """Replay through a Thrift1 gateway under the delete-fidelity policy. ``cluster``
    names the target cluster in messages."""

    client: Thrift1Gateway

    def __init__(self, client: Thrift1Gateway, *, allow_lossy_deletes: bool = False,
                 cluster: str | None = None) -> None:
        super().__init__(client, lambda t: t in client.tables(), cluster)
        self.allow_lossy_deletes = allow_lossy_deletes

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        planner = Thrift1Planner(self.describe(table), self.allow_lossy_deletes)
        calls = planner.plan(mutations)  # raises before anything is written
        for call in calls:
            try:
                self.client.mutate_rows(table, call.timestamp, call.rows,
                                        delete=call.kind is Kind.DELETE)
            except GatewayUnreachableError as exc:
                raise unavailable(self.cluster, exc, writing(table, call.first)) from exc
            except ClusterError as exc:  # the gateway refused the call
                raise write_error(self.name, table, call.first, exc) from exc
        return AppliedCounts(count_cells(mutations), len(calls), planner.approximations)
