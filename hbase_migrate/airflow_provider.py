"""Airflow provider metadata of this package (a plain dict; nothing here imports Airflow).

Airflow reads it through the ``apache_airflow_provider`` entry point to offer the ``hbase``
connection type, with a form for each cluster endpoint, and the ``bigtable`` one (a Bigtable
instance as the target), in its UI. The hooks live in ``hbase_migrate_airflow.hooks``
(the same wheel) and are imported by Airflow's processes only.
"""

from __future__ import annotations

from typing import Any


def _field(label: str, description: str, choices: dict[str, str] | None = None
           ) -> dict[str, Any]:
    """A text field, or with ``choices`` (value -> what the form shows) a drop-down."""
    schema: dict[str, Any] = {"type": ["string", "null"]}
    if choices:
        schema.update(enum=list(choices), values_display=choices)
    return {"label": label, "description": description, "schema": schema}


def provider_info() -> dict[str, Any]:
    return {
        "package-name": "hbase-migrate",
        "name": "hbase-migrate",
        "description": "HBase clusters (and Bigtable targets) as Airflow connections, for live "
                       "table migrations.",
        "connection-types": [{
            "connection-type": "hbase",
            "hook-class-name": "hbase_migrate_airflow.hooks.hbase.HBaseHook",
            "hook-name": "HBase",
            "conn-fields": {
                "client": _field("Client", "native (HBase's own RPC through ZooKeeper, no "
                                           "gateway) or thrift (the gateways); empty: "
                                           "thrift when a Thrift2 gateway is named",
                                 {"native": "native: HBase's own RPC",
                                  "thrift": "thrift: the Thrift gateways"}),
                "thrift2": _field("Thrift2 gateway", "host:port of THBaseService"),
                "webhdfs": _field("WebHDFS", "http://namenode:9870 (WAL files)"),
                "hbase_root": _field("HBase root", "hbase.rootdir path (an HDFS path with "
                                                   "WebHDFS, else a local folder)"),
                "zookeeper": _field("ZooKeeper quorum", "host:port[,host:port...]"),
                "znode_parent": _field("ZooKeeper parent znode", "zookeeper.znode.parent "
                                                                 "(default /hbase)"),
                "uri": _field("Connection URI", "hbase+rpc://host:16020,... (HBase 2.5+: "
                                                "found through its RPC registry, no "
                                                "ZooKeeper) or hbase+zk://quorum/znode"),
                "transport": _field("Thrift transport", "buffered (default), framed, or http "
                                                         "(gateways in HTTP mode; binary)"),
                "protocol": _field("Thrift protocol", "binary (default) or compact"),
                "auth": _field("Authentication", "none (default) or kerberos"),
                "principal": _field("Kerberos principal", "who the client logs in as "
                                                          "(migrate@EXAMPLE.COM)"),
                "keytab": _field("Keytab file", "path of the principal's keytab on the "
                                                "workers (mode 600); empty: a kinit ticket"),
                "krb5_conf": _field("krb5.conf", "path of the realm's krb5.conf"),
                "hbase_principal": _field("HBase's principal (RPC and Thrift)",
                                          "hbase/_HOST@REALM (default hbase/_HOST)"),
                "hbase_master_principal": _field("HBase masters' principal",
                                                 "where it differs from the region "
                                                 "servers' (hbase.master.kerberos.principal)"),
                "http_principal": _field("WebHDFS principal", "HTTP/_HOST@REALM (SPNEGO)"),
                "zookeeper_principal": _field("ZooKeeper principal", "zookeeper/_HOST@REALM"),
                "qop": _field("SASL QOP", "hbase.thrift.security.qop: auth, auth-int or "
                                          "auth-conf"),
                "rpc_protection": _field("RPC protection", "hbase.rpc.protection: "
                                         "authentication, integrity or privacy"),
                "tls_ca_file": _field("TLS CA file", "CA bundle for an https:// WebHDFS "
                                                     "and HBase's RPC over TLS"),
                "rpc_tls": _field("RPC TLS", "on: HBase's own RPC over TLS (HBase 2.6 "
                                             "hbase.client.netty.tls.enabled); off (default)"),
                "rpc_tls_verify_hostname": _field("RPC TLS host check",
                                                  "true (default) or false"),
                "tls_cert_file": _field("TLS client certificate", "PEM file on the workers, "
                                                                  "for servers that want one"),
                "tls_key_file": _field("TLS client key", "its PEM key file on the workers "
                                                         "(mode 600)"),
            },
            "ui-field-behaviour": {
                "hidden-fields": ["schema", "login", "password"],
                "relabeling": {"host": "Thrift1 gateway host (none: native)",
                               "port": "Thrift1 gateway port"},
                "placeholders": {"host": "hbase-thrift.example.com", "port": "9090"},
            },
        }, {
            "connection-type": "bigtable",
            "hook-class-name": "hbase_migrate_airflow.hooks.bigtable.BigtableHook",
            "hook-name": "Bigtable (hbase-migrate target)",
            "conn-fields": {
                "project": _field("Project", "the Google Cloud project id"),
                "instance": _field("Instance", "the Bigtable instance id"),
                "app_profile": _field("App profile", "empty: the instance's default"),
                "emulator_host": _field("Emulator", "host:port of a Bigtable emulator; "
                                                    "empty: Google Cloud"),
                "accept": _field("Accepted losses", "pre-flight findings accepted by name, "
                                                    "one per line"),
            },
            "ui-field-behaviour": {
                "hidden-fields": ["schema", "login", "password", "host", "port"],
            },
        }],
    }
