#!/usr/bin/env bash
# Installs (from Debian's packages, when missing) and starts a PostgreSQL
# server on loopback for the manifest-store tests, with a `spillway` role
# and database, then prints the URL to give the tests in
# SPILLWAY_TEST_PG_URL. Needs root (apt-get, and the postgres account).
set -euo pipefail
if ! command -v pg_ctlcluster >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
fi
version="$(ls /usr/lib/postgresql | sort -n | tail -1)"
if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
  pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >&2 2>/dev/null || true
for _ in $(seq 1 50); do
  if runuser -u postgres -- pg_isready -q; then break; fi
  sleep 0.2
done
runuser -u postgres -- psql -q -v ON_ERROR_STOP=1 postgres >&2 <<'SQL'
SELECT 'CREATE ROLE spillway LOGIN CREATEDB PASSWORD ''spillway''' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'spillway')\gexec
SELECT 'CREATE DATABASE spillway OWNER spillway' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'spillway')\gexec
SQL
echo "postgres://spillway:spillway@127.0.0.1:5432/spillway"
