#!/usr/bin/env bash
# Checks (and, as root on Debian, installs) the system packages the project needs.
#   scripts/system-deps.sh build   what creating the virtualenv needs (Kerberos headers, a C
#                                  compiler and Python's headers, Java 17+),
#                                  and npm (the Data Docs' web assets, scripts/docs-assets.sh)
#   scripts/system-deps.sh airflow the same plus a local Airflow stack's database server
#                                  (airflow up, the demo): PostgreSQL
#   scripts/system-deps.sh celery  the same plus the broker of a Celery Airflow stack
#                                  (airflow up --executor celery): redis-server
#   scripts/system-deps.sh test    the same plus what the tests start or drive: Maven and a JDK
#                                  (the real HBase/Kafka stack), Chromium, Kerberos, faketime,
#                                  and the Bigtable emulator when apt can find it
#   scripts/system-deps.sh bigtable  the Bigtable emulator alone (Google's apt repository)
set -euo pipefail
group="${1:-build}"
need=()

command -v krb5-config >/dev/null 2>&1 || need+=(libkrb5-dev)
# a C compiler and Python's headers: gssapi's build, and the compiled hot loops
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

case "$group" in airflow|celery|test)
  ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql);;
esac
if [ "$group" = celery ] || [ "$group" = test ]; then
  command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
fi
if [ "$group" = test ]; then
  command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || need+=(maven)
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  # MIT Kerberos's KDC and tools: the secured real stack (realstack start --kerberos).
  command -v krb5kdc >/dev/null 2>&1 || [ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)
  command -v kadmin.local >/dev/null 2>&1 || [ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
  command -v kinit >/dev/null 2>&1 || need+=(krb5-user)
  command -v faketime >/dev/null 2>&1 || need+=(faketime)  # a client with a skewed clock
  command -v openssl >/dev/null 2>&1 || need+=(openssl)  # the TLS Kafka listener's CA
fi

# The Bigtable emulator (cbtemulator) comes from Google's apt repository
# (packages.cloud.google.com, cloud-sdk-<codename> main), which a Debian machine does not have
# configured: installed when apt offers it, else named (its tests skip; `bigtable` fails).
if [ "$group" = test ] || [ "$group" = bigtable ]; then
  emulator=google-cloud-cli-bigtable-emulator
  if ! command -v cbtemulator >/dev/null 2>&1 &&
     [ ! -x /usr/lib/google-cloud-sdk/platform/bigtable-emulator/cbtemulator ]; then
    if apt-cache policy "$emulator" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
      need+=("$emulator")
    else
      echo "the Bigtable emulator ($emulator) is not installed and apt offers no such" \
        "package: add Google's apt repository (https://cloud.google.com/sdk/docs/install#deb)" \
        "and run this again; the Bigtable emulator tests skip until then" >&2
      [ "$group" = bigtable ] && exit 1
    fi
  fi
fi

[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  # Debian starts these services on install; the stacks and tests run their own servers.
  for service in postgresql redis-server; do
    if printf '%s\n' "${need[@]}" | grep -qx "$service"; then
      service "$service" stop >/dev/null 2>&1 || true
    fi
  done
else
  echo "missing system packages: ${need[*]}" >&2
  echo "install them first, e.g.: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
