"""A cluster as a step holds it: :func:`open_cluster` gives a :class:`Cluster`, the one place
that decides which transport serves what.

Its data go over HBase's own RPC (``client = "native"``), else the Thrift2 gateway, else the
Thrift1 gateway alone; a Bigtable target over its own client. Admin goes over HBase's RPC
where the cluster is reached natively (or the ``admin_shell`` it names), compaction over its
Thrift1 gateway otherwise; a bulk load, status and delegation tokens only natively.

The endpoints are read when first asked for, through the once-per-file memory of
:func:`~hbase_migrate.cluster.endpoints.load_cluster_json`: a ``cluster.json`` is read once
per process, again once it was replaced (a cluster restarted on new ports) and on a
reconnect (the gateways' ``locate``). The handle holds no connection itself: each client,
gateway or admin it opens is the caller's to close; :meth:`Cluster.close` ends the handle.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from hbase_migrate.cluster.admin import DEFAULT_HBASE_VERSION, Admin, Compactor
from hbase_migrate.cluster.auth.tokens import Token
from hbase_migrate.cluster.client import Client, Thrift1Gateway
from hbase_migrate.cluster.endpoints import ClusterEndpoints
from hbase_migrate.cluster.sizing import ClientSettings
from hbase_migrate.config import ClusterSpec
from hbase_migrate.config_bigtable import BigtableSettings
from hbase_migrate.hbase.admin import (
    cluster_status,
    connect_admin,
    delegation_token,
    open_compactor,
    registry_status,
)
from hbase_migrate.hbase.bulk import BulkLoadCalls, open_bulk_load
from hbase_migrate.hbase.connect import connect, connect_thrift1, open_client, open_thrift1
from hbase_migrate.hbase.identity import cluster_id

if TYPE_CHECKING:
    from hbase_migrate.bigtable.masking import MarkerMemory
    from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot

Transport = Literal["native", "thrift2", "thrift1", "bigtable"]


def open_cluster(where: ClusterSpec | ClusterEndpoints) -> Cluster:
    """The handle of a migration's cluster (``where``: its ``[source]`` or ``[target]``), or
    of bare endpoints (no ``[gateway]`` settings, no look-up again before a reconnect).
    Nothing is read or connected until asked for."""
    return Cluster(where)


class Cluster:
    """What a step holds of one cluster (see the module docstring): its endpoints, the
    transport serving its data, and what it opens over them."""

    def __init__(self, where: ClusterSpec | ClusterEndpoints) -> None:
        self._spec = where if isinstance(where, ClusterSpec) else None
        self._fixed = where if isinstance(where, ClusterEndpoints) else None
        self._closed = False

    # --- what the cluster is ---------------------------------------------------------------

    @property
    def spec(self) -> ClusterSpec | None:
        """The migration's section this handle was opened on (None: bare endpoints)."""
        return self._spec

    @property
    def bigtable(self) -> BigtableSettings | None:
        """The Bigtable instance, for a Bigtable target (None: an HBase cluster)."""
        return self._spec.bigtable if self._spec is not None else None

    @property
    def cluster_json(self) -> Path | None:
        """The file the endpoints are read from (None: given in the config, or bare)."""
        return self._spec.cluster_json if self._spec is not None else None

    @property
    def endpoints(self) -> ClusterEndpoints:
        """The cluster's endpoints: its ``cluster.json`` read once per process (again once
        replaced); a Bigtable target has none (``ConfigError``, as ``ClusterSpec``'s)."""
        self._check_open()
        if self._fixed is not None:
            return self._fixed
        assert self._spec is not None
        return self._spec.endpoints()

    @property
    def name(self) -> str:
        """The endpoints' name; a Bigtable target's instance (``project/instance``)."""
        bigtable = self.bigtable
        return bigtable.where if bigtable is not None else self.endpoints.name

    @property
    def reuse_key(self) -> str:
        """What a client kept for later tasks must match: the endpoints as known now (a
        restarted cluster's file read anew gives another key) and the ``[gateway]``
        settings; a Bigtable target's instance."""
        bigtable = self.bigtable
        if bigtable is not None:
            return repr(bigtable)
        settings = self._spec.gateway if self._spec is not None else ClientSettings()
        return repr((self.endpoints, settings))

    def shipped(self) -> ClusterSpec:
        """The section with its endpoints resolved here (security and client merged in),
        as a task on another host gets it: no ``cluster.json`` to read there. A Bigtable
        target has no endpoints to resolve (``ConfigError``, as :attr:`endpoints`)."""
        return replace(self._as_spec(), cluster_json=None, explicit=self.endpoints, security=(),
                       client=None)

    @property
    def transport(self) -> Transport:
        """What serves the cluster's data: Bigtable's client, HBase's own RPC, the Thrift2
        gateway, or the Thrift1 gateway where the cluster names neither."""
        if self.bigtable is not None:
            return "bigtable"
        endpoints = self.endpoints
        if endpoints.native:
            return "native"
        return "thrift2" if endpoints.thrift2 else "thrift1"

    @property
    def has_client(self) -> bool:
        """Whether :meth:`client` serves the data (not the Thrift1 gateway alone)."""
        return self.transport != "thrift1"

    def writes_exactly(self, force_thrift1: bool = False) -> bool:
        """Whether a replay writes through :meth:`client` (every edit as it was), not the
        Thrift1 gateway with its delete-fidelity policy (:meth:`replay_gateway`): so for a
        cluster with a client, unless ``force_thrift1`` (ignored for Bigtable)."""
        transport = self.transport
        return transport == "bigtable" or (transport != "thrift1" and not force_thrift1)

    @property
    def reached_natively(self) -> bool:
        """Whether HBase's own RPC reaches the cluster (ZooKeeper or an RPC registry named):
        what its status, registry, admin channel, bulk load and tokens need."""
        if self.bigtable is not None:
            return False
        endpoints = self.endpoints
        return endpoints.native and bool(endpoints.zookeeper or endpoints.bootstrap)

    @property
    def issues_tokens(self) -> bool:
        """Whether the cluster is asked for delegation tokens: Kerberos-secured and reached
        over HBase's own RPC."""
        if self.bigtable is not None:
            return False
        endpoints = self.endpoints
        return endpoints.kerberos and endpoints.native

    # --- what it opens (each the caller's to close) ----------------------------------------

    def client(self) -> Client:
        """The data client (:func:`~hbase_migrate.hbase.connect.open_client`; over bare
        endpoints :func:`~hbase_migrate.hbase.connect.connect`)."""
        self._check_open()
        if self._spec is not None:
            return open_client(self._spec)
        return connect(self.endpoints)

    def thrift1(self, why: str) -> Thrift1Gateway:
        """The Thrift1 gateway, for the calls only it has (``why``: which, the error's
        reason when the cluster names none; :func:`~hbase_migrate.hbase.connect.open_thrift1`)."""
        self._check_open()
        return open_thrift1(self._as_spec(), why)

    def replay_gateway(self) -> Thrift1Gateway:
        """The Thrift1 gateway a replay writes through where :meth:`writes_exactly` is
        False: the gateway's default timeouts, its endpoint looked up again (the
        ``cluster.json`` read again) before a reconnect."""
        self._check_open()
        locate = None if self._spec is None else self._relocate_thrift1
        return connect_thrift1(self.endpoints, locate=locate)

    def admin(self, hbase_version: str = DEFAULT_HBASE_VERSION) -> Admin:
        """Snapshots and dropping tables (:func:`~hbase_migrate.hbase.admin.connect_admin`)."""
        self._check_open()
        return connect_admin(self._as_spec(), hbase_version)

    def compactor(self, client: Client, why: str) -> AbstractContextManager[Compactor]:
        """What major-compacts the cluster whose ``client`` lists the regions
        (:func:`~hbase_migrate.hbase.admin.open_compactor`)."""
        self._check_open()
        return open_compactor(self._as_spec(), client, why)

    def bulk_load(self) -> AbstractContextManager[BulkLoadCalls]:
        """The bulk-load calls, over HBase's RPC with the ``[gateway]`` settings
        (:func:`~hbase_migrate.hbase.bulk.open_bulk_load`)."""
        self._check_open()
        settings = self._spec.gateway if self._spec is not None else ClientSettings()
        return open_bulk_load(self.endpoints, settings)

    def file_root(self, timeout: float = 60.0) -> HdfsRoot | None:
        """The cluster's HBase root over WebHDFS, with its security (what the snapshot files
        are copied from, to and read in); None where it names no ``webhdfs`` URL and
        ``hbase_root`` (a Bigtable target has neither)."""
        if self.bigtable is not None:
            return None
        role = self._spec.role if self._spec is not None else "the"
        endpoints = self.endpoints
        if not endpoints.webhdfs or not endpoints.hbase_root:
            return None
        from hbase_migrate.cluster.storage.hdfs_files import HdfsRoot

        return HdfsRoot(endpoints.webhdfs, endpoints.hbase_root, role, timeout,
                        security=endpoints.security, cluster=endpoints.name,
                        namenode=endpoints.namenode)

    # --- what a Bigtable target's writes keep in this process ------------------------------

    @contextmanager
    def recorded_losses(self, metrics: dict[str, Any]) -> Iterator[None]:
        """For the length of the block, what the writes to a Bigtable target left out (the
        accepted losses, the puts an earlier delete masks), put into a step's ``metrics``
        (``bigtable``) however it ends; nothing for an HBase cluster."""
        from hbase_migrate.bigtable.losses import recorded_losses

        with recorded_losses(self.bigtable, metrics):
            yield

    def marker_memory(self) -> MarkerMemory | None:
        """The delete markers this process's clients of a Bigtable target met (shared by
        them, noted ahead by a replay: a put they mask is not written); None for an HBase
        cluster."""
        bigtable = self.bigtable
        if bigtable is None:
            return None
        from hbase_migrate.bigtable.losses import shared

        return shared(bigtable)[0]

    # --- what it says ---------------------------------------------------------------------

    def status(self, wait: float = 10.0) -> dict[str, Any] | None:
        """The active master's status (:func:`~hbase_migrate.hbase.admin.cluster_status`)
        for a cluster reached natively; None for others (a gateway's cluster keeps what
        ZooKeeper says)."""
        if not self.reached_natively:
            return None
        return cluster_status(self.endpoints, wait)

    def master_status(self, wait: float = 10.0) -> dict[str, Any]:
        """The active master's status over HBase's RPC (its ZooKeeper quorum or registry),
        whichever transport serves the data; ``{"error"}`` when no master answered
        (:func:`~hbase_migrate.hbase.admin.cluster_status`)."""
        return cluster_status(self.endpoints, wait)

    def registry_status(self, wait: float = 10.0) -> dict[str, Any] | None:
        """Who tells where meta and the master are, for a cluster reached natively: the RPC
        registry asked now (:func:`~hbase_migrate.hbase.admin.registry_status`), or its
        ZooKeeper; None for one reached through its gateways."""
        if self.bigtable is not None or not self.endpoints.native:
            return None
        endpoints = self.endpoints
        if not endpoints.bootstrap:
            return {"kind": "zookeeper",
                    "answered_by": f"{endpoints.zookeeper}{endpoints.znode_parent}"}
        return registry_status(endpoints, wait)

    def delegation_token(self) -> Token | None:
        """A delegation token the cluster issues (None: it issues none, or it is asked for
        none: :attr:`issues_tokens`); raises a ``ClusterError`` when it could not be asked."""
        if not self.issues_tokens:
            return None
        return delegation_token(self.endpoints)

    def cluster_id(self) -> str:
        """The cluster's ``hbaseid``, or its name
        (:func:`~hbase_migrate.hbase.identity.cluster_id`)."""
        return cluster_id(self.endpoints)

    # --- the handle's life -----------------------------------------------------------------

    def close(self) -> None:
        """End the handle: later calls raise. What it opened stays open (its callers')."""
        self._closed = True

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._spec if self._spec is not None else self._fixed
        return f"Cluster({where!r})"

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")

    def _as_spec(self) -> ClusterSpec:
        """The section, or bare endpoints as a section of their own (its errors then name
        "the cluster 'x'")."""
        if self._spec is not None:
            return self._spec
        assert self._fixed is not None
        return ClusterSpec("the", explicit=self._fixed)

    def _relocate_thrift1(self) -> str | None:
        assert self._spec is not None
        return self._spec.reread_endpoints().thrift
