#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL 15: initdb in a temp dir (as the
# postgres user when root), a free port, loopback only; exports
# NPUPERF_TEST_PG_URL for the command and stops the server afterwards, even on
# failure. Usage: deploy/with-postgres.sh <command> [args...]
# NPUPERF_PG_STATEMENTS=1 also loads pg_stat_statements (the benches' per-statement
# breakdown, tests/bench/run.sh); the tests run without it.
set -euo pipefail

PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$PGBIN" ]; then echo "with-postgres: PostgreSQL server binaries not found" >&2; exit 1; fi

DATA=$(mktemp -d /tmp/npuperf-pg.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
RUNAS=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$DATA"
  RUNAS=(runuser -u postgres --)
fi
PGUSER_NAME=$([ "$(id -u)" -eq 0 ] && echo postgres || id -un)

PRELOAD=""
if [ "${NPUPERF_PG_STATEMENTS:-0}" = 1 ]; then
  PRELOAD="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=1000"
fi

cleanup() {
  "${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA/db" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT

"${RUNAS[@]}" "$PGBIN/initdb" -D "$DATA/db" -U "$PGUSER_NAME" --auth=trust -E UTF8 >/dev/null
"${RUNAS[@]}" "$PGBIN/pg_ctl" -D "$DATA/db" -w -l "$DATA/server.log" \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DATA -c fsync=off -c max_connections=200 $PRELOAD" \
  start >/dev/null
"${RUNAS[@]}" "$PGBIN/createdb" -h 127.0.0.1 -p "$PORT" -U "$PGUSER_NAME" npuperf_test

export NPUPERF_TEST_PG_URL="postgresql://$PGUSER_NAME@127.0.0.1:$PORT/npuperf_test"
echo "with-postgres: PostgreSQL on 127.0.0.1:$PORT ($NPUPERF_TEST_PG_URL)"
set +e
"$@"
rc=$?
set -e
exit $rc
