"""The ``hbase`` connection type: one HBase cluster's endpoints.

A connection holds the Thrift1 gateway as host and port (none for a cluster reached
natively), and in its extras ``client`` (``native``: HBase's own RPC through ZooKeeper, no
gateway; ``thrift``: the gateways; by default Thrift2 when named, else native), ``thrift2``
(``host:port``), ``webhdfs`` (``http://namenode:9870``), ``zookeeper`` (``host:port,...``),
``znode_parent`` (default ``/hbase``), ``uri`` (HBase's connection URI:
``hbase+rpc://host:port,...`` reaches the cluster through its RPC registry with no
ZooKeeper; ``hbase+zk://quorum/znode``), ``hbase_root`` (the HBase root: an HDFS path when
``webhdfs`` is given, else a local folder), ``transport`` (``buffered``, ``framed`` or
``http``) and ``protocol`` of the gateways,
and the cluster's security (``auth``, ``principal``, ``keytab``, ``krb5_conf``,
``hbase_principal``, ``http_principal``, ``zookeeper_principal``, ``qop``,
``rpc_protection``, ``tls_ca_file``, ``rpc_tls``, ``rpc_tls_verify_hostname``,
``tls_cert_file``, ``tls_key_file``:
``hbase_migrate.cluster.auth.security``; file names only, never a secret).
:meth:`HBaseHook.endpoints` turns it into the core's ``ClusterEndpoints``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from airflow.sdk import BaseHook

if TYPE_CHECKING:
    from hbase_migrate.cluster.endpoints import ClusterEndpoints

ENDPOINT_EXTRA_KEYS = ("client", "thrift2", "webhdfs", "zookeeper", "znode_parent",
                       "hbase_root", "transport", "protocol", "uri")
SECURITY_EXTRA_KEYS = ("auth", "principal", "keytab", "krb5_conf", "hbase_principal",
                       "hbase_master_principal", "http_principal", "zookeeper_principal",
                       "qop", "rpc_protection", "tls_ca_file", "rpc_tls",
                       "rpc_tls_verify_hostname", "tls_cert_file", "tls_key_file")
EXTRA_KEYS = ENDPOINT_EXTRA_KEYS + SECURITY_EXTRA_KEYS


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
        from hbase_migrate.cluster.auth.security import ClusterSecurity
        from hbase_migrate.cluster.endpoints import ClusterEndpoints
        from hbase_migrate.errors import ConfigError

        conn = self.get_connection(self.hbase_conn_id)
        prefix = f"extra__{self.conn_type}__"  # how Airflow's form may store its fields
        extra = {k.removeprefix(prefix): v for k, v in conn.extra_dejson.items()}
        if (not conn.host or not conn.port) and not extra.get("zookeeper") \
                and not extra.get("uri"):
            raise ConfigError(f"connection {self.hbase_conn_id!r}: host and port of the "
                              "Thrift1 gateway are required (or the extra zookeeper or uri, "
                              "for client native)")
        unknown = sorted(set(extra) - set(EXTRA_KEYS))
        if unknown:
            raise ConfigError(f"connection {self.hbase_conn_id!r}: unknown extra key(s) "
                              f"{', '.join(unknown)}; expected {', '.join(EXTRA_KEYS)}")
        given: dict[str, Any] = {k: str(v) for k, v in extra.items()
                                 if v not in (None, "") and k in ENDPOINT_EXTRA_KEYS}
        security = {k: str(v) for k, v in extra.items()
                    if v not in (None, "") and k in SECURITY_EXTRA_KEYS}
        try:
            if security:
                given["security"] = ClusterSecurity.from_json(security, "extras")
            thrift = f"{conn.host}:{conn.port}" if conn.host and conn.port else ""
            return ClusterEndpoints(name=self.hbase_conn_id, thrift=thrift, **given)
        except ConfigError as exc:
            raise ConfigError(f"connection {self.hbase_conn_id!r}: {exc}") from None

    @staticmethod
    def connection_extra(endpoints: ClusterEndpoints) -> dict[str, str]:
        """The extras of a connection naming ``endpoints`` (what ``endpoints()`` reads)."""
        data = {**endpoints.to_json(), **(endpoints.security.to_json()
                                          if endpoints.security else {})}
        return {k: str(data[k]) for k in EXTRA_KEYS if data.get(k)}
