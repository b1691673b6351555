"""The ``hbase`` connection type: one HBase cluster's endpoints.

A connection holds the Thrift1 gateway as host and port, and in its extras ``thrift2``
(``host:port``), ``webhdfs`` (``http://namenode:9870``), ``zookeeper`` (``host:port,...``),
``znode_parent`` (default ``/hbase``), ``hbase_root`` (the HBase root: an HDFS path when
``webhdfs`` is given, else a local folder), ``transport`` and ``protocol`` of the gateways.
:meth:`HBaseHook.endpoints` turns it into the core's ``ClusterEndpoints``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from hbase_migrate.cluster.endpoints import ClusterEndpoints

EXTRA_KEYS = ("thrift2", "webhdfs", "zookeeper", "znode_parent", "hbase_root", "transport",
              "protocol")


class HBaseHook(BaseHook):
    """Reads an ``hbase`` connection; no network call is made here."""

    conn_name_attr = "hbase_conn_id"
    default_conn_name = "hbase_default"
    conn_type = "hbase"
    hook_name = "HBase"

    def __init__(self, hbase_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hbase_conn_id = hbase_conn_id

    def endpoints(self) -> ClusterEndpoints:
        """The cluster's endpoints; a ConfigError names the connection when one is wrong."""
        from hbase_migrate.cluster.endpoints import ClusterEndpoints
        from hbase_migrate.errors import ConfigError

        conn = self.get_connection(self.hbase_conn_id)
        if not conn.host or not conn.port:
            raise ConfigError(f"connection {self.hbase_conn_id!r}: host and port of the "
                              "Thrift1 gateway are required")
        prefix = f"extra__{self.conn_type}__"  # how Airflow's form may store its fields
        extra = {k.removeprefix(prefix): v for k, v in conn.extra_dejson.items()}
        unknown = sorted(set(extra) - set(EXTRA_KEYS))
        if unknown:
            raise ConfigError(f"connection {self.hbase_conn_id!r}: unknown extra key(s) "
                              f"{', '.join(unknown)}; expected {', '.join(EXTRA_KEYS)}")
        given = {k: str(v) for k, v in extra.items() if v not in (None, "")}
        try:
            return ClusterEndpoints(name=self.hbase_conn_id, thrift=f"{conn.host}:{conn.port}",
                                    **given)
        except ConfigError as exc:
            raise ConfigError(f"connection {self.hbase_conn_id!r}: {exc}") from None

    @staticmethod
    def connection_extra(endpoints: ClusterEndpoints) -> dict[str, str]:
        """The extras of a connection naming ``endpoints`` (what ``endpoints()`` reads)."""
        data = endpoints.to_json()
        return {k: str(data[k]) for k in EXTRA_KEYS if data.get(k)}
