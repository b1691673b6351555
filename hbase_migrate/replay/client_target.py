"""Exact replay over a cluster's client (:mod:`hbase_migrate.cluster.client`: HBase's own
RPC straight to the region servers that own the rows, the Thrift2 gateway, or Bigtable):
each batch of row mutations handed to ``write_rows`` as it is, in WAL order (the transport
cuts it into its own requests), every cell at its timestamp and every delete type; a refused
batch is re-sent mutation by mutation to name the one the target refuses.
(``thrift1_target`` does the same for Thrift1, with its delete-fidelity policy.)"""

from __future__ import annotations

from collections.abc import Sequence

from hbase_migrate.cluster.client import Client
from hbase_migrate.cluster.errors import ClusterError, ServiceUnreachableError
from hbase_migrate.replay.apply import (
    AppliedCounts,
    TargetOverClient,
    count_cells,
    unavailable,
    write_error,
    writing,
)
from hbase_migrate.replay.mutations import RowMutation


class ClientTarget(TargetOverClient):
    """Exact replay over one client (not shared across threads). ``cluster`` names the
    target cluster in messages. ``owned``: closing the target closes the client (else the
    client is lent, and its lender takes it back)."""

    client: Client

    def __init__(self, client: Client, *, cluster: str | None = None,
                 owned: bool = True) -> None:
        super().__init__(client, client.table_exists, cluster)
        self.owned = owned

    def close(self) -> None:
        if self.owned:
            self.client.close()

    def apply(self, table: str, mutations: Sequence[RowMutation]) -> AppliedCounts:
        calls = 0
        try:
            calls = self.client.write_rows(table, mutations)
        except ServiceUnreachableError as exc:
            raise unavailable(self.cluster, exc, writing(table, mutations[0])) from exc
        except ClusterError as exc:
            calls = self._find_failure(table, mutations, exc)
        return AppliedCounts(count_cells(mutations), calls)

    def _find_failure(self, table: str, mutations: Sequence[RowMutation],
                      exc: ClusterError) -> int:
        """Re-send mutation by mutation (idempotent: original timestamps) to name the one
        the target refuses; returns the calls made if every one is then acknowledged."""
        calls = 0
        for m in mutations:
            try:
                calls += self.client.write_rows(table, (m,))
            except ServiceUnreachableError as again:
                raise unavailable(self.cluster, again, writing(table, m)) from exc
            except ClusterError as again:
                raise write_error(self.name, table, m, again) from exc
        return calls
