#!/usr/bin/env bash
# Checks (and, as root on Debian, installs) the system packages the project needs.
#   scripts/system-deps.sh build   what creating the virtualenv needs (Kerberos headers, a C
#                                  compiler and Python's headers, Java 17+),
#                                  and npm (the Data Docs' web assets, scripts/docs-assets.sh)
#   scripts/system-deps.sh test    the same plus what the tests start or drive: the PostgreSQL
#                                  server, Maven and a JDK (the real HBase/Kafka stack), Chromium
set -euo pipefail
need=()

command -v krb5-config >/dev/null 2>&1 || need+=(libkrb5-dev)
# a C compiler and Python's headers: gssapi's build, and the reader's compiled hot loops
command -v cc >/dev/null 2>&1 || need+=(gcc)
"${PYTHON:-python3}" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(
  os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null || need+=(python3-dev)

java_major() {
  local java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
  command -v "$java" >/dev/null 2>&1 || { echo 0; return; }
  "$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1
}
[ "$(java_major)" -ge 17 ] 2>/dev/null || need+=(openjdk-17-jre-headless)
command -v npm >/dev/null 2>&1 || need+=(npm)

if [ "${1:-build}" = test ]; then
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
  command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || need+=(maven)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  # MIT Kerberos's KDC and tools: the secured real stack (realstack start --kerberos).
  command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)
  command -v kadmin.local >/dev/null 2>&1 || [ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
  command -v kinit >/dev/null 2>&1 || need+=(krb5-user)
  command -v faketime >/dev/null 2>&1 || need+=(faketime)  # a client with a skewed clock
fi

[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian starts a cluster on install; the tests run their own server.
  if printf '%s\n' "${need[@]}" | grep -qx postgresql; then
    service postgresql stop >/dev/null 2>&1 || true
  fi
else
  echo "missing system packages: ${need[*]}" >&2
  echo "install them first, e.g.: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
