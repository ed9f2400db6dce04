#!/usr/bin/env bash
# Sourced by .ci/run: installs PostgreSQL from Debian's packages when missing, starts a
# throwaway server on 127.0.0.1:54329 (data directory under /tmp, trust auth), and exports
# DATABASE_URL for the PostgreSQL session-store tests. Fails loudly if the server does not
# start: CI must never skip those tests. `stop_postgres` stops it and removes the data.
#
#   source .ci/postgres.sh && start_postgres && npm test; stop_postgres

PG_PORT=${PG_PORT:-54329}

start_postgres() {
  if ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"
    apt_install postgresql
  fi
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  PG_DATA=$(mktemp -d /tmp/stepflow-pg.XXXXXX)
  # initdb refuses to run as root: as root, run the server as the postgres user Debian creates.
  local as=()
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$PG_DATA"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$PG_DATA" -U stepflow -A trust --no-sync >"$PG_DATA.initdb.log" 2>&1 || {
    cat "$PG_DATA.initdb.log" >&2
    echo "postgres.sh: initdb failed" >&2
    return 1
  }
  if ! "${as[@]}" "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $PG_PORT -k $PG_DATA -c fsync=off" start >/dev/null; then
    cat "$PG_DATA/server.log" >&2
    echo "postgres.sh: PostgreSQL did not start on 127.0.0.1:$PG_PORT" >&2
    return 1
  fi
  PG_CTL=("${as[@]}" "$bin/pg_ctl")
  export DATABASE_URL="postgres://stepflow@127.0.0.1:$PG_PORT/postgres"
  echo "== PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$PG_PORT (DATABASE_URL set)"
}

stop_postgres() {
  if [ -n "${PG_DATA:-}" ] && [ -d "$PG_DATA" ]; then
    "${PG_CTL[@]}" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true
    rm -rf "$PG_DATA" "$PG_DATA.initdb.log"
  fi
}
