#!/usr/bin/env bash
# Make sure PostgreSQL server binaries (initdb, pg_ctl, postgres) are present so the
# store tests can start a throwaway cluster. Installs Debian's `postgresql` package when
# missing and we are root with apt-get; otherwise explains and leaves the tests to skip.
set -euo pipefail

have_server() {
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null
}

if have_server; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "ensure-postgres: installing Debian's postgresql package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
  # The package may start a system cluster; the tests use their own, so stop it.
  if command -v pg_ctlcluster >/dev/null; then
    for conf in /etc/postgresql/*/*; do
      [ -d "$conf" ] || continue
      pg_ctlcluster "$(basename "$(dirname "$conf")")" "$(basename "$conf")" stop 2>/dev/null || true
    done
  fi
  have_server && exit 0
fi
echo "ensure-postgres: PostgreSQL server not available; its tests will be skipped" >&2
exit 0
