#!/bin/sh
# Fill hbase-site.xml from the environment, then run one HBase role in the foreground.
set -eu
sed -e "s|@HBASE_ROOTDIR@|${HBASE_ROOTDIR}|" -e "s|@HBASE_ZNODE_PARENT@|${HBASE_ZNODE_PARENT}|" \
    /opt/hbase-site.xml.template > /opt/hbase/conf/hbase-site.xml
role="$1"; shift
exec hbase "$role" "$@" start
